// The planner's numbers and small pure pieces: relative access costs, cache and scan thresholds, a filter set's shape.
import { EQ_FILTERS, RANGE_FILTERS, ROW_CHECKED } from '../../snapshot-format/listing-filters.ts';
import type { Driver, ListingFilters } from '../../snapshot-format/listing-sql.ts';
import { statsOf } from '../../snapshot-format/price-stats.ts';
import type { PrimaryHint, ScanStats } from './scan.ts';

/**
 * Relative cost of reading one row by each access path, and of checking q on a row that FTS did not
 * produce (an FTS lookup per row), of each document FTS reads to intersect several terms, and of each
 * document of a term FTS steps over to reach a cursor's position (its document lists have no index to
 * seek a rowid in). The ratios are measured on the 1M snapshot (npm run bench:queries; the figures are
 * in docs/performance.md): a residual q check costs about as much as reading 20 rows.
 */
export const COST = {
  row: 1,
  ftsRow: 1.5,
  ftsCheck: 20,
  sortRow: 0.2,
  ftsMergeDoc: 0.005,
  ftsSkipDoc: 0.014,
};

/** What checking the present row-checked filters (their table entries' checkCost) adds to each row an index reads. */
export function rowCheckCost(f: ListingFilters): number {
  return ROW_CHECKED.reduce((sum, e) => sum + (f[e.key] !== undefined ? e.checkCost : 0), 0);
}

/** The column scan's primary condition for a driver: its filter (an equality's key, a range's name, q). */
export function hintOf(d: Driver): PrimaryHint {
  switch (d.kind) {
    case 'fts':
      return 'fts';
    case 'eq':
      return EQ_FILTERS.find((e) => d.col in e.columns)!.key;
    case 'range':
      return RANGE_FILTERS.find((r) => r.column === d.col)!.name;
    case 'near':
      return 'near';
    default:
      return null;
  }
}

/**
 * Prepared statements kept per snapshot. Shapes × drivers × page sizes is large (an adversary can
 * ask for many), so the least recently used are dropped; a dropped shape is prepared again.
 */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * Below this many row-units an index plan is always used; above it, the column scan when cheaper.
 * 600 units bound an index plan's time even when the estimate is off (correlated filters); the
 * figures are in docs/performance.md (npm run bench:queries).
 */
export const SCAN_MIN_UNITS = 600;
/** One scan page costs about as much as reading this many rows per listing through an index (~3-4 ms at 751k). */
export const SCAN_UNITS_PER_LISTING = 0.0007;

export function statsFromPrices(all: (number | null)[]): ScanStats {
  const prices = new Float64Array(all.length);
  let k = 0;
  for (const x of all) if (x !== null) prices[k++] = x;
  const [min, max, average, median] = statsOf(prices.subarray(0, k));
  return { count: all.length, min, max, average, median };
}

/** The shape of a filter set: which filters are present (values excluded). */
export function shapeKey(f: ListingFilters): string {
  return Object.keys(f)
    .filter((k) => f[k as keyof ListingFilters] !== undefined)
    .map((k) => (k === 'location_id' ? `location_id:${f.location_column}` : k))
    .sort()
    .join(',');
}
