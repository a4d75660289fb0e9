// Word-parallel row sets for listing stats: a bit per listing row, 32 rows in a Uint32 word, so that a
// condition over all 751k rows at 1M listings is ~23,500 word operations instead of 751k row tests.

export const wordCount = (n: number) => (n + 31) >>> 5;

/**
 * In positions [from, to) of `order` (rows sorted by value), the first whose value is >= x (> x when
 * `after`): the run of rows with a value in [lo, hi] is [search(lo, false), search(hi, true)).
 */
export function searchOrder(
  order: Uint32Array,
  values: Float64Array,
  x: number,
  after: boolean,
  from = 0,
  to = order.length,
): number {
  let a = from,
    b = to;
  while (a < b) {
    const m = (a + b) >>> 1;
    const v = values[order[m]];
    if (after ? v <= x : v < x) a = m + 1;
    else b = m;
  }
  return a;
}

/** Appends to `out` (as rids, row + 1) the set rows of `words` from row `from` on, below n, until it holds `limit`. */
export function firstSetRows(words: Uint32Array, n: number, from: number, limit: number, out: number[]): void {
  for (let w = from >>> 5; w < words.length && out.length < limit; w++) {
    let x = words[w];
    if (w === from >>> 5) x &= -1 << (from & 31); // rows before `from`
    while (x !== 0 && out.length < limit) {
      const t = x & -x;
      x ^= t;
      const i = (w << 5) + 31 - Math.clz32(t);
      if (i < n) out.push(i + 1);
    }
  }
}

/** Rows [0, n) of `words` (bit i of word w is row 32w + i), set bits only. */
export function popcount(words: Uint32Array, n: number): number {
  let total = 0;
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    let x = words[w];
    x = x - ((x >>> 1) & 0x55555555);
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    total += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  for (let i = full << 5; i < n; i++) total += (words[i >>> 5] >>> (i & 31)) & 1;
  return total;
}

/**
 * Cumulative bin bitmaps of one range column (price, size or rooms). The column's values are cut into
 * up to 32 bins at sampled quantiles; below[k] holds the rows whose bin is under k (never a row with no
 * value). A range is then a difference of two of them, plus a row test only in the (at most two) bins
 * the range cuts through: ~1/32 of the rows each. 33 bitmaps, ~3 MB a column at 751k listings.
 */
export class RangeBins {
  /** Bin k holds the values in [cuts[k - 1], cuts[k]) (from -Infinity for the first, to Infinity for the last). */
  private readonly cuts: Float64Array;
  private readonly below: Uint32Array[];
  /** The smallest and largest value in each bin (a bin wholly inside or outside a range needs no row test). */
  private readonly min: Float64Array;
  private readonly max: Float64Array;
  readonly bins: number;

