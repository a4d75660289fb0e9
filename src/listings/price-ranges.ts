// Price statistics the column scan answers without visiting rows: a price range over the price order, one city
// and property type's group, and the totals over every listing.

import type { ListingFilters } from '../../snapshot-format/listing-filters.ts';
import { round2 } from '../../snapshot-format/price-stats.ts';
import { searchOrder } from './bits.ts';
import { accumulate, BUCKET_BITS, CHUNK, type Columns, type ScanStats } from './scan-loops.ts';
import type { Group, SimilarIndex } from './similar.ts';

const none = (count: number): ScanStats => ({ count, min: null, max: null, average: null, median: null });

/** Running sums of the prices in price order (8 bytes a priced listing), for priceRangeStats. */
export function pricePrefix(c: Columns): Float64Array {
  const prefix = new Float64Array(c.order.length + 1);
  for (let k = 0; k < c.order.length; k++) prefix[k + 1] = prefix[k] + c.price[c.order[k]];
  return prefix;
}

/**
 * Stats of a price range alone, without touching the rows: the matches are one run of the price order, found by
 * binary search; the sum comes from the prefix sums over the price order.
 */
export function priceRangeStats(c: Columns, lo: number, hi: number, prefix: Float64Array): ScanStats {
  const at = (pos: number) => c.price[c.order[pos]];
  const from = searchOrder(c.order, c.price, lo, false),
    to = searchOrder(c.order, c.price, hi, true); // [from, to)
  const n = to - from;
  if (n <= 0) return none(0);
  const mid = from + (n >> 1);
  return {
    count: n,
    min: at(from),
    max: at(to - 1),
    average: round2((prefix[to] - prefix[from]) / n),
    median: n % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2,
  };
}

/**
 * Stats of one city and property type's group (its priced listings in price order), within a price range or not:
 * two binary searches and the group's running price sums (made on first use), at every group size.
 */
export function groupStats(c: Columns, g: Group, min: number | undefined, max: number | undefined): ScanStats {
  const ranged = min !== undefined || max !== undefined;
  const from = ranged ? searchOrder(g.rows, c.price, min ?? -Infinity, false) : 0,
    to = ranged ? searchOrder(g.rows, c.price, max ?? Infinity, true) : g.rows.length; // [from, to)
  const n = Math.max(0, to - from);
  const count = n + (ranged ? 0 : g.unpriced); // a price bound excludes listings without a price
  if (n === 0) return none(count);
  if (!g.prefix) {
    g.prefix = new Float64Array(g.rows.length + 1);
    for (let k = 0; k < g.rows.length; k++) g.prefix[k + 1] = g.prefix[k] + c.price[g.rows[k]];
  }
  const at = (pos: number) => c.price[g.rows[pos]];
  const mid = from + (n >> 1);
  return {
    count,
    min: at(from),
    max: at(to - 1),
    average: round2((g.prefix[to] - g.prefix[from]) / n),
    median: n % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2,
  };
}

export interface Totals {
  priced: number;
  sum: number;
  buckets: Uint32Array;
}

/** Priced rows, their price sum and rank-bucket counts over all listings (once per snapshot). */
export function allTotals(c: Columns): Totals {
  const buckets = new Uint32Array((c.order.length >> BUCKET_BITS) + 1);
  const acc = new Float64Array(3);
  const cand = new Uint32Array(CHUNK);
  for (let start = 0; start < c.n; start += CHUNK) {
    const end = Math.min(c.n, start + CHUNK);
    for (let i = start; i < end; i++) cand[i - start] = i;
    accumulate(cand, end - start, c.rank, c.price, buckets, acc);
  }
  return { priced: acc[1], sum: acc[2], buckets };
}

/** The filters cityTypeStats answers. */
const CITY_TYPE_KEYS = new Set(['location_column', 'location_id', 'property_type', 'min_price', 'max_price']);

/**
 * Stats of one city and property type, within a price range or not, from the similar index's group (its priced
 * listings in price order): two binary searches and the group's running price sums, at every group size. null when
 * the filters are any other shape.
 */
export function cityTypeStats(
  f: ListingFilters,
  code: (column: string, value: string) => number,
  columns: () => Columns,
  similar: () => SimilarIndex,
): ScanStats | null {
  for (const k in f) {
    const v = f[k as keyof ListingFilters];
    if (v !== undefined && !CITY_TYPE_KEYS.has(k)) return null;
  }
  if (f.location_column !== 'city_id' || f.location_id === undefined || f.property_type === undefined) return null;
  const city = code('city_id', f.location_id),
    type = code('property_type', f.property_type);
  if (city < 0 || type < 0) return none(0);
  return groupStats(columns(), similar().group(city, type), f.min_price, f.max_price);
}
