// /v1/listings: search, detail, similar, stats. Filters go through the planner in ../listings/planner.ts.
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import type { ListingFilters } from '../../snapshot-format/listing-sql.ts';
import { LOCALES } from '../../snapshot-format/locales.ts';
import { fillSummary, fillValues, SEP } from '../../snapshot-format/summary-json.ts';
import { IN_ENGLISH, IN_LOCALE } from '../http/content-language.ts';
import { notFound } from '../http/errors.ts';
import { cursor, documented, id120, int, limit, locale, minMax, oneOf, qOver, str } from '../http/params.ts';
import { boundedJson, collectionJson, detail, detailJson } from '../http/respond.ts';
import { type AppDeps, type Ctx, defineRoute } from '../http/route.ts';
import { ListingQueries } from '../listings/planner.ts';
import { EXAMPLES } from './examples.ts';
import { J } from './fields.ts';
import { ftsQuery } from './full-text.ts';
import { i18nJoin, langBits } from './i18n-sql.ts';
import { pageRows } from './paging.ts';

/** Separates the listings of a page in byRids' one string (SEP separates the values within one). */
const ROW_SEP = '\u0002';
/** The separators as SQL expressions, so the statement and the code that splits its result cannot drift apart. */
const sqlChar = (c: string) => `char(${c.charCodeAt(0)})`;

const FURNISHING = ['SHELL', 'FURNISHED', 'UPHOLSTERED'] as const;
/** A listing filter on a number: listings without that value never match it. */
const range = (max: number, description: string, example: number) =>
  documented(v.optional(int(0, max)), `${description} A listing without this value never matches.`, example);
const filterEntries = {
  locale,
  q: qOver(
    'the title and description in every language, the street, the postcode and the names of the neighbourhood, city and province in every language',
    'balcony',
  ),
  location_id: documented(
    v.optional(id120),
    'Only listings in this location or inside it (an id from /v1/locations: a province, city or neighbourhood; not a slug). An unknown id matches nothing.',
    'loc_0013',
  ),
  owner_id: documented(v.optional(id120), 'Only listings of this owner (an id from /v1/owners).', 'own_00004'),
  min_price: range(10_000_000, 'Only listings asking at least this rent, in euros per month.', 1000),
  max_price: range(10_000_000, 'Only listings asking at most this rent, in euros per month.', 2000),
  min_size: range(10_000_000, 'Only listings of at least this many square metres.', 50),
  max_size: range(10_000_000, 'Only listings of at most this many square metres.', 120),
  min_rooms: range(100, 'Only listings with at least this many rooms (all rooms, not bedrooms).', 3),
  furnishing: documented(
    v.optional(oneOf(FURNISHING, ' (case-sensitive)')),
    'Only listings offered this way: SHELL (bare), UPHOLSTERED (floors, curtains, lights) or FURNISHED.',
    'FURNISHED',
  ),
  property_type: documented(
    v.optional(str(1, 120)),
    'Only listings of this property type (exact match, e.g. apartment, house, studio, room).',
    'apartment',
  ),
};
const withMinMax = <T extends v.ObjectEntries>(entries: T) =>
  v.pipe(v.strictObject(entries), minMax('min_price', 'max_price'), minMax('min_size', 'max_size'));
export const SearchQuery = withMinMax({ ...filterEntries, limit: limit(100, 20), cursor });
export const StatsQuery = withMinMax(filterEntries);
const DetailQuery = v.strictObject({ locale });
const SimilarQuery = v.strictObject({ locale, limit: limit(20, 10) });
type Filters = {
  locale: string;
  q?: string;
  location_id?: string;
  owner_id?: string;
  min_price?: number;
  max_price?: number;
  min_size?: number;
  max_size?: number;
  min_rooms?: number;
  furnishing?: string;
  property_type?: string;
};

