// createApp(deps, routes): the routes served through polka, the access step, query validation, and the one error renderer.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import polka, { type Polka } from 'polka';
import type { Locale } from '../../snapshot-format/locales.ts';
import { redactKeys } from '../access/key-format.ts';
import { etagOf, notModified, snapshotHeaders } from './caching.ts';
import { contentLanguage, Localised } from './content-language.ts';
import { ApiError, notAllowedMessage, sendError } from './errors.ts';
import { requestProblem } from './guard.ts';
import { pathId, QueryMemo } from './query.ts';
import { clientErrorHandler, connectHandler, trackingResponses } from './raw-answers.ts';
import { addHeader, type HeaderList, type Meta, sendJson, writeHead } from './respond.ts';
import { type AppDeps, type Lifecycle, patternOf, type Req, type RouteDef, undecodableParam } from './route.ts';
import { normalTarget } from './target.ts';

const notFound = (path: string) =>
  new ApiError('not_found', `No endpoint matches ${redactKeys(path)}. See /v1/openapi.json.`);
const notAllowed = (method: string | undefined) =>
  new ApiError('method_not_allowed', notAllowedMessage(method), {
    Allow: 'GET, HEAD',
  });

type Render = (req: Req, res: ServerResponse, err: unknown) => void;
type Next = (req: Req, res: ServerResponse) => void;
/** The access step, then `next` unless the step answered the request; every error on the way is rendered. */
type Guarded = (req: Req, res: ServerResponse, isPublic: boolean, next: Next) => void;

function accessStep(deps: AppDeps, render: Render): Guarded {
  return (req, res, isPublic, next) => {
    try {
      const g = deps.guard ? deps.guard(req, res, { public: isPublic }) : false;
      if (g === false) return next(req, res);
      if (g === true) return;
      g.then((answered) => answered || next(req, res)).catch((e) => render(req, res, e));
    } catch (e) {
      render(req, res, e);
    }
  };
}

/**
 * A route's answer once the access step let the request through: its path ids checked and its query validated,
 * then a public route's body as it is, or a data route's with the snapshot's headers and its tag.
 */
function answerer(deps: AppDeps, def: RouteDef) {
  const queries = new QueryMemo(def.query);
  const names = [...def.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]);
  return (req: Req, res: ServerResponse) => {
    // polka decodes each parameter it can and keeps one it cannot as it is: the path says which.
    const undecodable = names.length > 0 ? undecodableParam(def.path, req.path) : null;
    if (undecodable !== null)
      throw new ApiError('invalid_request', `Path parameter "${undecodable}" is not correctly percent-encoded.`);
    const query = queries.get(req.search);
    const params: Record<string, string> = {};
    for (const k of names) params[k] = pathId(req.params[k], k);
    const meta: Meta = { locale: (query.locale as Locale | undefined) ?? 'en', request_id: req.id };
    if (def.public === true) {
      const body = def.handle({ req, res, query, params, meta, deps });
      if (def.kind !== 'raw') sendJson(res, 200, body);
      return;
    }
    // Data: the same request on the same snapshot is the same answer, so a client's tag saves the transfer.
    // The handler runs first: a tag never turns its 400 (a bad or expired cursor, a bad date) or its 404 (an
    // unknown id) into a 304, and "*" matches only an answer that exists (RFC 9110 13.1.2).
    const snap = deps.snapshots.get();
    const etag = etagOf(snap.meta.snapshot_id, req.path, query);
    const headers: HeaderList = [...snapshotHeaders(snap.meta), 'ETag', etag, 'Cache-Control', 'private, no-cache'];
    // A body with translated fields comes with their language bits (Localised).
    let body = def.handle({ req, res, query, params, meta, snap, deps });
    let lang = 0;
    if (body instanceof Localised) {
      lang = body.lang;
      body = body.body;
    }
    if (notModified(req, etag)) {
      headers.push('Vary', 'Accept-Encoding');
      writeHead(res, 304, headers);
      res.end();
      return;
    }
    const language = contentLanguage(meta.locale, lang);
    if (language !== undefined) headers.push('Content-Language', language);
    sendJson(res, 200, body, headers);
  };
}

