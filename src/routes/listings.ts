// /v1/listings: search, detail, similar, stats. Filters go through the planner in ../listings/planner.ts.
import type { Database } from 'better-sqlite3';
import type * as v from 'valibot';
import { EQ_FILTERS, type ListingFilters, RANGE_FILTERS, statsScope } from '../../snapshot-format/listing-filters.ts';
import { SUMMARY_FIELDS, type SummaryType } from '../../snapshot-format/summary-json.ts';
import { Localised } from '../http/content-language.ts';
import { notFound } from '../http/errors.ts';
import { boundedJson, collectionJson, detail, detailJson } from '../http/respond.ts';
import { type Ctx, defineRoute } from '../http/route.ts';
import { ListingQueries } from '../listings/planner.ts';
import { EXAMPLES } from './support/examples.ts';
import { F, J } from './support/fields.ts';
import { ftsQuery } from './support/full-text.ts';
import {
  DetailQuery,
  type Filters,
  type Search,
  SearchQuery,
  SimilarQuery,
  StatsQuery,
} from './support/listing-query.ts';
import { detailText, prepareText, summariesOf } from './support/listing-text.ts';
import { keysetPosition } from './support/paging.ts';

export function prepare(db: Database) {
  return {
    planner: new ListingQueries(db),
    ...prepareText(db),
    ridAtOrBefore: db.prepare('SELECT rid FROM listings WHERE id <= ? ORDER BY id DESC LIMIT 1').pluck(),
    /** Type (province, city, neighbourhood) of each location: a few hundred rows, held per snapshot. */
    locationType: new Map(db.prepare('SELECT id, type FROM locations').raw().all() as [string, string][]),
    /** The compiler's statistics per scope (a few thousand rows at 1M listings), held per snapshot. */
    precomputed: new Map(
      (
        db
          .prepare(
            'SELECT scope, count, min_price_eur, max_price_eur, average_price_eur, median_price_eur FROM listing_stats',
          )
          .all() as ({ scope: string } & ListingStats)[]
      ).map(({ scope, ...stats }) => [scope, stats]),
    ),
    /** A listing's rid by id: the id index alone answers it (the rule's columns are the scan's, in memory). */
    ridOf: db.prepare('SELECT rid FROM listings WHERE id = ?').pluck(),
  };
}
type Stmts = ReturnType<typeof prepare>;
interface ListingStats {
  count: number;
  min_price_eur: number | null;
  max_price_eur: number | null;
  average_price_eur: number | null;
  median_price_eur: number | null;
}

/** Validated query → planner filters; an unknown location_id matches nothing (it names no level). */
export function toFilters(st: Stmts, f: Filters): ListingFilters {
  const out: ListingFilters = {};
  for (const e of EQ_FILTERS) if (e.key !== 'location_id') out[e.key] = f[e.key];
  for (const r of RANGE_FILTERS) {
    out[r.min] = f[r.min];
    if ('max' in r) out[r.max] = f[r.max];
  }
  if (f.q !== undefined) out.fts = ftsQuery(f.q);
  if (f.near !== undefined && f.radius_km !== undefined) {
    const comma = f.near.indexOf(',');
    out.near = { lat: Number(f.near.slice(0, comma)), lon: Number(f.near.slice(comma + 1)), km: f.radius_km };
  }
  if (f.location_id !== undefined) {
    const type = st.locationType.get(f.location_id);
    out.location_column =
      type === 'province' ? 'province_id' : type === 'neighbourhood' ? 'neighbourhood_id' : 'city_id';
    out.location_id = f.location_id;
  }
  return out;
}

/**
 * The spec's similar rule: same city and property type, price within ±25 %, ranked by relative price
 * difference, then size difference, then id. Ranked in memory (../listings/similar.ts: the listings of each city
 * and type in price order, read outward from the reference price), so a call costs about what a detail costs at
 * every city size; then one statement for the summaries.
 */
function similar(st: Stmts, id: string, n: number, locale: string) {
  const rid = st.ridOf.get(id) as number | undefined;
  if (rid === undefined) throw notFound('listing');
  // A reference without a price or property type ranks nothing (the columns hold NaN and code 0 for them).
  const ranked = st.planner.scan
    .similar()
    .rank(rid - 1, n)
    .map((row) => row + 1);
  return summariesOf(st, ranked, locale);
}

export function stats(st: Stmts, f: Filters) {
  const filters = toFilters(st, f);
  // Precomputed at build time: no filter, or one equality filter alone (listing-filters.ts' statsScope).
  const scope = statsScope(filters);
  if (scope !== null)
    return (
      st.precomputed.get(scope) ?? {
        count: 0,
        min_price_eur: null,
        max_price_eur: null,
        average_price_eur: null,
        median_price_eur: null,
      }
    ); // a value no listing has
  const s = st.planner.stats(filters);
  return {
    count: s.count,
    min_price_eur: s.min,
    max_price_eur: s.max,
    average_price_eur: s.average,
    median_price_eur: s.median,
  };
}

