// Stats of near from the cells, alone or with one value of a CELL_COLUMNS filter: a cell wholly inside the circle adds
// its counts and price sum without reading its listings, and its price-rank histogram (prefix sums in cell order, so
// a run of inside cells costs one subtraction per bucket); only the cells the circle's edge crosses are read listing
// by listing. The median (and min, max) is found in the histogram's bucket, then among that bucket's ranks alone.

import { unitVector } from '../../snapshot-format/geo.ts';
import { EQ_FILTERS, type ListingFilters, NEAR_FILTER } from '../../snapshot-format/listing-filters.ts';
import { round2 } from '../../snapshot-format/price-stats.ts';
import { eachRun, type NearCond } from './near-rows.ts';
import type { Pred } from './scan-compile.ts';
import type { Columns, GeoCells, ScanStats } from './scan-loops.ts';

const NONE = 0xffffffff;
/**
 * A corner must be inside by this much of the dot product for its cell to count as inside: 1e-9 of cos r is an
 * angle of 1e-9 / sin r, about 20 m at 2 km and 0.8 m at 50 km, far more than the rounding of the dot product.
 */
const INSIDE_MARGIN = 1e-9;
/** Price-rank buckets of the histograms, at most (the bucket is a power-of-two slice of the price order). */
const MAX_BUCKETS = 64;
/** The equality filters whose values have cells of their own (a few values each: 6 and 3 at 1M). */
export const CELL_COLUMNS = ['property_type', 'furnishing'] as const;
type CellColumn = (typeof CELL_COLUMNS)[number];

