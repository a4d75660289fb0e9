// ApiError: what the client throws for every non-2xx answer, read from the API's error envelope.
import type { components } from './schema.d.ts';

/** The error codes the API documents, plus `invalid_response` for an answer that is not the error envelope. */
export type ErrorCode = components['schemas']['Error']['error']['code'] | 'invalid_response';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    /** The HTTP status. */
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** error.request_id (or the X-Request-Id header): quote it when reporting a problem. */
    readonly requestId: string | null,
    /** Seconds the server asked to wait (Retry-After on 429 and 503). */
    readonly retryAfter?: number,
    /** The request's URL, with its query (the key travels in a header, never in it). */
    readonly url?: string,
  ) {
    super(message);
  }
}

/**
 * Seconds to wait from a Retry-After value: delay-seconds (digits), or an HTTP date (counted from `now`, with its
 * day and month names, RFC 9110 5.6.7); undefined when absent or unreadable ("1.5" is neither).
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The ApiError for a non-2xx response: the envelope's code, message and request id when the body is one. */
export async function errorFrom(res: Response, url?: string): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
  const headerId = res.headers.get('x-request-id');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: reported below */
  }
  const e = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (e && typeof e.code === 'string' && typeof e.message === 'string') {
    const requestId = typeof e.request_id === 'string' ? e.request_id : headerId;
    return new ApiError(res.status, e.code as ErrorCode, e.message, requestId, retryAfter, url);
  }
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new ApiError(
    res.status,
    'invalid_response',
    `HTTP ${res.status} without the API's error envelope${excerpt ? `: ${excerpt}` : ''}`,
    headerId,
    retryAfter,
    url,
  );
}
