// The access-control step, run once the route is matched: HTTPS redirect and HSTS, CORS and preflight, key-in-query refusal, Bearer auth, rate limits.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Admission, Verdict } from '../access/admission.ts';
import { presentedDigest, redactKeys } from '../access/key-format.ts';
import type { OverLimit } from '../access/rate-limit.ts';
import { ApiError, badRequest, HSTS, sendError } from './errors.ts';
import { addHeader, writeHead } from './respond.ts';
import type { AppDeps, Guard, Req } from './route.ts';
import { normalTarget } from './target.ts';

export const UNAUTHORIZED_MESSAGE = 'A valid API key is required: send the header "Authorization: Bearer <key>".';
/** The one answer for missing, malformed, unknown, expired, disabled and revoked keys. */
const unauthorized = () => new ApiError('unauthorized', UNAUTHORIZED_MESSAGE, { 'WWW-Authenticate': 'Bearer' });

export interface AccessOptions {
  admission: Admission;
  /** The service itself terminates TLS (TLS_CERT_PATH): every response gets HSTS. */
  tls: boolean;
  /** TRUST_PROXY: honour X-Forwarded-Proto and X-Forwarded-For. */
  trustProxy: boolean;
  /** PLAYGROUND_ORIGIN: the one origin that gets CORS headers. */
  playgroundOrigin?: string;
  now?: () => number;
  /** Told of every 429: 'key' (the key's limit) or 'address' (failed authentications). */
  onLimited?: (kind: 'key' | 'address') => void;
  /** Called when an asynchronous admission has answered, before the response is written. */
  waited?: (res: ServerResponse) => void;
}

const EXPOSE = 'X-Request-Id, RateLimit, RateLimit-Policy, Retry-After, ETag, Last-Modified, X-Snapshot-Id';
/** Query parameters that look like a key: refused outright, so a key in a URL (logged, cached, shared) is never used. */
const KEY_PARAMS = new Set(['api_key', 'apikey', 'key', 'token', 'access_token']);
/** Whether a query string may hold one of KEY_PARAMS: each contains "key" or "token"; "%" for an encoded spelling. */
const MAY_NAME_KEY = /key|token|%/i;
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_RE = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*\\.?|\\[[0-9A-Fa-f:.]+\\])(?::\\d{1,5})?$`);

/** Whether the request has more than one Host line (RFC 9112 3.2: a 400; node's headers keep only the first). */
function repeatedHost(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

/**
 * A Host value as RFC 9112 3.2 and RFC 3986 3.2.2 allow it: an IP literal in brackets or a reg-name (unreserved,
 * percent-encoded and sub-delimiter characters, so "api_1" passes as proxies send it), then an optional port.
 * What a redirect copies into Location must pass the narrower validHost too.
 */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]*)(?::\d*)?$/;

/**
 * Why a request gets a 400 before it is routed, or null: an HTTP version other than 1.x (node's parser takes
 * "HTTP/2.0" and the version-less HTTP/0.9 line and would answer them as 1.1), no Host in HTTP/1.1, more than one
 * Host line, or a Host value that is not a host (RFC 9112 3.2), longer than 255 characters included.
 */
export function requestProblem(req: IncomingMessage): string | null {
  if (req.httpVersionMajor !== 1) return `HTTP/${req.httpVersion} is not spoken here; send HTTP/1.1 (or 1.0) requests.`;
  const host = req.headers.host;
  if (host === undefined) return req.httpVersion === '1.1' ? 'The Host header is required (HTTP/1.1).' : null;
  if (repeatedHost(req)) return 'The Host header must be sent once.';
  return host.length <= 255 && HOST_VALUE.test(host) ? null : 'The Host header is not a host name or address.';
}

/** The 400 for a query string (with its "?") that names a key parameter, or null: a key never travels in a URL. */
function keyInQuery(search: string): ApiError | null {
  if (!MAY_NAME_KEY.test(search)) return null;
  for (const name of new URLSearchParams(search).keys())
    if (KEY_PARAMS.has(name.toLowerCase()))
      return badRequest(
        `Query parameter "${name}" is not accepted: send the API key only in the header "Authorization: Bearer <key>".`,
      );
  return null;
}

/** The Host header when it is a plain host name or address with an optional port; null for anything else. */
export function validHost(host: string | undefined): string | null {
  return host !== undefined && host.length <= 255 && HOST_RE.test(host) ? host : null;
}

/** Host without its port (IPv6 literals keep their brackets). */
const hostname = (host: string) =>
  host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
/** The request target's path and query; an absolute-form target's scheme and authority are never echoed into Location. */
const target = (req: IncomingMessage) => normalTarget(req.url ?? '/');

function redirect(req: IncomingMessage, res: ServerResponse, host: string): void {
  writeHead(res, 308, { Location: `https://${host}${target(req)}`, 'Content-Length': 0, 'Cache-Control': 'no-store' });
  res.end();
}