/** One set of listings by cell (in GeoCells' order): all of them, or those with one value of a CELL_COLUMNS column. */
interface CellSet {
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

/** Whether every point of cell k is within the circle, by a margin: the farthest point of a cell is a corner. */
function inside(near: NearCond, g: GeoCells, k: number): boolean {
  const { x: cx, y: cy, z: cz, cos } = near.circle;
  const d = NEAR_FILTER.cellDegrees;
  for (const la of [g.lat[k] * d, (g.lat[k] + 1) * d])
    for (const lo of [g.lon[k] * d, (g.lon[k] + 1) * d]) {
      const [x, y, z] = unitVector(la, lo);
      if (!(x * cx + y * cy + z * cz >= cos + INSIDE_MARGIN)) return false;
    }
  return true;
}

/** The first position in a[from..to) holding a value >= v. */
function lowerBound(a: Uint32Array, v: number, from: number, to: number): number {
  while (from < to) {
    const m = (from + to) >>> 1;
    if (a[m] < v) from = m + 1;
    else to = m;
  }
  return from;
}

/**
 * The box's cells, split: runs [k0, k1) of cells wholly inside the circle (flat pairs), and the others (the edge).
 * null when the edge holds a quarter of the box's listings or more (a small circle): the circle's row set then reads
 * about as many listings and needs no histogram.
 */
function split(near: NearCond, g: GeoCells): { runs: number[]; edge: number[] } | null {
  const runs: number[] = [],
    edge: number[] = [];
  let edgeRows = 0,
    boxRows = 0;
  eachRun(near, g, (from, to, k0, k1) => {
    boxRows += to - from;
    for (let k = k0; k < k1; k++) {
      if (!inside(near, g, k)) {
        edge.push(k);
        edgeRows += g.start[k + 1] - g.start[k];
      } else if (runs.length > 0 && runs[runs.length - 1] === k) runs[runs.length - 1] = k + 1;
      else runs.push(k, k + 1);
    }
  });
  return edgeRows * 2 >= boxRows ? null : { runs, edge };
}

/** A CELL_COLUMNS filter's rows: its column and the value's code. */
export interface CellValue {
  arr: Uint16Array | Uint32Array;
  code: number;
}

/**
 * Which cell set answers these filters: near and at most one CELL_COLUMNS filter (its column), or null for any other
 * shape (the row sets answer those).
 */
export function cellScope(f: ListingFilters): CellColumn | 'all' | null {
  let scope: CellColumn | 'all' | null = f.near ? 'all' : null;
  for (const [k, v] of Object.entries(f)) {
    if (v === undefined || k === 'near') continue;
    if (scope !== 'all' || !(CELL_COLUMNS as readonly string[]).includes(k)) return null;
    scope = k as CellColumn;
  }
  return scope;
}

/**
 * count, min, max, average and median price of the listings of `set` (with `value`, when given) within the circle,
 * or null when the circle's row set costs about as much (see split).
 */
export function nearStats(
  near: NearCond,
  c: Columns,
  p: CellPrices,
  set: CellSet,
  value: CellValue | null,
): ScanStats | null {
  const g = near.cells;
  const cells = split(near, g);
  if (cells === null) return null;
  const { runs, edge } = cells;
  const B = p.buckets;
  const hist = new Float64Array(B);
  let count = 0,
    sum = 0;
  for (let q = 0; q < runs.length; q += 2) {
    const [k0, k1] = [runs[q], runs[q + 1]];
    for (let k = k0; k < k1; k++) {
      count += set.count[k];
      sum += set.sum[k];
    }
    for (let b = 0; b < B; b++) hist[b] += set.before[k1 * B + b] - set.before[k0 * B + b];
  }
  const edgeRanks = edgeRows(near, c, edge, value);
  count += edgeRanks.count;
  sum += edgeRanks.sum;
  for (const r of edgeRanks.ranks) hist[r >>> p.shift]++;
  let priced = 0;
  for (let b = 0; b < B; b++) priced += hist[b];
  if (priced === 0) return { count, min: null, max: null, average: null, median: null };
  const inBucket = new Map<number, Uint32Array>();
  /** The k-th smallest price (0-based): its bucket from the histogram, then that bucket's ranks sorted. */
  const kth = (k: number) => {
    let b = 0;
    while (k >= hist[b]) k -= hist[b++];
    let ranks = inBucket.get(b);
    if (!ranks) inBucket.set(b, (ranks = bucketRanks(p, set, runs, edgeRanks.ranks, b)));
    return c.price[c.order[ranks[k]]];
  };
  const mid = priced >> 1;
  const median = priced % 2 ? kth(mid) : (kth(mid - 1) + kth(mid)) / 2;
  return { count, min: kth(0), max: kth(priced - 1), average: round2(sum / priced), median };
}

/** The listings within the circle in the edge cells (with `value`, when given): count, price sum, price ranks. */
function edgeRows(
  near: NearCond,
  c: Columns,
  edge: number[],
  value: CellValue | null,
): { count: number; sum: number; ranks: Uint32Array } {
  const g = near.cells;
  const { x: cx, y: cy, z: cz, cos, zLo, zHi } = near.circle;
  let n = 0;
  for (const k of edge) n += g.start[k + 1] - g.start[k];
  const ranks = new Uint32Array(n);
  let count = 0,
    sum = 0,
    priced = 0;
  for (const k of edge)
    for (let j = g.start[k]; j < g.start[k + 1]; j++) {
      const zj = g.z[j];
      if (!(zj >= zLo && zj <= zHi && g.x[j] * cx + g.y[j] * cy + zj * cz >= cos)) continue;
      const i = g.order[j];
      if (value !== null && value.arr[i] !== value.code) continue;
      count++;
      if (c.rank[i] === NONE) continue;
      sum += c.price[i];
      ranks[priced++] = c.rank[i];
    }
  return { count, sum, ranks: ranks.subarray(0, priced) };
}

/** The ranks in bucket b of the inside cells' runs and of the edge, ascending. */
function bucketRanks(p: CellPrices, set: CellSet, runs: number[], edge: Uint32Array, b: number): Uint32Array {
  const lo = b << p.shift,
    hi = (b + 1) << p.shift,
    B = p.buckets;
  const out: number[] = [];
  for (let q = 0; q < runs.length; q += 2)
    for (let k = runs[q]; k < runs[q + 1]; k++) {
      if (set.before[(k + 1) * B + b] === set.before[k * B + b]) continue;
      const end = set.rankStart[k + 1];
      for (let j = lowerBound(set.ranks, lo, set.rankStart[k], end); j < end && set.ranks[j] < hi; j++)
        out.push(set.ranks[j]);
    }
  for (const r of edge) if (r >= lo && r < hi) out.push(r);
  return Uint32Array.from(out).sort();
}

/** Stats from the cells when the filters are near and at most one CELL_COLUMNS filter (cellScope), else null. */
export function statsFromCells(f: ListingFilters, p: Pred, c: Columns, cells: CellPrices): ScanStats | null {
  const scope = cellScope(f);
  if (scope === null || p.near === null) return null;
  if (scope === 'all') return nearStats(p.near, c, cells, cells.all, null);
  const e = p.eq[EQ_FILTERS.findIndex((x) => x.key === scope)];
  const set = e && cells.byValue[scope][e.code];
  return set ? nearStats(p.near, c, cells, set, e) : null;
}
