// The service's endpoints as its route table has them, and a request for each that succeeds on the basic fixture.
// The shared tests (envelopes and locale, limit/q/cursor, path ids, string filters, the OpenAPI document) take their
// endpoints from here, so a new route is covered by them without a list to extend.
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { entriesOf } from '../../src/http/params.ts';
import type { RouteDef } from '../../src/http/route.ts';
import { ROUTE_MODULES } from '../../src/routes/index.ts';

/** Every route of the route modules (the docs page and the OpenAPI document are added by the service). */
export const ROUTES: readonly RouteDef[] = ROUTE_MODULES.flatMap((m) => m.routes());
/** The API's data routes (behind the key): everything but ping and the health checks. */
export const DATA_ROUTES = ROUTES.filter((r) => r.public !== true);

const queryEntries = (r: RouteDef) => Object.entries(entriesOf(r.query)) as [string, v.GenericSchema][];
/** A route's query parameters, and those it requires. */
export const queryNames = (r: RouteDef) => queryEntries(r).map(([name]) => name);
export const requiredParams = (r: RouteDef) =>
  queryEntries(r)
    .filter(([, s]) => s.type !== 'optional')
    .map(([name]) => name);

/** The collections paged by cursor and searched by q: the shared limit, q and cursor rules apply to them. */
export const PAGED = DATA_ROUTES.filter(
  (r) => r.kind === 'collection' && ['limit', 'q', 'cursor'].every((n) => queryNames(r).includes(n)),
).map((r) => r.path);
/** The data routes with a path id and no required query parameter (the path id rules apply to them as they are). */
export const ID_ROUTES = DATA_ROUTES.filter((r) => r.path.includes('/:') && requiredParams(r).length === 0).map(
  (r) => r.path,
);

/**
 * Every free-text filter of 1 to 120 characters (an id or a value matched exactly), as [route, parameter], over the
 * data routes without a required parameter: q and cursor have rules of their own.
 */
export const STRING_FILTERS: [string, string][] = DATA_ROUTES.filter((r) => requiredParams(r).length === 0).flatMap(
  (r) =>
    queryEntries(r)
      .filter(([name, s]) => {
        const json = toJsonSchema(s, { errorMode: 'ignore' }) as { minLength?: number; maxLength?: number };
        return name !== 'q' && name !== 'cursor' && json.minLength === 1 && json.maxLength === 120;
      })
      .map(([name]): [string, string] => [r.path, name]),
);

/** A route pattern as the OpenAPI document writes it (`/v1/listings/:id` → `/v1/listings/{id}`). */
export const docPath = (pattern: string) => pattern.replace(/:([a-z_]+)/g, '{$1}');

/** What the basic fixture needs for a route's required query parameters; everything else is derived. */
const FIXTURE_QUERIES: Record<string, (o: { since?: string }) => string | undefined> = {
  '/v1/market/metrics/:id/observations': () => 'location_id=loc-ams&from=2026-01-01&to=2026-12-31',
  // The change history since an earlier snapshot: only a snapshot built with one (useDocument) answers it.
  '/v1/changes': ({ since }) => (since === undefined ? undefined : `since=${since}`),
};

type Get = (path: string) => Promise<{ status: number; body: any }>;
const firstIds = new WeakMap<object, Map<string, Promise<string>>>();

/** The id of the first record the collection at `base` answers (its path without the id), once per server. */
function firstId(get: Get, server: object, base: string): Promise<string> {
  let ids = firstIds.get(server);
  if (ids === undefined) firstIds.set(server, (ids = new Map()));
  let id = ids.get(base);
  if (id === undefined) {
    id = get(base).then((res) => {
      if (res.status !== 200 || !res.body.data?.[0]?.id)
        throw new Error(`${base} answered no record to take an id from`);
      return res.body.data[0].id as string;
    });
    ids.set(base, id);
  }
  return id;
}

/**
 * A request for the route `pattern` that succeeds on the basic fixture, or undefined when it needs what `o` does not
 * give: each path id is the first record of the collection the path names before it, and a required query
 * parameter comes from FIXTURE_QUERIES (a route that requires one and has no entry there fails here).
 */
export async function fixtureRequest(
  server: { get: Get },
  pattern: string,
  o: { since?: string } = {},
): Promise<string | undefined> {
  const route = ROUTES.find((r) => r.path === pattern);
  let query = '';
  if (route !== undefined && requiredParams(route).length > 0) {
    const make = FIXTURE_QUERIES[pattern];
    if (make === undefined) throw new Error(`${pattern} requires ${requiredParams(route)}: add it to FIXTURE_QUERIES`);
    const q = make(o);
    if (q === undefined) return undefined;
    query = `?${q}`;
  }
  let path = '';
  for (const segment of pattern.split('/').slice(1))
    path += `/${segment.startsWith(':') ? encodeURIComponent(await firstId((p) => server.get(p), server, path)) : segment}`;
  return path + query;
}
