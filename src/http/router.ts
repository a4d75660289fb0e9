// Route matching for the app: a map lookup for fixed paths, a short list per (first segments, depth) for paths with
// parameters; the first route registered that matches wins. Synchronous: a handler's throw (or rejected promise)
// goes to onError, an unmatched request to onNoMatch.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a handler may see on the request after routing (the fields polka set, which the app reads). */
export interface Routed extends IncomingMessage {
  path: string;
  search: string;
  params: Record<string, string>;
}
type Handler = (req: Routed, res: ServerResponse) => unknown;
type OnError = (err: unknown, req: Routed, res: ServerResponse) => void;

/**
 * A route pattern: literal segments and `:name` segments (one non-empty path segment each), matched exactly and
 * case-sensitively, with one optional trailing slash.
 */
interface Route {
  path: string;
  segments: string[];
  /** Index and name of each parameter segment. */
  params: [number, string][];
  get?: Handler;
}

const isParam = (segment: string) => segment.startsWith(':');

function matches(route: Route, segments: string[]): boolean {
  if (route.segments.length !== segments.length) return false;
  for (let i = 1; i < segments.length; i++) {
    const s = route.segments[i];
    if (isParam(s) ? segments[i] === '' : s !== segments[i]) return false;
  }
  return true;
}

/** A request target's path and query ('' or starting with '?'); a fragment is dropped. */
function split(url: string): { path: string; search: string } {
  let path = url;
  const hash = url.indexOf('#', 1);
  if (hash !== -1) path = url.slice(0, hash);
  const q = path.indexOf('?', 1);
  if (q === -1) return { path, search: '' };
  return { path: path.slice(0, q), search: path.slice(q) };
}

/** A parameter's value: percent-decoded, or as it was when it is not valid percent-encoding. */
function decoded(value: string): string {
  if (value.indexOf('%') === -1) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export function createRouter(opts: { onError: OnError; onNoMatch: Handler }) {
  const routes: Route[] = [];
  /** Fixed paths (no parameter) → the first route matching that path, whatever its kind. */
  const fixed = new Map<string, Route>();
  /** Routes with parameters, by number of segments, in registration order. */
  const byDepth = new Map<number, Route[]>();
  /** Handlers for any other method, per group of paths (their 405 after the access step), in registration order. */
  const others: { paths: Route[]; handler: Handler }[] = [];

  const routeOf = (path: string): Route => {
    const segments = path.split('/');
    const params: [number, string][] = [];
    segments.forEach((s, i) => {
      if (isParam(s)) params.push([i, s.slice(1)]);
    });
    return { path, segments, params };
  };

  /** The first route registered whose pattern matches the path, with its parameters; null when none does. */
  function find(path: string): { route: Route; segments: string[] } | null {
    const bare = path.length > 1 && path.charCodeAt(path.length - 1) === 47 /* / */ ? path.slice(0, -1) : path;
    const hit = fixed.get(bare);
    const segments = hit !== undefined && hit.params.length === 0 ? hit.segments : bare.split('/');
    if (hit !== undefined) return { route: hit, segments };
    const list = byDepth.get(segments.length);
    if (list) for (const route of list) if (matches(route, segments)) return { route, segments };
    return null;
  }

  /** The handler for a request: its GET route's, else its path group's for another method, else onNoMatch. */
  function dispatch(req: Routed, path: string): Handler {
    if (req.method === 'GET' || req.method === 'HEAD') {
      const found = find(path);
      if (found === null || found.route.get === undefined) return opts.onNoMatch;
      for (const [i, name] of found.route.params) req.params[name] = decoded(found.segments[i]);
      return found.route.get;
    }
    const segments = (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).split('/');
    for (const o of others) if (o.paths.some((r) => matches(r, segments))) return o.handler;
    return opts.onNoMatch;
  }

  function run(handler: Handler, req: Routed, res: ServerResponse): void {
    try {
      const out = handler(req, res) as Promise<unknown> | undefined;
      if (out !== undefined && typeof out?.then === 'function') out.then(undefined, (e) => opts.onError(e, req, res));
    } catch (e) {
      opts.onError(e, req, res);
    }
  }

  return {
    /** A GET route (HEAD too). */
    get(path: string, handler: Handler) {
      const r = routeOf(path);
      r.get = handler;
      routes.push(r);
      if (r.params.length > 0) byDepth.set(r.segments.length, [...(byDepth.get(r.segments.length) ?? []), r]);
      // A fixed path goes to the first route registered that matches it: one with parameters may come first.
      else if (!fixed.has(path)) fixed.set(path, routes.find((x) => matches(x, r.segments)) ?? r);
    },
    /** Every other method on any of these paths. */
    all(paths: string[], handler: Handler) {
      others.push({ paths: paths.map(routeOf), handler });
    },
    handler(request: IncomingMessage, res: ServerResponse, _next?: unknown): void {
      const req = request as Routed;
      const { path, search } = split(req.url ?? '/');
      req.path = path;
      req.search = search;
      req.url = path + search;
      req.params = {};
      run(dispatch(req, path), req, res);
    },
  };
}
