// The typed client of the Netherlands rental data API: createClient() gives one method per operation of the
// OpenAPI document, grouped by URL, with parameters and answers typed from the generated schema.d.ts.
import { ApiError } from './errors.ts';
import { type ClientOptions, createTransport, type Get, type QueryValues } from './transport.ts';
import type { Body, Filters, IdPath, Item, PagedPath, ParamArgs, Path, Query } from './types.ts';

export { ApiError, type ErrorCode, parseRetryAfter } from './errors.ts';
export type { components, operations, paths } from './schema.d.ts';
export type { ClientOptions, RetryOptions } from './transport.ts';
export type { Body, Filters, Item, Path, Query } from './types.ts';

/**
 * Every item of a paged collection, page after page: each request repeats the same filters, locale and limit
 * and adds the previous page's next_cursor, until a page has none.
 */
async function* allItems<P extends PagedPath>(get: Get, path: P, filters: QueryValues = {}): AsyncGenerator<Item<P>> {
  let cursor: string | null = null;
  do {
    const page = (await get(path, cursor === null ? filters : { ...filters, cursor })) as {
      data?: Item<P>[];
      pagination?: { next_cursor?: string | null };
    };
    const next = page.pagination?.next_cursor;
    // An answer that cannot be paged on (no list, no pagination, the same cursor again) ends the walk as an error.
    if (!Array.isArray(page.data) || next === undefined || (next !== null && next === cursor))
      throw new ApiError(
        200,
        'invalid_response',
        `${path}: a page without data, pagination or a new next_cursor`,
        null,
      );
    yield* page.data;
    cursor = next;
  } while (cursor !== null);
}

/**
 * A path id as one URL segment: 1 to 120 characters, as the API takes them. "." and ".." are refused here: a URL
 * resolves them (even encoded) into another path, whose answer would come back typed as this one's.
 */
function segment(id: string): string {
  const n = [...id].length;
  if (n < 1 || n > 120 || id === '.' || id === '..')
    throw new RangeError(`id: 1 to 120 characters, not "." or ".." (got ${JSON.stringify(id.slice(0, 130))})`);
  return encodeURIComponent(id);
}

export function createClient(options: ClientOptions) {
  const get = createTransport(options);
  /** A method without a path id. */
  const op =
    <P extends Path>(path: P) =>
    (...[params]: ParamArgs<Query<P>>): Promise<Body<P>> =>
      get(path, params as QueryValues) as Promise<Body<P>>;
  /** A method whose first argument is the path's {id}. */
  const byId =
    <P extends IdPath>(path: P) =>
    (id: string, ...[params]: ParamArgs<Query<P>>): Promise<Body<P>> =>
      get(path.replace('{id}', segment(id)), params as QueryValues) as Promise<Body<P>>;
  /** A paged collection: `search` answers one page, `all` iterates over the items of every page. */
  const paged = <P extends PagedPath>(path: P) => ({
    search: op(path),
    all: (...[filters]: ParamArgs<Filters<P>>): AsyncGenerator<Item<P>> => allItems(get, path, filters as QueryValues),
  });

  return {
    /** The same client with some options changed: `api.with({ signal })` cancels the calls made through it. */
    with: (changes: Partial<Omit<ClientOptions, 'baseUrl' | 'key'>>) => createClient({ ...options, ...changes }),
    /** GET /v1/ping: availability (no key needed, no envelope). */
    ping: op('/v1/ping'),
    /** GET /v1/openapi.json: the OpenAPI 3.1 document these types were generated from (described there as an object). */
    openapi: (): Promise<Record<string, unknown>> => get('/v1/openapi.json') as Promise<Record<string, unknown>>,
    listings: {
      ...paged('/v1/listings'),
      get: byId('/v1/listings/{id}'),
      similar: byId('/v1/listings/{id}/similar'),
      stats: op('/v1/listings/stats'),
    },
    owners: { ...paged('/v1/owners'), get: byId('/v1/owners/{id}') },
    internet: {
      providers: { ...paged('/v1/internet/providers'), get: byId('/v1/internet/providers/{id}') },
      plans: paged('/v1/internet/plans'),
    },
    insurance: {
      products: paged('/v1/insurance/products'),
      providers: { ...paged('/v1/insurance/providers'), get: byId('/v1/insurance/providers/{id}') },
    },
    platforms: { ...paged('/v1/platforms'), get: byId('/v1/platforms/{id}') },
    articles: { ...paged('/v1/articles'), get: byId('/v1/articles/{id}') },
    glossary: { ...paged('/v1/glossary'), get: byId('/v1/glossary/{id}') },
    market: {
      metrics: op('/v1/market/metrics'),
      observations: byId('/v1/market/metrics/{id}/observations'),
    },
    locations: { ...paged('/v1/locations'), get: byId('/v1/locations/{id}') },
    /**
     * GET /v1/changes: what was added, removed or changed since the snapshot your copy holds (`since`, required);
     * `all({ since })` yields every change, then keep the answer's meta.snapshot_id (from `search`) for next time.
     */
    changes: paged('/v1/changes'),
  };
}

export type Client = ReturnType<typeof createClient>;
