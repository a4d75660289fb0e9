// The groups of the similar rule: per (city, property type), the priced listings sorted by (price, size, row).

/** The column store's arrays this needs (see scan.ts): row = rid - 1; NaN where a price or size is null, code 0. */
export interface SimilarColumns {
  n: number;
  price: Float64Array;
  size: Float64Array;
  city_id: Uint16Array;
  property_type: Uint16Array;
}

/** One city and property type: its priced listings in (price, size, row) order, and how many have no price. */
export interface Group {
  rows: Uint32Array<ArrayBuffer>;
  unpriced: number;
  /** Running sums of the prices in `rows` order (made by the first statistics over the group). */
  prefix?: Float64Array;
}

/** The priced rows of every group, group after group in row order, and where each group's are (and its unpriced count). */
export interface Partition {
  rows: Uint32Array<ArrayBuffer>;
  bounds: Map<number, [start: number, end: number, unpriced: number]>;
}
/** The largest (city codes × type codes) table partitionByGroup counts in; beyond it each group is found by a scan. */
const MAX_PAIRS = 1 << 22;

/**
 * Every row's (city, type) group in one counting pass and one placing pass over the columns: a group's rows are
 * then a slice to sort, instead of two passes over all the columns per group (192 groups at 1M listings: ~1 s of
 * CPU spread over the first requests of each). Null when the codes are too many for a counting table.
 */
export function partitionByGroup(c: SimilarColumns): Partition | null {
  let cities = 0,
    types = 0;
  for (let r = 0; r < c.n; r++) {
    if (c.city_id[r] >= cities) cities = c.city_id[r] + 1;
    if (c.property_type[r] >= types) types = c.property_type[r] + 1;
  }
  if (cities * types > MAX_PAIRS) return null;
  const priced = new Uint32Array(cities * types),
    unpriced = new Uint32Array(cities * types);
  for (let r = 0; r < c.n; r++) {
    const pair = c.city_id[r] * types + c.property_type[r];
    if (Number.isNaN(c.price[r])) unpriced[pair]++;
    else priced[pair]++;
  }
  const bounds: Partition['bounds'] = new Map();
  const next = new Uint32Array(cities * types);
  let total = 0;
  for (let pair = 0; pair < priced.length; pair++) {
    next[pair] = total;
    if (priced[pair] + unpriced[pair] > 0) {
      const key = Math.floor(pair / types) * 65536 + (pair % types);
      bounds.set(key, [total, total + priced[pair], unpriced[pair]]);
    }
    total += priced[pair];
  }
  const rows = new Uint32Array(total);
  for (let r = 0; r < c.n; r++)
    if (!Number.isNaN(c.price[r])) rows[next[c.city_id[r] * types + c.property_type[r]]++] = r;
  return { rows, bounds };
}

/** One group by a scan of the columns (when partitionByGroup cannot count the pairs). */
export function sortedGroup(c: SimilarColumns, city: number, type: number): Group {
  let m = 0,
    unpriced = 0;
  for (let r = 0; r < c.n; r++)
    if (c.city_id[r] === city && c.property_type[r] === type) {
      if (Number.isNaN(c.price[r])) unpriced++;
      else m++;
    }
  const rows = new Uint32Array(m);
  for (let r = 0, k = 0; r < c.n; r++)
    if (c.city_id[r] === city && c.property_type[r] === type && !Number.isNaN(c.price[r])) rows[k++] = r;
  return { rows: sortRows(c, rows), unpriced };
}

/**
 * A group's priced rows (in row order) sorted in place into (price, size with unknown last, row) order: a native
 * sort of one number per listing made of its price's rank, its size's rank and its row (exact below 2^53; a
 * comparator sort otherwise).
 */
export function sortRows(c: SimilarColumns, rows: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const m = rows.length;
  // Working space shared by every build (no garbage per group): sorted prices, sorted sizes, sort keys.
  if (scratch.length < 3 * m) scratch = new Float64Array(3 * m);
  const prices = scratch.subarray(0, m),
    sizes = scratch.subarray(m, 2 * m),
    keys = scratch.subarray(2 * m, 3 * m);
  for (let i = 0; i < m; i++) {
    prices[i] = c.price[rows[i]];
    sizes[i] = c.size[rows[i]]; // unknown sizes (NaN) sort last
  }
  const distinctPrices = distinct(prices.sort());
  const distinctSizes = distinct(sizes.sort());
  const slots = distinctSizes.length + 1; // the last: unknown
  if (distinctPrices.length * slots * c.n >= 2 ** 53) {
    const sizeKey = (r: number) => (Number.isNaN(c.size[r]) ? Infinity : c.size[r]);
    return rows.sort((x, y) => c.price[x] - c.price[y] || sizeKey(x) - sizeKey(y) || x - y);
  }
  for (let i = 0; i < m; i++) {
    const size = c.size[rows[i]];
    const sizeRank = Number.isNaN(size) ? slots - 1 : lowerBound(distinctSizes, size);
    keys[i] = (lowerBound(distinctPrices, c.price[rows[i]]) * slots + sizeRank) * c.n + rows[i];
  }
  keys.sort();
  for (let i = 0; i < m; i++) rows[i] = keys[i] % c.n;
  return rows;
}
let scratch = new Float64Array(0);

/** The distinct values of an ascending array, unknown (NaN, sorted last) left out. */
function distinct(sorted: Float64Array): Float64Array {
  let k = 0;
  for (let i = 0; i < sorted.length && !Number.isNaN(sorted[i]); i++)
    if (k === 0 || sorted[i] !== sorted[k - 1]) sorted[k++] = sorted[i];
  return sorted.subarray(0, k);
}

/** First index of `sorted` whose value is >= v. */
function lowerBound(sorted: Float64Array, v: number): number {
  let a = 0,
    b = sorted.length;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (sorted[mid] < v) a = mid + 1;
    else b = mid;
  }
  return a;
}
