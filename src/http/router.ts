// The route table: a request target's path to its route and decoded path parameters, in one lookup.

/** The request target split as routing reads it: the path, and the query with its "?" ('' when there is none). */
export function splitTarget(target: string): { path: string; search: string } {
  const hash = target.indexOf('#', 1);
  const t = hash === -1 ? target : target.slice(0, hash);
  const q = t.indexOf('?', 1);
  return q === -1 ? { path: t, search: '' } : { path: t.slice(0, q), search: t.slice(q) };
}

/**
 * A route path as an exact, case-sensitive regex: its literal parts escaped (the `.` of openapi.json is a dot),
 * each `:name` one path segment captured as a named group, one optional trailing slash.
 */
export function patternOf(path: string): RegExp {
  const source = path
    .split(/(:[a-z_]+)/)
    .map((part) => (part.startsWith(':') ? `(?<${part.slice(1)}>[^/]+)` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}/?$`);
}

/**
 * A path's first two segments ("/v1/listings" of "/v1/listings/lst-1/similar"), without a trailing slash. Every
 * route of this service starts with two literal segments or is shorter, so a path and every route that can match
 * it share this key, and a lookup tests only the routes of its key.
 */
export function routeKey(path: string): string {
  const first = path.indexOf('/', 1);
  const second = first === -1 ? -1 : path.indexOf('/', first + 1);
  const key = second === -1 ? path : path.slice(0, second);
  return key.length > 1 && key.endsWith('/') ? key.slice(0, -1) : key;
}

export interface Found<T> {
  route: T;
  /** Each `:name` of the route, percent-decoded. */
  params: Record<string, string>;
  /** The first parameter whose segment is not percent-encoded UTF-8 (kept undecoded in params), or null. */
  undecodable: string | null;
}

interface Entry<T> {
  route: T;
  pattern: RegExp;
  names: string[];
}

/**
 * The lookup for `routes` (in precedence order: the first route whose pattern matches wins). A route whose
 * key holds a parameter is tested under every key.
 */
export function createRouter<T extends { path: string }>(routes: readonly T[]): (path: string) => Found<T> | null {
  const entries: Entry<T>[] = routes.map((route) => ({
    route,
    pattern: patternOf(route.path),
    names: [...route.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]),
  }));
  const anyKey = entries.filter((e) => routeKey(e.route.path).includes(':'));
  const byKey = new Map<string, Entry<T>[]>();
  for (const e of entries) {
    const k = routeKey(e.route.path);
    if (!k.includes(':') && !byKey.has(k))
      byKey.set(
        k,
        entries.filter((x) => anyKey.includes(x) || routeKey(x.route.path) === k),
      );
  }
  return (path) => {
    for (const e of byKey.get(routeKey(path)) ?? anyKey) {
      const m = e.pattern.exec(path);
      if (m === null) continue;
      const params: Record<string, string> = {};
      let undecodable: string | null = null;
      for (const name of e.names) {
        const raw = m.groups![name];
        if (!raw.includes('%')) params[name] = raw;
        else
          try {
            params[name] = decodeURIComponent(raw);
          } catch {
            params[name] = raw;
            undecodable ??= name;
          }
      }
      return { route: e.route, params, undecodable };
    }
    return null;
  };
}