// A listing's summary is JSON text written by the compiler (listing_text.summary, see snapshot-format/summary-json.ts):
// a request reads it, the title in the requested locale and the city id, and puts them together.
// The city's display name comes from a per-snapshot map of location names, not a join per row.
// English has no translation rows, so its statements skip the translation join (a third of the time of
// a page's row fetch). @locale is bound either way, so both take the same parameters.
// Each also yields the language bits of its translated columns (see ../http/content-language.ts).
type Localised<T> = { en: T; other: T };
type Sql = { title: string; description: string; join: string; lang: (cols: string[]) => string };
const localised = <T>(build: (sql: Sql) => T): Localised<T> => ({
  en: build({
    title: 'l.title',
    description: 'l.description',
    join: 'WHERE @locale IS NOT NULL AND',
    lang: (cols) => `((${cols.map((c) => `(l.${c} IS NOT NULL)`).join(' | ')}) << 1)`,
  }),
  other: build({
    title: 'COALESCE(t.title, l.title)',
    description: 'COALESCE(t.description, l.description)',
    join: `${i18nJoin('listings', 'l')} WHERE`,
    lang: (cols) => langBits('l', cols),
  }),
});
const forLocale = <T>(s: Localised<T>, locale: string) => (locale === 'en' ? s.en : s.other);

/** A location's display name as JSON text, and its language bits (see ../http/content-language.ts). */
type CityName = { json: string; lang: number };
const NO_CITY: CityName = { json: 'null', lang: 0 };

/** Display names of every location in every locale (a few hundred rows), read once per snapshot. */
function cityNames(db: Database): (id: string, locale: string) => CityName {
  const rows = db
    .prepare(
      `SELECT l.id, l.name, t.locale, t.name AS tname FROM locations l LEFT JOIN locations_i18n t ON t.rid = l.rid`,
    )
    .all() as { id: string; name: string; locale: string | null; tname: string | null }[];
  // One map per locale, the English name where there is no translation: a lookup builds no key string.
  const en = new Map<string, CityName>();
  for (const r of rows) en.set(r.id, r.name === null ? NO_CITY : { json: JSON.stringify(r.name), lang: IN_ENGLISH });
  const byLocale = new Map<string, Map<string, CityName>>(LOCALES.map((l) => [l, new Map(en)]));
  for (const r of rows)
    if (r.locale && r.tname) byLocale.get(r.locale)?.set(r.id, { json: JSON.stringify(r.tname), lang: IN_LOCALE });
  return (id, locale) => (byLocale.get(locale) ?? en).get(id) ?? NO_CITY;
}

