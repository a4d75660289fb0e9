// One GET: URL and query string, the Bearer key, JSON, ApiError on non-2xx, and retries of 429 and 503 that
// wait as long as Retry-After says.
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

export interface ClientOptions {
  /** The service's address, e.g. https://api.example.nl (a path prefix is kept). */
  baseUrl: string;
  /** The API key (nlr_live_…), sent as Authorization: Bearer. */
  key: string;
  /** A fetch implementation (default: the global fetch). */
  fetch?: typeof fetch;
  retry?: RetryOptions;
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createTransport(options: ClientOptions): Get {
  const base = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const maxRetries = options.retry?.maxRetries ?? 3;
  const maxDelayMs = options.retry?.maxDelayMs ?? 30_000;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new RangeError('retry.maxRetries: an integer ≥ 0');
  if (!(maxDelayMs >= 0)) throw new RangeError('retry.maxDelayMs: a number ≥ 0');
  const headers = { Authorization: `Bearer ${options.key}`, Accept: 'application/json' };

  return async (path, query) => {
    const url = base + path + queryString(query);
    for (let retries = 0; ; retries++) {
      const res = await fetchImpl(url, { method: 'GET', headers });
      if (res.ok) {
        const text = await res.text();
        try {
          return JSON.parse(text);
        } catch {
          const id = res.headers.get('x-request-id');
          throw new ApiError(res.status, 'invalid_response', `HTTP ${res.status} with a body that is not JSON`, id);
        }
      }
      const error = await errorFrom(res);
      if (!RETRIED.has(res.status) || retries >= maxRetries) throw error;
      const waitMs = (error.retryAfter ?? DEFAULT_WAIT_S) * 1000;
      if (waitMs > maxDelayMs) throw error;
      await sleep(waitMs);
    }
  };
}
