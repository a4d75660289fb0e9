// The listing filters' SQL: one clause per filter, the (value, rid) index of each filter column, the page and
// match statements per driver, and the plan expectations the compiler checks and the server's planner relies on.
import type { Database } from 'better-sqlite3';

/** Validated listing filters, as the route passes them (absent = not filtered). */
export interface ListingFilters {
  fts?: { expr: string; terms: string[] };
  location_column?: 'province_id' | 'city_id' | 'neighbourhood_id';
  location_id?: string;
  owner_id?: string;
  min_price?: number;
  max_price?: number;
  min_size?: number;
  max_size?: number;
  min_rooms?: number;
  furnishing?: string;
  property_type?: string;
}

export type EqKey = 'location_id' | 'owner_id' | 'furnishing' | 'property_type';
export type RangeCol = 'price_eur' | 'size_m2' | 'rooms';
/**
 * The share of listings from which a search term gets a precomputed bitmap (listing_term_bitmaps, written by
 * build-snapshot/derive.ts). Any other term has a short FTS document list (under 0.5 %: ~3,700 rows at 751k),
 * cheap enough to read once and keep (the column scan's list of a term's rows). At 5 %, a term in 37,000
 * listings cost the scan ~5 ms.
 */
export const BITMAP_MIN_SHARE = 0.005;

export const EQ_KEYS: EqKey[] = ['location_id', 'owner_id', 'property_type', 'furnishing'];
export const RANGES: { col: RangeCol; min?: keyof ListingFilters; max?: keyof ListingFilters }[] = [
  { col: 'price_eur', min: 'min_price', max: 'max_price' },
  { col: 'size_m2', min: 'min_size', max: 'max_size' },
  { col: 'rooms', min: 'min_rooms' },
];
/** The (value, rid) index of each filter column: the planner's drivers, and the compiler's column store (derive.ts). */
export const INDEX_OF: Record<string, string> = {
  city_id: 'listings_city',
  province_id: 'listings_province',
  neighbourhood_id: 'listings_neighbourhood',
  owner_id: 'listings_owner',
  property_type: 'listings_property_type',
  furnishing: 'listings_furnishing',
  price_eur: 'listings_price',
  size_m2: 'listings_size',
  rooms: 'listings_rooms',
};

/** How rows are found: walk an (equality column, rid) index or FTS in id order, scan a range and sort, or walk rowids. */
export type Driver =
  | { kind: 'rowid' }
  | { kind: 'eq'; col: string }
  | { kind: 'fts' }
  | { kind: 'range'; col: RangeCol }
  | { kind: 'city_type' };

export const eqColumn = (k: EqKey, f: ListingFilters) => (k === 'location_id' ? f.location_column! : k);

/** The SQL conditions of a filter set, the fts one phrased for a driver that is not FTS itself. */
function conditions(f: ListingFilters, driver: Driver): string[] {
  const out: string[] = [];
  if (f.fts && driver.kind !== 'fts')
    out.push('EXISTS (SELECT 1 FROM listings_fts x WHERE listings_fts MATCH @fts AND x.rowid = l.rid)');
  for (const k of EQ_KEYS) if (f[k] !== undefined) out.push(`l.${eqColumn(k, f)} = @${k}`);
  for (const r of RANGES) {
    if (r.min && f[r.min] !== undefined) out.push(`l.${r.col} >= @${r.min}`);
    if (r.max && f[r.max] !== undefined) out.push(`l.${r.col} <= @${r.max}`);
  }
  return out;
}

export function params(f: ListingFilters): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f))
    if (v !== undefined && k !== 'location_column') p[k] = k === 'fts' ? (v as { expr: string }).expr : v;
  return p;
}

function source(driver: Driver): string {
  switch (driver.kind) {
    case 'city_type':
      return 'listings l INDEXED BY listings_city_type_price';
    case 'fts':
      return 'listings_fts f CROSS JOIN listings l ON l.rid = f.rowid';
    case 'rowid':
      return 'listings l NOT INDEXED';
    default:
      return `listings l INDEXED BY ${INDEX_OF[driver.col]}`;
  }
}

/**
 * The page statement. `limit` is written into the SQL when given: a bound LIMIT made the same
 * index walk 2-3 times slower (5-8 µs → 12-21 µs for a page of 21 rids, measured on the 1M snapshot).
 */
export function pageSql(f: ListingFilters, driver: Driver, limit?: number): string {
  const rid = driver.kind === 'fts' ? 'f.rowid' : 'l.rid';
  const where = [
    ...(driver.kind === 'fts' ? ['listings_fts MATCH @fts'] : []),
    ...conditions(f, driver),
    `${rid} > @after`,
  ];
  return `SELECT ${rid} AS rid FROM ${source(driver)} WHERE ${where.join(' AND ')} ORDER BY ${rid} LIMIT ${limit === undefined ? '@limit' : Math.trunc(limit)}`;
}
export function matchSql(f: ListingFilters, driver: Driver): string {
  const where = [...(driver.kind === 'fts' ? ['listings_fts MATCH @fts'] : []), ...conditions(f, driver)];
  return `SELECT l.price_eur FROM ${source(driver)}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
}

/** True when the plan reads the listings table in rowid order with no index narrowing it. */
export function planHasFullScan(plan: string[]): boolean {
  return plan.some((d) => /^SCAN l\b/.test(d) || /^SEARCH l USING INTEGER PRIMARY KEY \(rowid>\?\)$/.test(d));
}

/** Representative single-filter shapes checked at build time and in tests (values that match nothing). */
export const HOT_QUERY_SAMPLES: Record<string, ListingFilters> = {
  'q alone': { fts: { expr: '"zzzunknownword"', terms: ['zzzunknownword'] } },
  city: { location_column: 'city_id', location_id: 'x' },
  province: { location_column: 'province_id', location_id: 'x' },
  neighbourhood: { location_column: 'neighbourhood_id', location_id: 'x' },
  owner: { owner_id: 'x' },
  min_price: { min_price: 9_000_000 },
  max_price: { max_price: 0 },
  min_size: { min_size: 9_000_000 },
  max_size: { max_size: 0 },
  min_rooms: { min_rooms: 100 },
  furnishing: { furnishing: 'x' },
  property_type: { property_type: 'x' },
};

/** The index that serves a single-filter set on its own (q through FTS, a column through its (value, rid) index). */
export function indexDriver(f: ListingFilters): Driver {
  if (f.fts) return { kind: 'fts' };
  for (const k of EQ_KEYS) if (f[k] !== undefined) return { kind: 'eq', col: eqColumn(k, f) };
  for (const r of RANGES)
    if ((r.min && f[r.min] !== undefined) || (r.max && f[r.max] !== undefined)) return { kind: 'range', col: r.col };
  return { kind: 'rowid' };
}

/** EXPLAIN QUERY PLAN detail lines of the page statement of a filter set through a driver. */
export function explainPage(db: Database, f: ListingFilters, driver: Driver, limit = 21): string[] {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${pageSql(f, driver)}`).all({ ...params(f), after: 0, limit }) as {
    detail: string;
  }[];
  return rows.map((r) => r.detail);
}