  /**
   * `order`: the rows with a value sorted by value, when the snapshot has it (price): a bin that
   * straddles a bound is then a binary search within its run of the order instead of a test of each of
   * its rows, whose values are scattered over the column (a cache miss each: ~1 ms a bin at 751k).
   */
  constructor(
    private readonly values: Float64Array,
    n: number,
    private readonly order: Uint32Array | null = null,
    maxBins = 32,
  ) {
    const sample: number[] = [];
    const step = Math.max(1, Math.floor(n / 16384));
    for (let i = 0; i < n; i += step) if (!Number.isNaN(values[i])) sample.push(values[i]);
    sample.sort((a, b) => a - b);
    const distinct = sample.filter((x, j) => j === 0 || x !== sample[j - 1]);
    const cuts: number[] = [];
    if (distinct.length <= maxBins) {
      // Few values (rooms: 1-8): a cut at each, so a bound on one of them never cuts through a bin and
      // no row needs a test (min_rooms=6 tested the ~23k rows of a shared 5-8 bin: ~1 ms).
      cuts.push(...distinct);
    } else {
      for (let j = 1; j < maxBins; j++) {
        const x = sample[Math.floor((j * sample.length) / maxBins)];
        if (cuts.length === 0 || x > cuts[cuts.length - 1]) cuts.push(x);
      }
    }
    this.cuts = Float64Array.from(cuts);
    this.bins = cuts.length + 1;
    const W = wordCount(n);
    this.below = Array.from({ length: this.bins + 1 }, () => new Uint32Array(W));
    this.min = new Float64Array(this.bins).fill(Infinity);
    this.max = new Float64Array(this.bins).fill(-Infinity);
    // Each row's bit goes into below[bin + 1] first; a running OR then makes every below[k] cumulative.
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (Number.isNaN(v)) continue;
      const k = this.binOf(v);
      this.below[k + 1][i >>> 5] |= 1 << (i & 31);
      if (v < this.min[k]) this.min[k] = v;
      if (v > this.max[k]) this.max[k] = v;
    }
    for (let k = 1; k <= this.bins; k++) {
      const prev = this.below[k - 1],
        cur = this.below[k];
      for (let w = 0; w < W; w++) cur[w] |= prev[w];
    }
  }

  /** The number of cuts <= v: the bin of v. */
  private binOf(v: number): number {
    let a = 0,
      b = this.cuts.length;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (this.cuts[m] <= v) a = m + 1;
      else b = m;
    }
    return a;
  }
  /** out = the rows with lo <= value <= hi (a NaN value never matches). */
  select(lo: number, hi: number, out: Uint32Array): void {
    const W = out.length;
    // Bins are in value order. Whole bins: after the last bin holding a value below lo, and before the
    // first bin holding a value above hi (an empty bin, min +Infinity and max -Infinity, is neither).
    let first = 0,
      end = this.bins;
    for (let k = 0; k < this.bins; k++) if (this.min[k] < lo) first = k + 1;
    for (let k = this.bins - 1; k >= 0; k--) if (this.max[k] > hi) end = k;
    if (end > first) {
      const hiSet = this.below[end],
        loSet = this.below[first];
      for (let w = 0; w < W; w++) out[w] = hiSet[w] & ~loSet[w];
    } else out.fill(0);
    // At most two bins straddle a bound: bin first - 1 (values below lo) and bin end (values above hi).
    if (first > 0) this.partBin(first - 1, lo, hi, out);
    if (end < this.bins && end !== first - 1) this.partBin(end, lo, hi, out);
  }

  /** Adds to out the rows of bin k within [lo, hi]: all, none, or by a row test when the bin straddles a bound. */
  private partBin(k: number, lo: number, hi: number, out: Uint32Array): void {
    if (this.max[k] < lo || this.min[k] > hi) return;
    if (this.min[k] >= lo && this.max[k] <= hi) {
      const upTo = this.below[k + 1],
        under = this.below[k];
      for (let w = 0; w < out.length; w++) out[w] |= upTo[w] & ~under[w];
      return;
    }
    this.testBin(k, lo, hi, out);
  }

  private testBin(k: number, lo: number, hi: number, out: Uint32Array): void {
    const order = this.order,
      values = this.values;
    if (order) {
      // The bin's rows are one run of the order; its rows within [lo, hi] a sub-run of it.
      const from = searchOrder(order, values, this.min[k], false),
        to = searchOrder(order, values, this.max[k], true);
      const start = searchOrder(order, values, lo, false, from, to),
        end = searchOrder(order, values, hi, true, start, to);
      for (let pos = start; pos < end; pos++) {
        const i = order[pos];
        out[i >>> 5] |= 1 << (i & 31);
      }
      return;
    }
    const upTo = this.below[k + 1],
      under = this.below[k];
    for (let w = 0; w < out.length; w++) {
      let x = upTo[w] & ~under[w];
      while (x !== 0) {
        const t = x & -x;
        x ^= t;
        const i = (w << 5) + 31 - Math.clz32(t);
        const v = values[i];
        if (v >= lo && v <= hi) out[w] |= t;
      }
    }
  }
}

/** Rows whose code is `code`, as a bitmap (one pass over the column). */
export function eqBits(arr: Uint16Array | Uint32Array, code: number, n: number): Uint32Array {
  const out = new Uint32Array(wordCount(n));
  for (let i = 0; i < n; i++) out[i >>> 5] |= +(arr[i] === code) << (i & 31);
  return out;
}

/**
 * Adds to the stats every row of [0, n) whose bit equals 1 - side (side 0: the set rows, side 1: the
 * others): count, priced count, price sum and rank-bucket counts, a set bit at a time (lowest first:
 * isolate, count leading zeros, clear), faster than expanding each word into a row list first
 * (docs/performance.md).
 */
export function accumulateBits(
  words: Uint32Array,
  n: number,
  side: number,
  rank: Uint32Array,
  price: Float64Array,
  bucketBits: number,
  buckets: Uint32Array,
  acc: Float64Array,
): void {
  let count = 0,
    priced = 0,
    sum = 0;
  const W = wordCount(n);
  const flip = side ? -1 : 0;
  for (let w = 0; w < W; w++) {
    let x = words[w] ^ flip;
    if (w === W - 1 && (n & 31) !== 0) x &= (1 << (n & 31)) - 1; // no rows past n
    while (x !== 0) {
      const t = x & -x;
      x ^= t;
      const i = (w << 5) + 31 - Math.clz32(t);
      count++;
      const r = rank[i];
      if (r !== 0xffffffff) {
        priced++;
        sum += price[i];
        buckets[r >>> bucketBits]++;
      }
    }
  }
  acc[0] += count;
  acc[1] += priced;
  acc[2] += sum;
}
