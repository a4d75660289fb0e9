// The one error type and the one place errors are rendered: each code's status, each failure's answer.
import type { ServerResponse } from 'node:http';
import { type Dependency, DependencyUnavailable, type ErrorCode } from '../errors.ts';
import { writeHead } from './respond.ts';

export type { ErrorCode };

/** Each error code's HTTP status. */
export const CODES: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  // Only for requests node's HTTP parser rejects before they reach the app (see clientErrorResponse).
  request_timeout: 408,
  request_too_large: 431,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

/**
 * The answer to each unusable dependency (a DependencyUnavailable from the domain modules, or SQLite's busy and
 * damaged codes under a statement): a 503 that says what failed and when to try again. The OpenAPI examples
 * read this table.
 */
export const UNAVAILABLE: Record<Dependency, { message: string; retryAfter: number }> = {
  snapshot: { message: 'The data snapshot is unavailable; try again shortly.', retryAfter: 5 },
  key_store: { message: 'The key store is unavailable; try again shortly.', retryAfter: 1 },
  rate_limiter: { message: 'The rate limiter is unavailable; try again shortly.', retryAfter: 1 },
  data_store: { message: 'The data store is busy or unavailable; try again shortly.', retryAfter: 1 },
};

const unavailable = (d: Dependency) =>
  new ApiError('service_unavailable', UNAVAILABLE[d].message, { 'Retry-After': String(UNAVAILABLE[d].retryAfter) });

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = CODES[code];
  }
}

/** The messages of the errors the OpenAPI document shows under every operation's other statuses. */
export const TOO_LARGE_MESSAGE = 'The request line and headers are too large (at most 16 KB).';
export const INTERNAL_MESSAGE = 'An internal error occurred.';
export const TIMEOUT_MESSAGE = 'The request was not received in time.';
export const notAllowedMessage = (method: string | undefined) =>
  `Method ${method} is not allowed here; this API is read-only (GET).`;

export const badRequest = (message: string) => new ApiError('invalid_request', message);
export const notFound = (what = 'resource') => new ApiError('not_found', `No public ${what} was found with this id.`);

/** The error envelope's JSON text. */
const envelope = (code: ErrorCode, message: string, requestId: string) =>
  JSON.stringify({ error: { code, message, request_id: requestId } });

/**
 * The raw HTTP response for a request node's parser rejected (headers too large, a malformed request
 * line, a missing Host, headers not received in time): there is no request or response object then,
 * only the socket, and node's own answer is a bare status line without the spec's envelope. `head`: the
 * rejected request is a HEAD, whose answer has no body (RFC 9110, 9.3.2), whatever was wrong with it
 * (the connection knows: raw-answers.ts rejectedHead).
 */
export function clientErrorResponse(
  err: Error & { code?: string; reason?: string },
  requestId: string,
  tls: boolean,
  head: boolean,
): { status: number; text: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return rawErrorResponse(new ApiError('request_too_large', TOO_LARGE_MESSAGE), requestId, tls, head);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return rawErrorResponse(new ApiError('request_timeout', TIMEOUT_MESSAGE), requestId, tls);
    default: {
      const why = err.reason ? ` (${err.reason.replace(/[^\x20-\x7e]/g, '').slice(0, 100)})` : '';
      return rawErrorResponse(badRequest(`The request is not valid HTTP/1.1${why}.`), requestId, tls, head);
    }
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};
/** HSTS as every response over the service's own TLS carries it (./guard.ts). */
export const HSTS = 'max-age=31536000';

/**
 * An error as raw HTTP/1.1 bytes, for a socket without a response object (a request node's parser
 * rejected, a CONNECT): the envelope and the headers every error carries, then the connection closes.
 */
export function rawErrorResponse(
  e: ApiError,
  requestId: string,
  tls: boolean,
  head = false,
): { status: number; text: string } {
  const body = envelope(e.code, e.message, requestId);
  const headers = [
    `Date: ${new Date().toUTCString()}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'X-Content-Type-Options: nosniff',
    'Cache-Control: no-store',
    ...Object.entries(e.headers).map(([k, v]) => `${k}: ${v}`),
    ...(tls ? [`Strict-Transport-Security: ${HSTS}`] : []),
    'Connection: close',
  ];
  return {
    status: e.status,
    text: `HTTP/1.1 ${e.status} ${REASONS[e.status] ?? 'Error'}\r\n${headers.join('\r\n')}\r\n\r\n${head ? '' : body}`,
  };
}

/**
 * Writes the spec's error envelope. A DependencyUnavailable and SQLite's busy or unreadable errors become 503s;
 * anything else that is not an ApiError is logged and becomes a bare 500.
 */
export function sendError(
  res: ServerResponse,
  requestId: string,
  err: unknown,
  log: (line: Record<string, unknown>) => void,
): void {
  let e: ApiError;
  if (err instanceof ApiError) e = err;
  else if (err instanceof DependencyUnavailable) e = unavailable(err.dependency);
  else if (isBusy(err)) {
    logStoreError(err as Error, requestId, log);
    e = unavailable('data_store');
  } else {
    log({
      level: 'error',
      request_id: requestId,
      msg: 'unhandled error',
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    });
    e = new ApiError('internal_error', INTERNAL_MESSAGE);
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = envelope(e.code, e.message, requestId);
  writeHead(res, e.status, {
    ...e.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

/**
 * The cause of a 503 from SQLite (a damaged page, an I/O error) goes to the log, or an operator sees
 * only the 503s; at most one line per error code a second, with how many were not logged in between.
 */
const lastLogged = new Map<string, { at: number; skipped: number }>();
function logStoreError(err: Error, requestId: string, log: (line: Record<string, unknown>) => void): void {
  const code = String((err as { code?: unknown }).code);
  const now = Date.now();
  const last = lastLogged.get(code);
  if (last && now - last.at < 1000) {
    last.skipped++;
    return;
  }
  log({
    level: 'error',
    request_id: requestId,
    msg: 'data store error; answered 503',
    code,
    error: err.message,
    ...(last?.skipped ? { not_logged_since: last.skipped } : {}),
  });
  lastLogged.set(code, { at: now, skipped: 0 });
}

/** SQLite errors that mean "the file is locked, missing or unreadable": fail closed with 503. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|CORRUPT|NOTADB|READONLY)/.test(code);
}
