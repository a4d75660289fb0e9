// Stats of near from the cells, alone or with one value of a CELL_COLUMNS filter: a cell wholly inside the circle adds
// its counts and price sum without reading its listings, and its price-rank histogram (prefix sums in cell order, so
// a run of inside cells costs one subtraction per bucket); only the cells the circle's edge crosses are read listing
// by listing. The median (and min, max) is found in the histogram's bucket, then among that bucket's ranks alone.

import { EQ_FILTERS, type ListingFilters, NEAR_FILTER, presentFilters } from '../../snapshot-format/listing-filters.ts';
import { round2 } from '../../snapshot-format/price-stats.ts';
import { searchOrder } from './bits.ts';
import { CELL_COLUMNS, type CellColumn, type CellPrices, type CellSet } from './near-cells.ts';
import { eachRun, inside, type NearCond } from './near-rows.ts';
import type { Pred } from './scan-compile.ts';
import type { Columns, GeoCells, ScanStats } from './scan-loops.ts';

const NONE = 0xffffffff;
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
  const others = presentFilters(f).filter((k) => k !== NEAR_FILTER.key && k !== 'min_price' && k !== 'max_price');
  if (!f.near || others.length > 1) return null;
  if (others.length === 0) return 'all';
  return (CELL_COLUMNS as readonly string[]).includes(others[0]) ? (others[0] as CellColumn) : null;
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
  band: Band | null,
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
  const inBucket = new Map<number, Uint32Array>();
  const ranksOf = (b: number) => {
    let ranks = inBucket.get(b);
    if (!ranks) inBucket.set(b, (ranks = bucketRanks(p, set, runs, edgeRanks.ranks, b)));
    return ranks;
  };
  // A price band is a range of ranks: its listings are counted and summed, and the k-th is the (below + k)-th.
  let below = 0;
  if (band) {
    ({ count, sum } = bandTotals(c, set, runs, edgeRanks.ranks, band));
    priced = count;
    const b0 = band.lo >>> p.shift;
    for (let b = 0; b < b0 && b < B; b++) below += hist[b];
    if (b0 < B && priced > 0) below += lowerBound(ranksOf(b0), band.lo, 0, ranksOf(b0).length);
  }
  if (priced === 0) return { count, min: null, max: null, average: null, median: null };
  /** The k-th smallest price (0-based): its bucket from the histogram, then that bucket's ranks sorted. */
  const kth = (k: number) => {
    k += below;
    let b = 0;
    while (k >= hist[b]) k -= hist[b++];
    return c.price[c.order[ranksOf(b)[k]]];
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

/** A price band as the ranks [lo, hi) of the price order its prices hold. */
interface Band {
  lo: number;
  hi: number;
}

/** The listings in the band within the circle: the inside cells' by two binary searches each, the edge's ranks. */
function bandTotals(c: Columns, set: CellSet, runs: number[], edge: Uint32Array, band: Band) {
  let count = 0,
    sum = 0;
  for (let q = 0; q < runs.length; q += 2)
    for (let k = runs[q]; k < runs[q + 1]; k++) {
      const end = set.rankStart[k + 1];
      const lo = lowerBound(set.ranks, band.lo, set.rankStart[k], end);
      const hi = lowerBound(set.ranks, band.hi, lo, end);
      count += hi - lo;
      for (let j = lo; j < hi; j++) sum += c.price[c.order[set.ranks[j]]];
    }
  for (const r of edge)
    if (r >= band.lo && r < band.hi) {
      count++;
      sum += c.price[c.order[r]];
    }
  return { count, sum };
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
  const ranged = f.min_price !== undefined || f.max_price !== undefined;
  const band = ranged
    ? {
        lo: searchOrder(c.order, c.price, f.min_price ?? -Infinity, false),
        hi: searchOrder(c.order, c.price, f.max_price ?? Infinity, true),
      }
    : null;
  if (scope === 'all') return nearStats(p.near, c, cells, cells.all, null, band);
  const e = p.eq[EQ_FILTERS.findIndex((x) => x.key === scope)];
  const set = e && cells.byValue[scope][e.code];
  return set ? nearStats(p.near, c, cells, set, e, band) : null;
}