/**
 * The HTTP_REDIRECT_PORT listener's handler: every request is answered 308 to the same path and query
 * on the HTTPS port of the same host. A missing or malformed Host is a 400, never reflected. Each answer has a
 * request id and a log line, as the service's own do.
 */
export function httpsRedirect(httpsPort: number, deps: Pick<AppDeps, 'log' | 'requestLog' | 'logRequests'>) {
  const logLine = function (this: ServerResponse & { req: IncomingMessage & { id?: string; started?: number } }) {
    const req = this.req;
    (deps.requestLog ?? deps.log)({
      level: 'info',
      request_id: req.id,
      method: req.method,
      path: redactKeys((req.url ?? '/').split('?')[0]),
      status: this.statusCode,
      ms: performance.now() - (req.started ?? 0),
      listener: 'redirect',
    });
  };
  return (req: IncomingMessage & { id?: string; started?: number }, res: ServerResponse) => {
    req.id = randomUUID();
    req.started = performance.now();
    addHeader(res, 'X-Request-Id', req.id);
    addHeader(res, 'X-Content-Type-Options', 'nosniff');
    if (deps.logRequests) res.on('finish', logLine);
    const host = requestProblem(req) === null ? validHost(req.headers.host) : null;
    if (host === null) return sendError(res, req.id, badRequest('The Host header is missing or invalid.'), deps.log);
    // A key in the query is refused here too, not repeated in a Location for the client to send again.
    const at = req.url?.indexOf('?') ?? -1;
    const keyed = at === -1 ? null : keyInQuery(req.url!.slice(at));
    if (keyed !== null) return sendError(res, req.id, keyed, deps.log);
    redirect(req, res, httpsPort === 443 ? hostname(host) : `${hostname(host)}:${httpsPort}`);
  };
}

/**
 * The Authorization header, or undefined when there is none or more than one: node keeps the first of
 * several and drops the rest, so a request with two would be judged by whichever came first.
 */
function authorization(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') n++;
  return n === 1 ? req.headers.authorization : undefined;
}

/**
 * The digest of the key a request presents (presentedDigest), remembered per connection: a keep-alive client sends
 * the same Authorization header on every request, and the checksum and the SHA-256 are then made once per
 * connection. Only the digest is reused; the key's lookup, status and limits are checked on every request. What
 * is remembered (the header, which the connection's own request holds anyway) goes with the connection.
 */
const presented = new WeakMap<object, { header: string; digest: string | null }>();
function presentedKey(req: IncomingMessage): string | null {
  const header = authorization(req);
  if (header === undefined) return null;
  const last = presented.get(req.socket);
  if (last !== undefined && last.header === header) return last.digest;
  const digest = presentedDigest(header);
  presented.set(req.socket, { header, digest });
  return digest;
}

/**
 * The value the trusted proxy (one hop) set: the last entry. A proxy that appends to X-Forwarded-For
 * (nginx's $proxy_add_x_forwarded_for, most load balancers) keeps whatever the client sent in front of
 * it, so the first entry is the client's to choose: it could dodge the failed-authentication limit, or
 * aim it at someone else's address.
 */
const forwarded = (req: IncomingMessage, name: string) => {
  const v = req.headers[name];
  const all = Array.isArray(v) ? v.join(',') : v;
  return all?.slice(all.lastIndexOf(',') + 1).trim();
};

