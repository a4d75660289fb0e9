// createApp(deps): polka with one error renderer, request ids, the access-control slot, and every route.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import polka from 'polka';
import type { CursorCodec } from './cursor.ts';
import { ApiError, sendError } from './errors.ts';
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

function compile(pattern: string): RegExp {
  return new RegExp('^' + pattern.replace(/:[a-z_]+/g, '[^/]+') + '/?$');
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
  return app;
}
