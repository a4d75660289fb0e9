// The near filter's cells by price: per cell of GeoCells, its listings' count, price sum, sorted price ranks and a
// cumulative histogram of those ranks, for every listing and for each value of a CELL_COLUMNS filter; built when the
// snapshot is prepared, read by near-stats.ts.
import type { Columns, GeoCells } from './scan-loops.ts';

const NONE = 0xffffffff;
/** Price-rank buckets of the histograms, at most (the bucket is a power-of-two slice of the price order). */
const MAX_BUCKETS = 64;
/** The equality filters whose values have cells of their own (a few values each: 6 and 3 at 1M). */
export const CELL_COLUMNS = ['property_type', 'furnishing'] as const;
export type CellColumn = (typeof CELL_COLUMNS)[number];

/** One set of listings by cell (in GeoCells' order): all of them, or those with one value of a CELL_COLUMNS column. */
export interface CellSet {
  /** Listings per cell. */
  count: Uint32Array;
  /** Price sum per cell. */
  sum: Float64Array;
  /** Cell k's priced listings' price ranks are ranks[rankStart[k]..rankStart[k + 1]), ascending. */
  rankStart: Uint32Array;
  ranks: Uint32Array;
  /** before[k * buckets + b]: priced listings of the cells before k whose rank is in bucket b (rank >>> shift). */
  before: Uint32Array;
}

/** The cells' sets: every listing, and per CELL_COLUMNS column one set per value code (index 0: no value). */
export interface CellPrices {
  shift: number;
  buckets: number;
  all: CellSet;
  byValue: Record<CellColumn, CellSet[]>;
}

/**
 * Builds the cells' sets when the snapshot is prepared (see docs/performance.md for the time and memory at 1M): one
 * pass over the cells gathers each priced listing's rank and values as one sortable key, a sort per cell orders them
 * by rank, and one pass over the keys fills every set.
 */
export function cellPrices(c: Columns, g: GeoCells): CellPrices {
  let shift = 0;
  while (c.order.length >>> shift >= MAX_BUCKETS) shift++;
  const buckets = (Math.max(0, c.order.length - 1) >>> shift) + 1;
  const cells = g.lat.length;
  /** A set (none: the empty set of code 0, which no filter names); its ranks are sized once gathered. */
  const newSet = (none: boolean): CellSet => ({
    count: new Uint32Array(none ? 0 : cells),
    sum: new Float64Array(none ? 0 : cells),
    rankStart: new Uint32Array(none ? 0 : cells + 1),
    ranks: new Uint32Array(0),
    before: new Uint32Array(none ? 0 : (cells + 1) * buckets),
  });
  const cols = CELL_COLUMNS.map((col) => c[col]);
  const codes = cols.map((arr) => arr.reduce((m, v) => Math.max(m, v + 1), 1));
  const all = newSet(false);
  // Code 0 (no value) has no set: a filter always names a value.
  const sets = codes.map((n) => Array.from({ length: n }, (_, v) => newSet(v === 0)));
  const gathered = gather(c, g, cols, codes, all, sets);
  all.ranks = new Uint32Array(gathered.keyStart[cells]);
  for (const byCode of sets) for (const s of byCode.slice(1)) s.ranks = new Uint32Array(s.rankStart[cells]);
  fill(gathered, codes, { shift, buckets, all, sets });
  const byValue = Object.fromEntries(CELL_COLUMNS.map((col, ci) => [col, sets[ci]])) as Record<CellColumn, CellSet[]>;
  return { shift, buckets, all, byValue };
}

/**
 * Per cell, its priced listings' keys (rank × the values' combinations + the values, mixed radix), sorted; counts
 * each set's listings and price sum per cell and its priced listings (in rankStart's last place, for sizing).
 */
function gather(
  c: Columns,
  g: GeoCells,
  cols: (Uint16Array | Uint32Array)[],
  codes: number[],
  all: CellSet,
  sets: CellSet[][],
): { keys: Float64Array; keyStart: Uint32Array; M: number } {
  const M = codes.reduce((m, n) => m * n, 1);
  const cells = g.lat.length;
  const keys = new Float64Array(g.order.length),
    keyStart = new Uint32Array(cells + 1);
  for (let k = 0; k < cells; k++) {
    let at = keyStart[k];
    for (let j = g.start[k]; j < g.start[k + 1]; j++) {
      const i = g.order[j];
      const priced = c.rank[i] !== NONE,
        price = priced ? c.price[i] : 0;
      all.count[k]++;
      all.sum[k] += price;
      let packed = 0;
      for (let ci = cols.length - 1; ci >= 0; ci--) {
        const v = cols[ci][i];
        packed = packed * codes[ci] + v;
        if (v === 0) continue;
        const s = sets[ci][v];
        s.count[k]++;
        s.sum[k] += price;
        if (priced) s.rankStart[cells]++;
      }
      if (priced) keys[at++] = c.rank[i] * M + packed;
    }
    keys.subarray(keyStart[k], at).sort();
    keyStart[k + 1] = at;
  }
  return { keys, keyStart, M };
}

/** Fills the sets' ranks and cumulative histograms from the sorted keys, a cell at a time. */
function fill(
  gathered: ReturnType<typeof gather>,
  codes: number[],
  out: { shift: number; buckets: number; all: CellSet; sets: CellSet[][] },
): void {
  const { keys, keyStart, M } = gathered;
  const { shift, buckets: B, all, sets } = out;
  const named = [all, ...sets.flatMap((byCode) => byCode.slice(1))];
  const filled = sets.map((byCode) => new Uint32Array(byCode.length));
  let filledAll = 0;
  const cells = keyStart.length - 1;
  for (let k = 0; k < cells; k++) {
    for (const s of named) s.before.copyWithin((k + 1) * B, k * B, (k + 1) * B);
    for (let q = keyStart[k]; q < keyStart[k + 1]; q++) {
      const r = Math.floor(keys[q] / M);
      let packed = keys[q] - r * M;
      const b = (k + 1) * B + (r >>> shift);
      all.ranks[filledAll++] = r;
      all.before[b]++;
      for (let ci = 0; ci < codes.length; ci++) {
        const v = packed % codes[ci];
        packed = (packed - v) / codes[ci];
        if (v === 0) continue;
        const s = sets[ci][v];
        s.ranks[filled[ci][v]++] = r;
        s.before[b]++;
      }
    }
    all.rankStart[k + 1] = filledAll;
    for (let ci = 0; ci < codes.length; ci++)
      for (let v = 1; v < codes[ci]; v++) sets[ci][v].rankStart[k + 1] = filled[ci][v];
  }
}