/**
 * The polka app for `routes` (in precedence order: a fixed path before a parameterised one). Each route is a GET
 * (polka answers HEAD with it; node drops the body); any other method on a known path is a 405 and an unknown path
 * a 404, each after the same access step as a GET there. Everything thrown, at once or later, reaches onError.
 */
function routing(deps: AppDeps, routes: readonly RouteDef[], render: Render) {
  const guarded = accessStep(deps, render);
  /** Whether a route's handler is a public route's: the 405 of another method takes the same access step. */
  const publicHandlers = new WeakSet<object>();
  const app: Polka<Req> = polka<Req>({
    onError: (err, req, res) => render(req, res, err),
    onNoMatch: (req, res): void => {
      // Another method than GET or HEAD: a 405 where a GET would find a route (polka's own lookup).
      const known = req.method === 'GET' || req.method === 'HEAD' ? undefined : app.find('GET', req.path).handlers[0];
      if (known !== undefined) {
        guarded(req, res, publicHandlers.has(known), (q, s) => render(q, s, notAllowed(q.method)));
        return;
      }
      req.route = '(no match)';
      guarded(req, res, false, (q, s) => render(q, s, notFound(q.path)));
    },
  });
  for (const def of routes) {
    const isPublic = def.public === true;
    const answer = answerer(deps, def);
    const handler = (req: Req, res: ServerResponse) => {
      req.route = def.path;
      guarded(req, res, isPublic, answer);
    };
    if (isPublic) publicHandlers.add(handler);
    app.get(patternOf(def.path), handler);
  }
  return app;
}

/**
 * A response is done with (sent, or its connection gone): in flight, metrics and the log line. One function,
 * `this` the response, for every request: no closure or once-wrapper is made per request.
 */
function closing(deps: AppDeps, lifecycle: Lifecycle) {
  const metrics = deps.metrics;
  return function onClose(this: ServerResponse & { req: Req }) {
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
  };
}

/** The app for `routes`: node's request listener, and its listeners for requests node's parser rejected and CONNECT. */
export function createApp(deps: AppDeps, routes: readonly RouteDef[]) {
  const render: Render = (req, res, err) => sendError(res, req.id, err, deps.log);
  // polka's handler is node's request listener (req, res); its optional third argument is a parent app's `next`.
  const app = routing(deps, routes, render);
  const polkaListener = app.handler as (req: Req, res: ServerResponse) => void;
  const lifecycle = deps.lifecycle ?? { draining: false, inFlight: 0 };
  const onClose = closing(deps, lifecycle);
  /** The request id, common headers and the log line, then polka's handler with the target in origin form. */
  const listener = (request: IncomingMessage, res: ServerResponse): void => {
    const req = request as Req;
    req.url = normalTarget(req.url ?? '/');
    req.id = randomUUID();
    addHeader(res, 'X-Request-Id', req.id);
    addHeader(res, 'X-Content-Type-Options', 'nosniff');
    if (lifecycle.draining) res.shouldKeepAlive = false; // answers after SIGTERM close their connection
    lifecycle.inFlight++;
    deps.metrics?.inFlight.inc();
    req.started = performance.now();
    res.on('close', onClose);
    // Node's own check (requireHostHeader) answered a bare 400 without the envelope; the server turns it off.
    // Two Host lines are a 400 too (RFC 9112 3.2): node keeps the first, a proxy may have read the other.
    const problem = requestProblem(req);
    if (problem !== null) {
      res.shouldKeepAlive = false; // as node's own answer did: the connection closes after it
      req.path = app.parse(req).pathname; // for the log line
      render(req, res, new ApiError('invalid_request', problem));
      return;
    }
    polkaListener(req, res);
  };
  const { handler, lastResponse } = trackingResponses(listener);
  return { handler, clientError: clientErrorHandler(deps, lastResponse), connect: connectHandler(deps, lastResponse) };
}
