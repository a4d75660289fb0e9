// createApp(deps): polka with one error renderer, request ids, the access-control slot, and every route.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import polka from 'polka';
import type { CursorCodec } from './cursor.ts';
import { ApiError, clientErrorResponse, rawErrorResponse, sendError } from './errors.ts';
import { parseRawQuery, validateQuery, pathId, type QuerySchema, type Locale } from './query.ts';
import { addHeader, sendJson, type Meta } from './respond.ts';
import type { Snapshot, SnapshotSource } from './snapshot.ts';
import { openapiDocument } from './openapi.ts';
import { ROUTE_MODULES } from './routes/index.ts';

export type Log = (line: Record<string, unknown>) => void;

export interface Req extends IncomingMessage {
  id: string;
  path: string;
  search: string | null;
  params: Record<string, string>;
  /** Set by access control: the authenticated key's id (never the key). */
  keyId?: string;
}

/** What a request handler gets: validated query and path ids, the envelope meta, the snapshot. */
export interface Ctx<Q = any> {
  req: Req;
  res: ServerResponse;
  query: Q;
  params: Record<string, string>;
  meta: Meta;
  snap: Snapshot;
  deps: AppDeps;
}

export type ResponseKind = 'collection' | 'bounded' | 'detail' | 'plain';
export interface RouteDef<Q = any> {
  path: string; // polka pattern, e.g. /v1/listings/:id
  summary: string;
  description?: string;
  tag: string;
  query: QuerySchema;
  kind: ResponseKind;
  /** JSON schema of one data item (collections) or of data (detail) or of the body (plain). */
  item: Record<string, unknown>;
  public?: boolean;
  handle(ctx: Ctx<Q>): unknown;
}

/**
 * The access-control slot (see src/access.ts): runs before routing on every request; it may answer
 * (preflight, redirect) and return true to stop the pipeline, or throw an ApiError (401, 429, 503).
 * It may be async (the rate limiter is).
 */
export type Guard = (req: Req, res: ServerResponse, route: { public: boolean }) => boolean | Promise<boolean>;

export interface AppDeps {
  snapshots: SnapshotSource;
  cursor: CursorCodec;
  log: Log;
  guard?: Guard;
  logRequests?: boolean;
  /** Where the per-request lines go (default: log). The server buffers them; everything else is written at once. */
  requestLog?: Log;
}

export function defineRoute<Q>(r: RouteDef<Q>): RouteDef<Q> { return r; }

/** A route pattern as a regex: its literal parts escaped (the `.` of openapi.json matched any character), `:param` one segment. */
function compile(pattern: string): RegExp {
  return new RegExp('^' + pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[a-z_]+/g, '[^/]+') + '/?$');
}

/**
 * A request target in absolute form ("GET http://host/v1/listings", which HTTP/1.1 servers must accept)
 * as the origin form polka routes by; any other target that is not a path (the asterisk form of
 * "OPTIONS *") becomes one that matches no endpoint. Polka runs middleware only for paths starting with
 * "/", so such a request skipped the request id, the key check, the rate limits and the request log.
 */
export function originForm(url: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  if (!authority) return '/' + url;
  const rest = url.slice(authority[0].length);
  return rest.startsWith('/') ? rest : '/' + rest;
}

/** A percent-encoded unreserved character (letters, digits, - . _ ~). */
const ENCODED_UNRESERVED = /%(?:3[0-9]|4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]|2[DE]|5F|7E)/gi;
/**
 * A path with its percent-encoded unreserved characters decoded: RFC 3986 (6.2.2.2) makes
 * /v1/listings/%73tats the same URI as /v1/listings/stats, which was served as the listing "stats".
 * Other escapes (%2F, %20, …) stay as they are, for the route's own decoding of its parameters.
 */
export const normalPath = (path: string): string =>
  path.replace(ENCODED_UNRESERVED, (e) => String.fromCharCode(parseInt(e.slice(1), 16)));

/**
 * The server's 'clientError' listener: a request node's HTTP parser rejected (see clientErrorResponse)
 * is answered with the error envelope and a request id, logged, and the connection closed. When earlier
 * requests of the same connection (pipelined) are still being answered, the error follows their
 * responses instead of cutting into them; node's own handler wrote its bare 400 at once and then closed
 * the connection, losing them.
 */
export function clientErrorHandler(deps: Pick<AppDeps, 'log' | 'requestLog' | 'logRequests'>, lastResponse: LastResponse) {
  return (err: Error & { code?: string }, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) { socket.destroy(); return; }
    answerLast(socket, lastResponse, (id, tls) => clientErrorResponse(err, id, tls), deps, { error: err.code });
  };
}

/**
 * The server's 'connect' listener: this API is no proxy, so a CONNECT gets the 405 every other method
 * outside GET and HEAD gets (node closed the connection without a word), and a request-log line.
 */
export function connectHandler(deps: Pick<AppDeps, 'log' | 'requestLog' | 'logRequests'>, lastResponse: LastResponse) {
  const refusal = new ApiError('method_not_allowed', 'Method CONNECT is not allowed here; this API is read-only (GET).', { Allow: 'GET, HEAD' });
  return (_req: IncomingMessage, socket: Duplex) => {
    answerLast(socket, lastResponse, (id, tls) => rawErrorResponse(refusal, id, tls), deps, { method: 'CONNECT' });
  };
}

/** The last response started on a connection (node queues the responses to pipelined requests). */
export type LastResponse = (socket: Duplex) => ServerResponse | undefined;

