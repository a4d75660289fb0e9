// Everything precomputed about listing prices and filter values, from the column store (no per-value arrays,
// nothing collected while loading): listing_stats, listing_value_counts and listing_quantiles.
import type { Database } from 'better-sqlite3';
import { FLOAT_COLUMNS, VALUE_STATS_COLUMNS } from '../snapshot-format/listing-filters.ts';
import { round2 } from '../snapshot-format/price-stats.ts';
import type { ColumnStore } from './column-store.ts';

/** Quantiles kept per range filter column for the planner's estimates. */
export const QUANTILES = 1024;

/**
 * - statistics for all listings (scope '') and for every value of the single-filter columns (scopeStats);
 * - the planner's statistics: listings per value of each equality filter (and per city + property
 *   type), and quantiles of each range filter.
 */
export function deriveListingStats(db: Database, store: ColumnStore) {
  const insert = db.prepare(
    'INSERT INTO listing_stats (scope, count, min_price_eur, max_price_eur, average_price_eur, median_price_eur) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const vc = db.prepare('INSERT INTO listing_value_counts (column, value, n) VALUES (?, ?, ?)');
  const all = new Uint8Array(store.n).fill(1); // the '' scope: every listing has code 1 of a one-value column
  for (const [col, prefix] of [['', ''], ...VALUE_STATS_COLUMNS] as [string, string][]) {
    const code = col === '' ? all : store.codes[col];
    const dict = col === '' ? new Map([['', 1]]) : store.dicts.get(col)!;
    const s = scopeStats(code, dict.size + 1, store.floats.price_eur, store.orders.price_eur);
    for (const [value, c] of dict) {
      const has = s.priced[c] > 0;
      const scope = col === '' ? '' : `${prefix}:${value}`;
      insert.run(
        scope,
        s.count[c],
        has ? s.min[c] : null,
        has ? s.max[c] : null,
        has ? round2(s.sum[c] / s.priced[c]) : null,
        has ? (s.priced[c] % 2 ? s.hi[c] : (s.lo[c] + s.hi[c]) / 2) : null,
      );
      if (col !== '') vc.run(col, value, s.count[c]);
    }
  }
  deriveCityTypeCounts(store, vc);
  deriveQuantiles(db, store);
}

/**
 * Per code of one column: one pass over all rows counts (and sums) per code, one pass over the price order
 * picks each code's min, max and middle prices as the running count per code reaches them.
 */
function scopeStats(code: ArrayLike<number>, size: number, price: Float64Array, order: Uint32Array) {
  const count = new Float64Array(size),
    priced = new Float64Array(size),
    sum = new Float64Array(size);
  for (let i = 0; i < price.length; i++) {
    const c = code[i];
    if (c === 0) continue;
    count[c]++;
    if (!Number.isNaN(price[i])) {
      priced[c]++;
      sum[c] += price[i];
    }
  }
  const seen = new Float64Array(size),
    min = new Float64Array(size).fill(NaN),
    max = new Float64Array(size),
    lo = new Float64Array(size),
    hi = new Float64Array(size);
  for (let pos = 0; pos < order.length; pos++) {
    const i = order[pos],
      c = code[i];
    if (c === 0) continue;
    const k = seen[c]++;
    const p = price[i];
    if (k === 0) min[c] = p;
    if (k === priced[c] - 1) max[c] = p;
    if (k === Math.floor((priced[c] - 1) / 2)) lo[c] = p;
    if (k === Math.floor(priced[c] / 2)) hi[c] = p;
  }
  return { count, priced, sum, min, max, lo, hi };
}

/** City and property type together (the similar-listings and city + type index): 'city\u0001type'. */
function deriveCityTypeCounts(
  { n, codes, dicts }: ColumnStore,
  vc: { run: (column: string, value: string, n: number) => unknown },
) {
  const city = codes.city_id,
    type = codes.property_type;
  const pairs = new Map<number, number>();
  for (let i = 0; i < n; i++)
    if (type[i] !== 0) {
      const k = city[i] * 65536 + type[i];
      pairs.set(k, (pairs.get(k) ?? 0) + 1);
    }
  const name = (col: string) => {
    const byCode = new Map<number, string>();
    for (const [v, c] of dicts.get(col)!) byCode.set(c, v);
    return byCode;
  };
  const cities = name('city_id'),
    types = name('property_type');
  for (const [k, count] of pairs)
    vc.run('city_type', `${cities.get(Math.floor(k / 65536))}\u0001${types.get(k % 65536)}`, count);
}

/** QUANTILES + 1 evenly spaced values of each range filter column (the planner's range estimates). */
function deriveQuantiles(db: Database, { floats, orders }: ColumnStore) {
  const q = db.prepare('INSERT INTO listing_quantiles (column, k, value, nonnull) VALUES (?, ?, ?, ?)');
  for (const col of FLOAT_COLUMNS) {
    const sorted = Float64Array.from(orders[col], (i) => floats[col][i]); // the values in order (readColumnStore)
    if (sorted.length === 0) continue;
    for (let k = 0; k <= QUANTILES; k++)
      q.run(
        col,
        k,
        sorted[Math.min(sorted.length - 1, Math.floor((k * (sorted.length - 1)) / QUANTILES))],
        sorted.length,
      );
  }
}