/** The client address the limits count: the last X-Forwarded-For entry behind a trusted proxy, else the peer. */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const fwd = trustProxy ? forwarded(req, 'x-forwarded-for') : undefined;
  return fwd && isIP(fwd) ? fwd : (req.socket.remoteAddress ?? 'unknown');
}

const tooMany = (r: OverLimit, message: string) => new ApiError('rate_limited', message, r.headers);

export function accessGuard(o: AccessOptions): Guard {
  const now = o.now ?? Date.now;
  return (req: Req, res: ServerResponse, route: { public: boolean }): boolean | Promise<boolean> => {
    // Transport: behind a trusted proxy, a request that reached it over plain HTTP is sent to HTTPS. A key in
    // its query is refused instead, not repeated in a Location for the client to send again.
    const proto = o.trustProxy ? forwarded(req, 'x-forwarded-proto')?.toLowerCase() : undefined;
    if (proto === 'http') {
      const keyed = req.search ? keyInQuery(req.search) : null;
      if (keyed !== null) throw keyed;
      const host = validHost(req.headers.host);
      if (host === null) throw badRequest('The Host header is missing or invalid.');
      redirect(req, res, host.replace(/:80$/, ''));
      return true;
    }
    if (o.tls || proto === 'https') addHeader(res, 'Strict-Transport-Security', HSTS);

    // CORS: only the playground origin gets headers; the answer depends on Origin, so caches must vary on it.
    const origin = req.headers.origin;
    const allowed = o.playgroundOrigin !== undefined && origin === o.playgroundOrigin;
    if (o.playgroundOrigin !== undefined) addHeader(res, 'Vary', 'Origin');
    if (allowed) {
      addHeader(res, 'Access-Control-Allow-Origin', origin!);
      addHeader(res, 'Access-Control-Expose-Headers', EXPOSE);
    }
    // A preflight is answered here, before authentication (browsers send it without credentials). Any
    // other OPTIONS goes through the key check like every method, so that its 405 or 404 tells an
    // anonymous caller no more than a GET would.
    if (
      req.method === 'OPTIONS' &&
      origin !== undefined &&
      req.headers['access-control-request-method'] !== undefined
    ) {
      if (allowed) {
        addHeader(res, 'Access-Control-Allow-Methods', 'GET, HEAD');
        addHeader(res, 'Access-Control-Allow-Headers', 'Authorization');
        addHeader(res, 'Access-Control-Max-Age', '600');
      }
      // Another origin's preflight also gets a bare 204: without Allow-Origin the browser refuses the call.
      writeHead(res, 204, {}); // no Content-Length: a 204 must not carry one (RFC 9110, 8.6)
      res.end();
      return true;
    }

    // A key never travels in a URL.
    const keyed = req.search ? keyInQuery(req.search) : null;
    if (keyed !== null) throw keyed;
    if (route.public) return false;
    const v = o.admission(presentedKey(req), () => clientAddress(req, o.trustProxy), now());
    if (!(v instanceof Promise)) return admit(req, res, v);
    // The answer comes later: a drain may have begun meanwhile, and then the answer closes its connection.
    return v.then(
      (x) => {
        o.waited?.(res);
        return admit(req, res, x);
      },
      (e) => {
        o.waited?.(res);
        throw e;
      },
    );
  };
  /** Lets the request on (false: not answered here) or throws its 401 / 429. */
  function admit(req: Req, res: ServerResponse, v: Verdict): false {
    if (v.keyId !== null) req.keyId = v.keyId;
    if (v.overLimit) {
      o.onLimited?.(v.keyId === null ? 'address' : 'key');
      const s = v.overLimit.retryAfter;
      throw tooMany(
        v.overLimit,
        v.keyId === null
          ? `Too many failed authentications from this address; retry after ${s} s.`
          : `Rate limit for this key exceeded; retry after ${s} s.`,
      );
    }
    if (v.keyId === null) throw unauthorized();
    const h = v.headers;
    if (h) for (const k in h) addHeader(res, k, h[k]);
    return false;
  }
}