/** A request listener that remembers each connection's last response, for answerLast. */
export function trackingResponses<R extends IncomingMessage>(handler: (req: R, res: ServerResponse) => void): { handler: (req: R, res: ServerResponse) => void; lastResponse: LastResponse } {
  const latest = new WeakMap<object, ServerResponse>();
  return {
    handler: (req, res) => { latest.set(req.socket, res); handler(req, res); },
    lastResponse: (socket) => latest.get(socket),
  };
}

/**
 * Writes a raw error answer on a connection after the responses to the requests before it (responses go
 * out in request order, so once the last one started has closed, all have), logs it, and closes the
 * connection. Nothing is written after a response that ends the connection (Connection: close).
 */
function answerLast(
  socket: Duplex, lastResponse: LastResponse, make: (requestId: string, tls: boolean) => { status: number; text: string },
  deps: Pick<AppDeps, 'log' | 'requestLog' | 'logRequests'>, logFields: Record<string, unknown>,
): void {
  const last = lastResponse(socket);
  const answer = () => {
    if (socket.writable && last?.shouldKeepAlive !== false) {
      const id = randomUUID();
      const r = make(id, (socket as Duplex & { encrypted?: boolean }).encrypted === true);
      socket.write(r.text);
      if (deps.logRequests) (deps.requestLog ?? deps.log)({ level: 'info', request_id: id, ...logFields, status: r.status });
    }
    socket.destroy();
  };
  if (last && !last.writableFinished && !last.destroyed) last.once('close', answer);
  else answer();
}

export function createApp(deps: AppDeps) {
  const routes: RouteDef[] = ROUTE_MODULES.flatMap((m) => m.routes(deps));
  const openapi = openapiDocument(routes);
  routes.push(openapi.route);
  for (const m of ROUTE_MODULES) m.prepare?.forEach((p) => deps.snapshots.prepare(p));
  const known = routes.map((r) => ({ re: compile(r.path), route: r }));
  const lookup = (path: string) => known.find((k) => k.re.test(path))?.route;

  const app = polka({
    onError: (err, req, res) => sendError(res, (req as unknown as Req).id ?? randomUUID(), err, deps.log),
    onNoMatch: (req, res) => {
      const r = req as unknown as Req;
      if (lookup(r.path)) sendError(res, r.id, new ApiError('method_not_allowed', `Method ${req.method} is not allowed here; this API is read-only (GET).`, { Allow: 'GET, HEAD' }), deps.log);
      else sendError(res, r.id, new ApiError('not_found', `No endpoint matches ${r.path}. See /v1/openapi.json.`), deps.log);
    },
  });

  app.use((request, res, next) => {
    const req = request as unknown as Req;
    const started = process.hrtime.bigint();
    req.id = randomUUID();
    addHeader(res, 'X-Request-Id', req.id);
    addHeader(res, 'X-Content-Type-Options', 'nosniff');
    if (deps.logRequests) {
      res.on('finish', () => (deps.requestLog ?? deps.log)({
        level: 'info', request_id: req.id, method: req.method, path: req.path, status: res.statusCode,
        ms: Number(process.hrtime.bigint() - started) / 1e6, key_id: req.keyId,
      }));
    }
    // Node's own check (requireHostHeader) answered a bare 400 without the envelope; the server turns it off.
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      res.shouldKeepAlive = false; // as node's own answer did: the connection closes after it
      return sendError(res, req.id, new ApiError('invalid_request', 'The Host header is required (HTTP/1.1).'), deps.log);
    }
    if (!deps.guard) return next();
    const route = lookup(req.path);
    const fail = (e: unknown) => sendError(res, req.id, e, deps.log);
    try {
      const answered = deps.guard(req, res, { public: route?.public ?? false });
      if (typeof answered === 'boolean') { if (!answered) next(); }
      else answered.then((a) => { if (!a) next(); }).catch(fail);
    } catch (e) {
      fail(e);
    }
  });

  for (const r of routes) {
    const exact = compile(r.path);
    const handler = (req: Req, res: ServerResponse) => {
      try {
        // polka matches paths case-insensitively; the API's paths are lower-case and exact.
        if (!exact.test(req.path)) throw new ApiError('not_found', `No endpoint matches ${req.path}. See /v1/openapi.json.`);
        const raw = parseRawQuery(req.search ? req.search.slice(1) : '');
        const query = validateQuery(r.query, raw) as Record<string, unknown>;
        const params: Record<string, string> = {};
        for (const [k, val] of Object.entries(req.params ?? {})) params[k] = pathId(val, k);
        const meta: Meta = { locale: (query.locale as Locale | undefined) ?? 'en', request_id: req.id };
        const snap = r.public ? (undefined as unknown as Snapshot) : deps.snapshots.get();
        const body = r.handle({ req, res, query, params, meta, snap, deps });
        sendJson(res, 200, body, r.public ? {} : { 'Cache-Control': 'private, no-store' });
      } catch (e) {
        sendError(res, req.id, e, deps.log);
      }
    };
    // HEAD is GET without a body (node drops the body of a HEAD response).
    app.get(r.path, handler as never);
    app.head(r.path, handler as never);
  }
  const route = app.handler;
  /** The node request listener: polka's, after the target is put in origin form with a normal path. */
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    let url = req.url ?? '/';
    if (url.charCodeAt(0) !== 47 /* / */) url = originForm(url);
    const q = url.indexOf('?');
    const pct = url.indexOf('%');
    if (pct !== -1 && (q === -1 || pct < q)) url = normalPath(q === -1 ? url : url.slice(0, q)) + (q === -1 ? '' : url.slice(q));
    req.url = url;
    route(req as never, res, undefined as never);
  };
  const { handler, lastResponse } = trackingResponses(listener);
  return { handler, clientError: clientErrorHandler(deps, lastResponse), connect: connectHandler(deps, lastResponse) };
}
