// Stats of near alone from the cells: a cell wholly inside the circle adds its counts, its price sum and its
// listings' price ranks (sorted per cell, built on first use) without reading its listings; only the cells the
// circle's edge crosses are read listing by listing. The median is the k-th rank over those sorted runs.

import { unitVector } from '../../snapshot-format/geo.ts';
import { NEAR_FILTER } from '../../snapshot-format/listing-filters.ts';
import { round2 } from '../../snapshot-format/price-stats.ts';
import { eachRun, type NearCond } from './near-rows.ts';
import type { Columns, GeoCells, ScanStats } from './scan-loops.ts';

const NONE = 0xffffffff;
/** A corner must be inside by this much of the dot product (~6 cm at 2 km) for its cell to count as inside. */
const INSIDE_MARGIN = 1e-9;

/** Per cell (in GeoCells' order): priced listings, their price sum, and their price ranks sorted. */
export interface CellPrices {
  priced: Uint32Array;
  sum: Float64Array;
  /** Cell k's ranks are ranks[rankStart[k]..rankStart[k + 1]), ascending. */
  rankStart: Uint32Array;
  ranks: Uint32Array;
}

export function cellPrices(c: Columns, g: GeoCells): CellPrices {
  const cells = g.lat.length;
  const priced = new Uint32Array(cells),
    sum = new Float64Array(cells),
    rankStart = new Uint32Array(cells + 1);
  for (let k = 0; k < cells; k++) {
    for (let j = g.start[k]; j < g.start[k + 1]; j++) {
      const i = g.order[j];
      if (c.rank[i] === NONE) continue;
      priced[k]++;
      sum[k] += c.price[i];
    }
    rankStart[k + 1] = rankStart[k] + priced[k];
  }
  const ranks = new Uint32Array(rankStart[cells]);
  for (let k = 0; k < cells; k++) {
    let at = rankStart[k];
    for (let j = g.start[k]; j < g.start[k + 1]; j++) if (c.rank[g.order[j]] !== NONE) ranks[at++] = c.rank[g.order[j]];
    ranks.subarray(rankStart[k], at).sort();
  }
  return { priced, sum, rankStart, ranks };
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
 * The box's cells, split: those wholly inside the circle, and how many listings the others (the edge) hold. null
 * when the cells would cost more than the listings (below): the edge holds a quarter of the box's listings or more
 * (a small circle: its listings' ranks would be sorted), or over MAX_INSIDE cells are inside (a wide circle: each
 * step of the median's search visits every one).
 */
function split(near: NearCond, g: GeoCells): { inside: number[]; edge: number[] } | null {
  const inner: number[] = [],
    edge: number[] = [];
  let edgeRows = 0,
    boxRows = 0;
  eachRun(near, g, (from, to, k0, k1) => {
    boxRows += to - from;
    for (let k = k0; k < k1; k++) {
      if (inside(near, g, k)) inner.push(k);
      else {
        edge.push(k);
        edgeRows += g.start[k + 1] - g.start[k];
      }
    }
  });
  return edgeRows * 4 >= boxRows || inner.length > MAX_INSIDE ? null : { inside: inner, edge };
}
/** The most inside cells the cells' way takes (see split). */
const MAX_INSIDE = 1500;

/**
 * count, min, max, average and median price of the listings within the circle (near alone), or null when reading
 * the listings costs less (see split).
 */
export function nearStats(near: NearCond, c: Columns, g: GeoCells, p: CellPrices): ScanStats | null {
  const cells = split(near, g);
  if (cells === null) return null;
  let count = 0,
    priced = 0,
    sum = 0;
  const runs: number[] = []; // [from, to) of ranks of the inside cells
  const edge: number[] = []; // ranks of the priced listings within the circle in the edge cells
  const { x: cx, y: cy, z: cz, cos, zLo, zHi } = near.circle;
  for (const k of cells.inside) {
    count += g.start[k + 1] - g.start[k];
    priced += p.priced[k];
    sum += p.sum[k];
    if (p.rankStart[k] < p.rankStart[k + 1]) runs.push(p.rankStart[k], p.rankStart[k + 1]);
  }
  for (const k of cells.edge)
    for (let j = g.start[k]; j < g.start[k + 1]; j++) {
      const zj = g.z[j];
      if (!(zj >= zLo && zj <= zHi && g.x[j] * cx + g.y[j] * cy + zj * cz >= cos)) continue;
      count++;
      const i = g.order[j];
      if (c.rank[i] === NONE) continue;
      priced++;
      sum += c.price[i];
      edge.push(c.rank[i]);
    }
  if (priced === 0) return { count, min: null, max: null, average: null, median: null };
  const sortedEdge = Uint32Array.from(edge).sort();
  /** Priced listings within with a rank below r. */
  const below = (r: number) => {
    let n = lowerBound(sortedEdge, r, 0, sortedEdge.length);
    for (let q = 0; q < runs.length; q += 2) n += lowerBound(p.ranks, r, runs[q], runs[q + 1]) - runs[q];
    return n;
  };
  /** The k-th smallest rank (0-based): the largest r with below(r) <= k. */
  const kth = (k: number) => {
    let lo = 0,
      hi = c.order.length - 1; // ranks are positions in the price order
    while (lo < hi) {
      const m = (lo + hi + 1) >>> 1;
      if (below(m) <= k) lo = m;
      else hi = m - 1;
    }
    return c.price[c.order[lo]];
  };
  let first = sortedEdge.length ? sortedEdge[0] : NONE,
    last = sortedEdge.length ? sortedEdge[sortedEdge.length - 1] : 0;
  for (let q = 0; q < runs.length; q += 2) {
    first = Math.min(first, p.ranks[runs[q]]);
    last = Math.max(last, p.ranks[runs[q + 1] - 1]);
  }
  const mid = priced >> 1;
  const median = priced % 2 ? kth(mid) : (kth(mid - 1) + kth(mid)) / 2;
  const price = (r: number) => c.price[c.order[r]];
  return { count, min: price(first), max: price(last), average: round2(sum / priced), median };
}