/** A summary field's JSON Schema by its JSON type in SUMMARY_FIELDS. */
const SCHEMA_OF = { id: F.id.schema, str: J.str, num: J.num, ts: J.ts } satisfies Record<SummaryType, unknown>;
const schemasOfTypes = (fields: Record<string, SummaryType>) =>
  Object.fromEntries(Object.entries(fields).map(([name, type]) => [name, SCHEMA_OF[type]]));
const { location, ...top } = SUMMARY_FIELDS;
const SUMMARY_PROPS = { ...schemasOfTypes(top), location: J.object(schemasOfTypes(location)) };
export const LISTING_SUMMARY = J.object(SUMMARY_PROPS, { example: EXAMPLES.listingSummary });
const LISTING_DETAIL = J.object(
  {
    ...SUMMARY_PROPS,
    description: J.str,
    images: J.strs,
    attributes: J.obj,
    sources: { type: ['array', 'null'], items: J.object({ url: { type: 'string' }, type: { type: 'string' } }) },
  },
  {
    description:
      'attributes is an object whose structure is not fixed; sources are the pages the listing was found on.',
    example: EXAMPLES.listingDetail,
  },
);
const STATS = J.object(
  {
    count: { type: 'integer' },
    min_price_eur: J.num,
    max_price_eur: J.num,
    average_price_eur: J.num,
    median_price_eur: J.num,
  },
  { example: EXAMPLES.listingStats },
);

export const routes = () => [
  defineRoute<Search>({
    path: '/v1/listings',
    tag: 'Listings',
    kind: 'collection',
    query: SearchQuery,
    item: LISTING_SUMMARY,
    summary: 'Search active, published rental listings',
    description:
      'Active, published rental listings, ordered by ascending id (not by date, price or relevance). Every filter given must hold. location_id may name a province, city or neighbourhood and covers everything inside it; near with radius_km keeps the listings within that distance of a point.',
    handle(ctx) {
      const st = ctx.snap.use(prepare);
      const filters = toFilters(st, ctx.query);
      const position = keysetPosition(ctx);
      const after = position.after;
      const afterRid = after === null ? 0 : ((st.ridAtOrBefore.get(after) as number | undefined) ?? 0);
      // One rid more than the page tells has_more; only the page's own listings are read.
      const rids = st.planner.page(filters, afterRid, ctx.query.limit + 1);
      const more = rids.length > ctx.query.limit;
      const page = summariesOf(st, more ? rids.slice(0, ctx.query.limit) : rids, ctx.meta.locale);
      return new Localised(
        collectionJson(page.json, position.pagination(more ? page.lastId! : null), ctx.meta),
        page.lang,
      );
    },
  }),
  defineRoute<Filters>({
    path: '/v1/listings/stats',
    tag: 'Listings',
    kind: 'detail',
    query: StatsQuery,
    item: STATS,
    summary: 'Asking-rent statistics over the listings a search with the same filters returns',
    description:
      'count includes listings without a price; the price figures use listings with a price. The median of an even count is the mean of the two middle prices; average is rounded to cents. All price figures are null when no listing has a price.',
    handle: (ctx) => detail(stats(ctx.snap.use(prepare), ctx.query), ctx.meta),
  }),
  defineRoute<v.InferOutput<typeof DetailQuery>>({
    path: '/v1/listings/:id',
    record: 'listing',
    tag: 'Listings',
    kind: 'detail',
    query: DetailQuery,
    item: LISTING_DETAIL,
    summary: 'One listing by id',
    description:
      'The search fields plus the description, the images, attributes and sources. Only a listing a search can return is served: an inactive, unpublished or sale listing is a 404.',
    handle(ctx) {
      const text = detailText(ctx.snap.use(prepare), ctx.params.id, ctx.meta.locale);
      if (text === undefined) throw notFound('listing');
      return new Localised(detailJson(text.json, ctx.meta), text.lang);
    },
  }),
  defineRoute<v.InferOutput<typeof SimilarQuery>>({
    path: '/v1/listings/:id/similar',
    record: 'listing',
    tag: 'Listings',
    kind: 'bounded',
    query: SimilarQuery,
    item: J.object(SUMMARY_PROPS, { examples: EXAMPLES.similarListings }),
    summary: 'Active listings like this one',
    description:
      'Same city and property type, price within 25 % of the reference, ranked by relative price difference, then size difference, then id. The reference itself is excluded. A reference without a price or property type has no similar listings (empty array).',
    handle(ctx) {
      const text = similar(ctx.snap.use(prepare), ctx.params.id, ctx.query.limit, ctx.meta.locale);
      return new Localised(boundedJson(text.json, ctx.meta), text.lang);
    },
  }),
];
export type { Ctx };
