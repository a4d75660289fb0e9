// One GET: URL and query string, the Bearer key, JSON, ApiError on non-2xx, retries of 429 and 503 that wait as
// long as Retry-After says, a time limit per attempt and a signal that cancels the call, its waits included.
import { ApiError, errorFrom } from './errors.ts';

export interface RetryOptions {
  /** Retries after the first attempt, at most (default 3; 0 never retries). */
  maxRetries?: number;
  /**
   * The longest wait the client accepts, in ms (default 30 000). An answer asking for a longer wait is thrown at
   * once as its ApiError (with `retryAfter`) instead of being retried early against the server's word.
   */
  maxDelayMs?: number;
}

/** The longest wait a timer can hold (setTimeout fires at once beyond it). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ClientOptions {
  /** The service's address, e.g. https://api.example.nl (a path prefix is kept; no query or fragment). */
  baseUrl: string;
  /** The API key (nlr_live_…), sent as Authorization: Bearer. */
  key: string;
  /** A fetch implementation (default: the global fetch). */
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /**
   * Each attempt's time limit in ms, the answer's body included (default 30 000): an attempt still unanswered is
   * aborted and the call rejects with a `TimeoutError` (a DOMException), without retrying.
   */
  timeoutMs?: number;
  /** Cancels every call of this client, a wait before a retry included: the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Called with every HTTP answer (a retried 429 too) before its body is read: for the headers the body does not
   * carry (RateLimit, ETag, X-Snapshot-Id, Content-Language). `attempt` counts from 1.
   */
  onResponse?: (answer: { url: string; status: number; headers: Headers; attempt: number }) => void;
}

export type QueryValues = Record<string, string | number | boolean | null | undefined>;
export type Get = (path: string, query?: QueryValues) => Promise<unknown>;

/** Statuses whose Retry-After says when the same request may succeed; nothing else is retried. */
const RETRIED = new Set([429, 503]);
/** The wait when a 429 or 503 carries no readable Retry-After. */
const DEFAULT_WAIT_S = 1;

/** `?a=1&b=x` from the defined values, in the order given; empty when there are none. */
export function queryString(query: QueryValues = {}): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== null) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** A wait that the signal ends early, rejecting with its reason. */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });

/** The base URL without its trailing slashes; a RangeError for one that is not an http(s) address without a query. */
function baseOf(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new RangeError(`baseUrl: not an absolute URL (${JSON.stringify(baseUrl)}); e.g. https://api.example.nl`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RangeError('baseUrl: http: or https: only');
  if (url.search || url.hash || baseUrl.includes('?') || baseUrl.includes('#'))
    throw new RangeError('baseUrl: no query string or fragment (a path prefix is fine)');
  return baseUrl.replace(/\/+$/, '');
}

export function createTransport(options: ClientOptions): Get {
  const base = baseOf(options.baseUrl);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const maxRetries = options.retry?.maxRetries ?? 3;
  const maxDelayMs = options.retry?.maxDelayMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new RangeError('retry.maxRetries: an integer ≥ 0');
  if (!(maxDelayMs >= 0 && maxDelayMs <= MAX_TIMER_MS))
    throw new RangeError(`retry.maxDelayMs: a number from 0 to ${MAX_TIMER_MS}`);
  if (!(timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS))
    throw new RangeError(`timeoutMs: a number from 1 to ${MAX_TIMER_MS}`);
  const headers = { Authorization: `Bearer ${options.key}`, Accept: 'application/json' };
  const { signal } = options;

  return async (path, query) => {
    const url = base + path + queryString(query);
    for (let retries = 0; ; retries++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const attempt = signal ? AbortSignal.any([signal, timeout]) : timeout;
      const res = await fetchImpl(url, { method: 'GET', headers, signal: attempt });
      options.onResponse?.({ url, status: res.status, headers: res.headers, attempt: retries + 1 });
      if (res.ok) {
        const text = await res.text();
        try {
          return JSON.parse(text);
        } catch {
          const id = res.headers.get('x-request-id');
          throw new ApiError(
            res.status,
            'invalid_response',
            `HTTP ${res.status} with a body that is not JSON`,
            id,
            undefined,
            url,
          );
        }
      }
      const error = await errorFrom(res, url);
      if (!RETRIED.has(res.status) || retries >= maxRetries) throw error;
      const waitMs = (error.retryAfter ?? DEFAULT_WAIT_S) * 1000;
      if (waitMs > maxDelayMs) throw error;
      await sleep(waitMs, signal);
    }
  };
}
