// createApp(deps, routes): one route match per request, the access step, query validation, and the one error renderer.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Locale } from '../../snapshot-format/locales.ts';
import { redactKeys } from '../access/key-format.ts';
import type { Snapshot } from '../snapshot/source.ts';
import { etagOf, notModified, snapshotHeaders } from './caching.ts';
import { contentLanguage } from './content-language.ts';
import { ApiError, badRequest, notAllowedMessage, sendError } from './errors.ts';
import { requestProblem } from './guard.ts';
import { pathId, QueryMemo } from './query.ts';
import { clientErrorHandler, connectHandler, trackingResponses } from './raw-answers.ts';
import { addHeader, type HeaderList, type Meta, sendJson, writeHead } from './respond.ts';
import type { AppDeps, Req, RouteDef } from './route.ts';
import { createRouter, splitTarget } from './router.ts';
import { normalTarget } from './target.ts';

const notFound = (path: string) =>
  new ApiError('not_found', `No endpoint matches ${redactKeys(path)}. See /v1/openapi.json.`);
const notAllowed = (method: string | undefined) =>
  new ApiError('method_not_allowed', notAllowedMessage(method), {
    Allow: 'GET, HEAD',
  });

/** A route with what answering it needs, made once at start-up. */
interface Bound {
  def: RouteDef;
  isPublic: boolean;
  queries: QueryMemo;
}

/**
 * The app for `routes` (in precedence order: a fixed path before a parameterised one). A GET route answers HEAD
 * too (node drops the body of a HEAD response); any other method on a known path is a 405, and an unknown path a
 * 404, each after the same access step as a GET there.
 */
export function createApp(deps: AppDeps, routes: readonly RouteDef[]) {
  const find = createRouter(
    routes.map((def): Bound & { path: string } => ({
      path: def.path,
      def,
      isPublic: def.public === true,
      queries: new QueryMemo(def.query),
    })),
  );

  const render = (req: Req, res: ServerResponse, err: unknown) => sendError(res, req.id, err, deps.log);
  /** The access step, then `next` unless the step answered the request; every error on the way is rendered. */
  const guarded = (req: Req, res: ServerResponse, isPublic: boolean, next: () => void) => {
    try {
      const g = deps.guard ? deps.guard(req, res, { public: isPublic }) : false;
      if (g === false) return next();
      if (g === true) return;
      g.then((answered) => answered || next()).catch((e) => render(req, res, e));
    } catch (e) {
      render(req, res, e);
    }
  };

  /** The route's answer, once the access step let the request through. */
  const answer = (req: Req, res: ServerResponse, r: Bound, found: { params: Record<string, string> }) => {
    const query = r.queries.get(req.search ?? '');
    const params: Record<string, string> = {};
    for (const k in found.params) params[k] = pathId(found.params[k], k);
    const meta: Meta = { locale: (query.locale as Locale | undefined) ?? 'en', request_id: req.id };
    if (r.isPublic) {
      const body = r.def.handle({
        req,
        res,
        query,
        params,
        meta,
        snap: undefined as unknown as Snapshot,
        deps,
        lang: 0,
      });
      if (r.def.kind !== 'raw') sendJson(res, 200, body);
      return;
    }
    // Data: the same request on the same snapshot is the same answer, so a client's tag saves the transfer.
    // The handler runs first: a tag never turns its 400 (a bad or expired cursor, a bad date) or its 404 (an
    // unknown id) into a 304, and "*" matches only an answer that exists (RFC 9110 13.1.2).
    const snap = deps.snapshots.get();
    const etag = etagOf(snap.meta.snapshot_id, req.path, query);
    const headers: HeaderList = [...snapshotHeaders(snap.meta), 'ETag', etag, 'Cache-Control', 'private, no-cache'];
    const ctx = { req, res, query, params, meta, snap, deps, lang: 0 };
    const body = r.def.handle(ctx);
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

  /** Routes the request: its route's answer, a 405 or a 404. */
  const route = (req: Req, res: ServerResponse) => {
    const found = find(req.path);
    if (found === null) {
      req.route = '(no match)';
      return guarded(req, res, false, () => render(req, res, notFound(req.path)));
    }
    const r = found.route;
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return guarded(req, res, r.isPublic, () => render(req, res, notAllowed(req.method)));
    req.route = r.def.path;
    // guarded renders what the answer throws, whether the access step answered at once or later.
    guarded(req, res, r.isPublic, () => {
      if (found.undecodable !== null)
        throw badRequest(`Path parameter "${found.undecodable}" is not correctly percent-encoded.`);
      answer(req, res, r, found);
    });
  };

  const lifecycle = deps.lifecycle ?? { draining: false, inFlight: 0 };
  const metrics = deps.metrics;
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
    const target = splitTarget(req.url);
    req.path = target.path;
    req.search = target.search;
    // Node's own check (requireHostHeader) answered a bare 400 without the envelope; the server turns it off.
    // Two Host lines are a 400 too (RFC 9112 3.2): node keeps the first, a proxy may have read the other.
    const problem = requestProblem(req);
    if (problem !== null) {
      res.shouldKeepAlive = false; // as node's own answer did: the connection closes after it
      render(req, res, new ApiError('invalid_request', problem));
      return;
    }
    route(req, res);
  };
  const { handler, lastResponse } = trackingResponses(listener);
  return { handler, clientError: clientErrorHandler(deps, lastResponse), connect: connectHandler(deps, lastResponse) };
}
