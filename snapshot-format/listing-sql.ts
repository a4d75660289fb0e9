// The listing filters' SQL: one clause per filter, the (value, rid) index of each filter column, the page and
// match statements per driver, and the plan expectations the compiler checks and the server's planner relies on.
import type { Database } from 'better-sqlite3';
import { NEAR_FUNCTION } from './geo.ts';
import {
  boundsOf,
  EQ_FILTERS,
  type EqColumn,
  eqColumn,
  INDEX_OF,
  type ListingFilters,
  RANGE_FILTERS,
  type RangeCol,
} from './listing-filters.ts';

export type { ListingFilters, RangeCol };

/**
 * The share of listings from which a search term gets a precomputed bitmap (listing_term_bitmaps, written by
 * build-snapshot/derive.ts). Any other term has a short FTS document list (under 0.5 %: ~3,700 rows at 751k),
 * cheap enough to read once and keep (the column scan's list of a term's rows). At 5 %, a term in 37,000
 * listings cost the scan ~5 ms.
 */
export const BITMAP_MIN_SHARE = 0.005;

/** How rows are found: walk an (equality column, rid) index or FTS in id order, scan a range and sort, or walk rowids. */
export type Driver =
  | { kind: 'rowid' }
  | { kind: 'eq'; col: EqColumn }
  | { kind: 'fts' }
  | { kind: 'range'; col: RangeCol }
  | { kind: 'city_type' }
  /** Not an index: the near filter's estimate, which only the column scan can drive (see NEAR_FILTER). */
  | { kind: 'near' };

/** The SQL conditions of a filter set, the fts one phrased for a driver that is not FTS itself. */
function conditions(f: ListingFilters, driver: Driver): string[] {
  const out: string[] = [];
  if (f.fts && driver.kind !== 'fts')
    out.push('EXISTS (SELECT 1 FROM listings_fts x WHERE listings_fts MATCH @fts AND x.rowid = l.rid)');
  for (const e of EQ_FILTERS) if (f[e.key] !== undefined) out.push(`l.${eqColumn(e.key, f)} = @${e.key}`);
  for (const r of RANGE_FILTERS) {
    if (f[r.min] !== undefined) out.push(`l.${r.column} >= @${r.min}`);
    if ('max' in r && f[r.max] !== undefined) out.push(`l.${r.column} <= @${r.max}`);
  }
  if (f.near) out.push(`${NEAR_FUNCTION}(l.rid, @near_lat, @near_lon, @near_km)`);
  return out;
}

export function params(f: ListingFilters): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f))
    if (v !== undefined && k !== 'location_column' && k !== 'near')
      p[k] = k === 'fts' ? (v as { expr: string }).expr : v;
  if (f.near) {
    p.near_lat = f.near.lat;
    p.near_lon = f.near.lon;
    p.near_km = f.near.km;
  }
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
    case 'near':
      throw new Error('the near filter drives no index plan');
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

/** Representative single-filter shapes checked at build time and in tests (values that match nothing), one per column. */
export const HOT_QUERY_SAMPLES: Record<string, ListingFilters> = Object.fromEntries([
  ['q alone', { fts: { expr: '"zzzunknownword"', terms: ['zzzunknownword'] } }],
  ...EQ_FILTERS.flatMap((e) =>
    Object.keys(e.columns).map((col) => [
      col.replace(/_id$/, ''),
      e.key === 'location_id' ? { location_column: col, location_id: 'x' } : { [e.key]: 'x' },
    ]),
  ),
  ...RANGE_FILTERS.flatMap((r) => [[r.min, { [r.min]: 9_000_000 }], ...('max' in r ? [[r.max, { [r.max]: 0 }]] : [])]),
]);

/** The index that serves a single-filter set on its own (q through FTS, a column through its (value, rid) index). */
export function indexDriver(f: ListingFilters): Driver {
  if (f.fts) return { kind: 'fts' };
  for (const e of EQ_FILTERS) if (f[e.key] !== undefined) return { kind: 'eq', col: eqColumn(e.key, f) };
  for (const r of RANGE_FILTERS) if (boundsOf(r, f)) return { kind: 'range', col: r.column };
  return { kind: 'rowid' };
}

/** EXPLAIN QUERY PLAN detail lines of the page statement of a filter set through a driver. */
export function explainPage(db: Database, f: ListingFilters, driver: Driver, limit = 21): string[] {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${pageSql(f, driver)}`).all({ ...params(f), after: 0, limit }) as {
    detail: string;
  }[];
  return rows.map((r) => r.detail);
}
