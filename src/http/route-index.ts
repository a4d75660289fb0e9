// Route lookup that tests only the routes a path can match: the routes are grouped by the literal start of their path.
/** A route as polka's router (trouter) keeps it. */
interface Route {
  method: string;
  keys: false | string[];
  pattern: RegExp;
  handlers: unknown[];
}
type Found = { params: Record<string, string>; handlers: unknown[] };
export interface Router {
  routes: Route[];
  find(method: string, path: string): Found;
}

/**
 * A path's first two segments ("/v1/listings" of "/v1/listings/lst-1/similar"), without a trailing slash: every
 * route of this service starts with two literal segments or is shorter, so a path and every route that can match it
 * have the same key.
 */
export function routeKey(path: string): string {
  const first = path.indexOf('/', 1);
  const second = first === -1 ? -1 : path.indexOf('/', first + 1);
  const key = second === -1 ? path : path.slice(0, second);
  return key.length > 1 && key.endsWith('/') ? key.slice(0, -1) : key;
}

/**
 * Replaces the router's find with one that gives the same params and handlers (the same routes in the same order)
 * but tests only the routes of the path's key: trouter tests every route's pattern on every request (30 GET
 * routes, ~4 % of a small answer's CPU). `keys[i]` is the key of `router.routes[i]`'s path (routeKey), or null
 * for a route that may match a path of any key (tested with every key that has routes). A key must not hold a
 * parameter: such a route gets null.
 */
export function indexRoutes(router: Router, keys: (string | null)[]): void {
  if (keys.length !== router.routes.length) throw new Error('indexRoutes: one key per route');
  const byKey = new Map<string, Route[]>();
  for (const k of keys) if (k !== null && !byKey.has(k)) byKey.set(k, []);
  router.routes.forEach((r, i) => {
    const k = keys[i];
    if (k === null) for (const list of byKey.values()) list.push(r);
    else byKey.get(k)!.push(r);
  });
  const none: Route[] = [];
  router.find = (method, path) => {
    const routes = byKey.get(routeKey(path)) ?? none;
    const isHead = method === 'HEAD';
    const params: Record<string, string> = {};
    let handlers: unknown[] = [];
    for (const r of routes) {
      if (!(r.method === '' || r.method === method || (isHead && r.method === 'GET'))) continue;
      const m = r.pattern.exec(path);
      if (m === null) continue;
      if (r.keys === false) {
        if (m.groups !== undefined) for (const k in m.groups) params[k] = m.groups[k];
      } else for (let j = 0; j < r.keys.length; j++) params[r.keys[j]] = m[j + 1];
      handlers = handlers.concat(r.handlers);
    }
    return { params, handlers };
  };
}

/** The key of a route registered for `path` (a pattern with :params), or null when a parameter is inside its key. */
export const keyOfRoute = (path: string): string | null => {
  const k = routeKey(path);
  return k.includes(':') ? null : k;
};