export function prepare(db: Database) {
  return {
    planner: new ListingQueries(db),
    // A whole page as one string (one value to hand to JS instead of six per row): per listing its
    // summary values, title (JSON), city id, rid and the title's language bits joined by SEP; listings
    // joined by ROW_SEP. What is shown is in listing_text (l here; schema.sql), keyed by the same rid as listings (f).
    byRids: localised(({ title, join, lang }) =>
      db
        .prepare(`SELECT group_concat(l.summary || ${sqlChar(SEP)} || json_quote(${title}) || ${sqlChar(SEP)} || l.city_id || ${sqlChar(SEP)} || l.rid || ${sqlChar(SEP)} || (${lang(['title'])}), ${sqlChar(ROW_SEP)})
      FROM listing_text l ${join} l.rid IN (SELECT value FROM json_each(@rids))`)
        .pluck(),
    ),
    // [rid, id, summary, title, city_id, description, images, attributes, sources, language bits]
    byId: localised(({ title, description, join, lang }) =>
      db
        .prepare(`SELECT l.rid, f.id, l.summary, ${title}, l.city_id, ${description}, l.images, l.attributes, l.sources,
        ${lang(['title', 'description'])}
      FROM listings f CROSS JOIN listing_text l ON l.rid = f.rid ${join} f.id = @id`)
        .raw(),
    ),
    city: cityNames(db),
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
    refOf: db.prepare('SELECT rid, property_type, price_eur FROM listings WHERE id = ?'),
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
type Row = Record<string, any>;

type SummaryRow = [rid: number, id: string, template: string, title: string, city_id: string];
type DetailRow = [
  ...SummaryRow,
  description: string | null,
  images: string | null,
  attributes: string | null,
  sources: string | null,
  lang: number,
];
/** The detail JSON: the summary plus description and the JSON columns as stored (already JSON text). */
function detailOf(st: Stmts, r: DetailRow, ctx: { lang: number; meta: { locale: string } }): string {
  const city = st.city(r[4], ctx.meta.locale);
  ctx.lang |= r[9] | city.lang;
  const s = fillSummary(r[2], JSON.stringify(r[3]), city.json);
  return `${s.slice(0, -1)},"description":${JSON.stringify(r[5])},"images":${r[6] ?? 'null'},"attributes":${r[7] ?? 'null'},"sources":${r[8] ?? 'null'}}`;
}

/** Validated query → planner filters; an unknown location_id matches nothing (it names no level). */
export function toFilters(st: Stmts, f: Filters): ListingFilters {
  const out: ListingFilters = {
    owner_id: f.owner_id,
    min_price: f.min_price,
    max_price: f.max_price,
    min_size: f.min_size,
    max_size: f.max_size,
    min_rooms: f.min_rooms,
    furnishing: f.furnishing,
    property_type: f.property_type,
  };
  if (f.q !== undefined) out.fts = ftsQuery(f.q);
  if (f.location_id !== undefined) {
    const type = st.locationType.get(f.location_id);
    out.location_column =
      type === 'province' ? 'province_id' : type === 'neighbourhood' ? 'neighbourhood_id' : 'city_id';
    out.location_id = f.location_id;
  }
  return out;
}

/**
 * A listing's summary JSON and its rid; its id (read for a page's cursor only) decoded when asked for; the
 * language bits of its title and city name.
 */
class PageRow {
  constructor(
    readonly rid: number,
    private readonly idJson: string,
    readonly json: string,
    readonly lang: number,
  ) {}
  get id(): string {
    return JSON.parse(this.idJson) as string;
  }
}

/** Summaries (rid, id and JSON) of the listings with these rids, in rid order (= id order). */
function rowsByRids(st: Stmts, rids: number[], locale: string): PageRow[] {
  if (!rids.length) return [];
  const page = forLocale(st.byRids, locale).get({ rids: JSON.stringify(rids), locale }) as string | null;
  if (page === null) return [];
  const rows = page.split(ROW_SEP).map((row) => {
    const v = row.split(SEP); // the summary's values, then title, city id, rid, language bits
    const n = v.length;
    return { rid: Number(v[n - 2]), v, n };
  });
  // The rows come in rid order from the IN list's index, but SQL does not promise it: check, sort if not.
  for (let i = 1; i < rows.length; i++)
    if (rows[i].rid < rows[i - 1].rid) {
      rows.sort((a, b) => a.rid - b.rid);
      break;
    }
  return rows.map(({ rid, v, n }) => {
    const city = st.city(v[n - 3], locale);
    return new PageRow(rid, v[0], fillValues(v, v[n - 4], city.json), Number(v[n - 1]) | city.lang);
  });
}

/**
 * The spec's similar rule: same city and property type, price within ±25 %, ranked by relative price
 * difference, then size difference, then id. Ranked in memory (../listings/similar.ts: the listings of each city
 * and type in price order, read outward from the reference price), so a call costs about what a detail costs at
 * every city size; then one statement for the summaries.
 */
function similar(st: Stmts, id: string, n: number, ctx: { lang: number; meta: { locale: string } }): string[] {
  const ref = st.refOf.get(id) as Row | undefined;
  if (!ref) throw notFound('listing');
  if (ref.price_eur === null || ref.property_type === null) return [];
  const ranked = st.planner.scan
    .similar()
    .rank(ref.rid - 1, n)
    .map((row) => row + 1);
  const byRid = new Map(rowsByRids(st, ranked, ctx.meta.locale).map((r) => [r.rid, r]));
  const out: string[] = [];
  for (const rid of ranked) {
    const r = byRid.get(rid);
    if (r === undefined) continue;
    out.push(r.json);
    ctx.lang |= r.lang;
  }
  return out;
}

export function stats(st: Stmts, f: Filters) {
  const filters = toFilters(st, f);
  const keys = Object.entries(filters)
    .filter(([, x]) => x !== undefined)
    .map(([k]) => k);
  // Precomputed at build time: no filter, one location (any level), or one property type, furnishing or owner.
  const onlyLocation = keys.every((k) => k === 'location_id' || k === 'location_column');
  const single =
    keys.length === 1 && ['property_type', 'furnishing', 'owner_id'].includes(keys[0])
      ? (keys[0] as 'property_type' | 'furnishing' | 'owner_id')
      : null;
  if (onlyLocation || single) {
    const scope = single
      ? `${single}:${filters[single]}`
      : filters.location_id === undefined
        ? ''
        : `location:${filters.location_id}`;
    const pre = st.precomputed.get(scope);
    if (pre) return pre;
    return { count: 0, min_price_eur: null, max_price_eur: null, average_price_eur: null, median_price_eur: null }; // a value no listing has
  }
  const s = st.planner.stats(filters);
  return {
    count: s.count,
    min_price_eur: s.min,
    max_price_eur: s.max,
    average_price_eur: s.average,
    median_price_eur: s.median,
  };
}

const LOCATION = J.object({
  city: J.str,
  street: J.str,
  number: J.str,
  postcode: J.str,
  latitude: J.num,
  longitude: J.num,
});
const SUMMARY_PROPS = {
  id: { type: 'string' },
  slug: J.str,
  title: J.str,
  price_eur: J.num,
  size_m2: J.num,
  rooms: J.num,
  furnishing: J.str,
  property_type: J.str,
  energy_label: J.str,
  owner_id: J.str,
  image_url: J.str,
  created_at: J.ts,
  updated_at: J.ts,
  location: LOCATION,
};
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

export const routes = (_deps: AppDeps) => [
  defineRoute<Filters & { limit: number; cursor?: string }>({
    path: '/v1/listings',
    tag: 'Listings',
    kind: 'collection',
    query: SearchQuery,
    item: LISTING_SUMMARY,
    summary: 'Search active, published rental listings',
    description:
      'Active, published rental listings, ordered by ascending id (not by date, price or relevance). Every filter given must hold. location_id may name a province, city or neighbourhood and covers everything inside it.',
    handle(ctx) {
      const st = ctx.snap.use(prepare);
      const filters = toFilters(st, ctx.query);
      const { rows, pagination } = pageRows(ctx, (afterId, n) => {
        const afterRid = afterId === null ? 0 : ((st.ridAtOrBefore.get(afterId) as number | undefined) ?? 0);
        return rowsByRids(st, st.planner.page(filters, afterRid, n), ctx.meta.locale);
      });
      const items: string[] = [];
      for (const r of rows) {
        items.push(r.json);
        ctx.lang |= r.lang;
      }
      return collectionJson(items, pagination, ctx.meta);
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
    tag: 'Listings',
    kind: 'detail',
    query: DetailQuery,
    item: LISTING_DETAIL,
    summary: 'One listing by id',
    description:
      'The search fields plus the description, the images, attributes and sources. An inactive or unpublished listing is a 404.',
    handle(ctx) {
      const st = ctx.snap.use(prepare);
      const row = forLocale(st.byId, ctx.meta.locale).get({ id: ctx.params.id, locale: ctx.meta.locale }) as
        | DetailRow
        | undefined;
      if (!row) throw notFound('listing');
      return detailJson(detailOf(st, row, ctx), ctx.meta);
    },
  }),
  defineRoute<v.InferOutput<typeof SimilarQuery>>({
    path: '/v1/listings/:id/similar',
    tag: 'Listings',
    kind: 'bounded',
    query: SimilarQuery,
    item: LISTING_SUMMARY,
    summary: 'Active listings like this one',
    description:
      'Same city and property type, price within 25 % of the reference, ranked by relative price difference, then size difference, then id. The reference itself is excluded. A reference without a price or property type has no similar listings (empty array).',
    handle: (ctx) => boundedJson(similar(ctx.snap.use(prepare), ctx.params.id, ctx.query.limit, ctx), ctx.meta),
  }),
];
export type { Ctx };
