// createApp(deps): one route match per request, the access step, query validation, and the one error renderer.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import polka from 'polka';
import type { Locale } from '../../snapshot-format/locales.ts';
import { redactKeys } from '../access/key-format.ts';
import { openapiDocument } from '../openapi/document.ts';
import { ROUTE_MODULES } from '../routes/index.ts';
import type { Snapshot } from '../snapshot/source.ts';
import { etagOf, notModified, snapshotHeaders } from './caching.ts';
import { contentLanguage } from './content-language.ts';
import { ApiError, badRequest, notAllowedMessage, sendError } from './errors.ts';
import { requestProblem } from './guard.ts';
import { pathId, QueryMemo } from './query.ts';
import { clientErrorHandler, connectHandler, trackingResponses } from './raw-answers.ts';
import { addHeader, type HeaderList, type Meta, sendJson, writeHead } from './respond.ts';
import type { AppDeps, Req, RouteDef } from './route.ts';
import { indexRoutes, keyOfRoute, type Router } from './route-index.ts';
import { normalTarget } from './target.ts';

/**
 * A route pattern as an exact, case-sensitive regex for polka: its literal parts escaped (the `.` of
 * openapi.json is a dot), each `:name` one path segment captured as a named group, one optional trailing slash.
 */
export function patternOf(path: string, capture = true): RegExp {
  const source = path
    .split(/(:[a-z_]+)/)
    .map((part) =>
      part.startsWith(':')
        ? `(${capture ? `?<${part.slice(1)}>` : '?:'}[^/]+)`
        : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}/?$`);
}

interface ParsedTarget {
  pathname: string;
  search: string;
  query: undefined;
  raw: string;
}
/** The request target as polka's router reads it (its fields as @polka/url's parse has them), without parsing the query. */
function parseTarget(req: IncomingMessage): ParsedTarget {
  const own = req as IncomingMessage & { _parsedUrl?: ParsedTarget };
  const raw = req.url ?? '/';
  if (own._parsedUrl?.raw === raw) return own._parsedUrl;
  const hash = raw.indexOf('#', 1);
  const target = hash === -1 ? raw : raw.slice(0, hash);
  const q = target.indexOf('?', 1);
  const parsed: ParsedTarget =
    q === -1
      ? { pathname: target, search: '', query: undefined, raw }
      : { pathname: target.slice(0, q), search: target.slice(q), query: undefined, raw };
  own._parsedUrl = parsed;
  return parsed;
}

/** A 400 for a path segment that is not percent-encoded UTF-8 (as a query value's is). */
function undecodable(segment: string, name: string): void {
  try {
    decodeURIComponent(segment);
  } catch {
    throw badRequest(`Path parameter "${name}" is not correctly percent-encoded.`);
  }
}

const notFound = (path: string) =>
  new ApiError('not_found', `No endpoint matches ${redactKeys(path)}. See /v1/openapi.json.`);
const notAllowed = (method: string | undefined) =>
  new ApiError('method_not_allowed', notAllowedMessage(method), {
    Allow: 'GET, HEAD',
  });

export function createApp(deps: AppDeps) {
  const routes: RouteDef[] = ROUTE_MODULES.flatMap((m) => m.routes(deps));
  routes.push(openapiDocument(routes).route);
  for (const m of ROUTE_MODULES) for (const p of m.prepare) deps.snapshots.prepare(p);

  /** The access step; true when it answered the request itself. */
  const guarded = (req: Req, res: ServerResponse, isPublic: boolean) =>
    deps.guard ? deps.guard(req, res, { public: isPublic }) : false;
  const render = (req: Req, res: ServerResponse, err: unknown) => sendError(res, req.id, err, deps.log);
  /** Runs `next` unless the access step answered the request; after it when the step is a promise. */
  const afterGuard = (g: boolean | Promise<boolean>, next: () => void) =>
    g === false ? next() : g === true ? undefined : g.then((answered) => (answered ? undefined : next()));

  // Every error thrown below (or rejected) reaches polka's onError: the one place errors are rendered.
  const app = polka({
    onError: (err, req, res) => render(req as unknown as Req, res, err),
    onNoMatch: (request, res) => {
      const req = request as unknown as Req;
      req.route = '(no match)';
      return afterGuard(guarded(req, res, false), () => render(req, res, notFound(req.path)));
    },
  });

  // Polka's own URL parser also parses the query with node:querystring on every request (~3 % of a
  // small answer's CPU); the query is parsed once, by parseRawQuery with its limits, so the router gets
  // the path and the search string only.
  (app as unknown as { parse: (req: IncomingMessage) => ParsedTarget }).parse = parseTarget;

  for (const r of routes) {
    const isPublic = r.public === true;
    const handler = (request: IncomingMessage, res: ServerResponse) => {
      const req = request as Req;
      req.route = r.path;
      const g = guarded(req, res, isPublic);
      if (g === false) return answer(req, res);
      if (g !== true) return g.then((answered) => answered || answer(req, res));
    };
    /** The route's answer, once the access step let the request through. */
    const queries = new QueryMemo(r.query);
    const paramNames = [...r.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]);
    // Each parameter's segment of the path: polka keeps a segment it cannot decode as it is, so it is checked here.
    const paramSegments = r.path.split('/').flatMap((part, i) => (part.startsWith(':') ? [i] : []));
    const answer = (req: Req, res: ServerResponse) => {
      const query = queries.get(req.search ?? '');
      const params: Record<string, string> = {};
      for (let i = 0; i < paramNames.length; i++) {
        const k = paramNames[i];
        if (req.path.includes('%')) undecodable(req.path.split('/')[paramSegments[i]], k);
        params[k] = pathId(req.params[k], k);
      }
      const meta: Meta = { locale: (query.locale as Locale | undefined) ?? 'en', request_id: req.id };
      if (isPublic) {
        const body = r.handle({ req, res, query, params, meta, snap: undefined as unknown as Snapshot, deps, lang: 0 });
        if (r.kind !== 'raw') sendJson(res, 200, body);
        return;
      }
      // Data: the same request on the same snapshot is the same answer, so a client's tag saves the transfer.
      // The handler runs first: a tag never turns its 400 (a bad or expired cursor, a bad date) or its 404 (an
      // unknown id) into a 304, and "*" matches only an answer that exists (RFC 9110 13.1.2).
      const snap = deps.snapshots.get();
      const etag = etagOf(snap.meta.snapshot_id, req.path, query);
      const headers: HeaderList = [...snapshotHeaders(snap.meta), 'ETag', etag, 'Cache-Control', 'private, no-cache'];
      const ctx = { req, res, query, params, meta, snap, deps, lang: 0 };
      const body = r.handle(ctx);
      if (notModified(req, etag)) {
        headers.push('Vary', 'Accept-Encoding');
        writeHead(res, 304, headers);
        res.end();
        return;
      }
      const language = contentLanguage(meta.locale, ctx.lang);
      if (language !== undefined) headers.push('Content-Language', language);
      sendJson(res, 200, body, headers);
    };
    // A GET route answers HEAD too (the router matches HEAD to GET; node drops the body of a HEAD response).
    app.get(patternOf(r.path), handler as never);
  }
  // Any other method on a known path: 405, after the same access step as a GET there.
  for (const isPublic of [true, false]) {
    const paths = routes.filter((r) => (r.public === true) === isPublic).map((r) => patternOf(r.path, false).source);
    app.all(new RegExp(paths.join('|')), ((request: IncomingMessage, res: ServerResponse) => {
      const req = request as Req;
      return afterGuard(guarded(req, res, isPublic), () => {
        throw notAllowed(req.method);
      });
    }) as never);
  }

  // One key per route in the order registered: the GET routes, then the two 405 catch-alls (any key).
  indexRoutes(app as unknown as Router, [...routes.map((r) => keyOfRoute(r.path)), null, null]);

  const lifecycle = deps.lifecycle ?? { draining: false, inFlight: 0 };
  const metrics = deps.metrics;
  const route = app.handler;
  /**
   * A response is done with (sent, or its connection gone): in flight, metrics and the log line. One function,
   * `this` the response, for every request: no closure or once-wrapper is made per request.
   */
  function onClose(this: ServerResponse & { req: Req }) {
    const req = this.req;
    lifecycle.inFlight--;
    const ms = performance.now() - req.started;
    if (metrics) {
      metrics.inFlight.dec();
      metrics.request(req.route ?? '(not routed)', this.statusCode, ms / 1e3);
    }
    if (deps.logRequests && this.writableFinished) {
      (deps.requestLog ?? deps.log)({
        level: 'info',
        request_id: req.id,
        method: req.method,
        path: redactKeys(req.path),
        status: this.statusCode,
        ms,
        key_id: req.keyId,
      });
    }
  }
  /** The node request listener: request id, common headers and the log line, then the route. */
  const listener = (request: IncomingMessage, res: ServerResponse): void => {
    const req = request as Req;
    req.url = normalTarget(req.url ?? '/');
    req.id = randomUUID();
    addHeader(res, 'X-Request-Id', req.id);
    addHeader(res, 'X-Content-Type-Options', 'nosniff');
    if (lifecycle.draining) res.shouldKeepAlive = false; // answers after SIGTERM close their connection
    lifecycle.inFlight++;
    metrics?.inFlight.inc();
    req.started = performance.now();
    res.on('close', onClose);
    // Node's own check (requireHostHeader) answered a bare 400 without the envelope; the server turns it off.
    // Two Host lines are a 400 too (RFC 9112 3.2): node keeps the first, a proxy may have read the other.
    const problem = requestProblem(req);
    if (problem !== null) {
      res.shouldKeepAlive = false; // as node's own answer did: the connection closes after it
      req.path = req.url.split('?')[0];
      render(req, res, new ApiError('invalid_request', problem));
      return;
    }
    route(req as never, res, undefined as never);
  };
  const { handler, lastResponse } = trackingResponses(listener);
  return { handler, clientError: clientErrorHandler(deps, lastResponse), connect: connectHandler(deps, lastResponse) };
}
