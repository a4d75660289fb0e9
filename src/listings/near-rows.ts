// The near filter's row set: the rows of the cells its circle's box covers (one run of the cell order per row of
// cells), a cell wholly inside the circle untested, the others row by row; cost follows the box's listings.
import { unitVector } from '../../snapshot-format/geo.ts';
import { NEAR_FILTER, nearCell } from '../../snapshot-format/listing-filters.ts';
import type { NearCond } from './scan-compile.ts';

export type { NearCond };

import type { GeoCells } from './scan-loops.ts';

/**
 * A corner must be inside by this much of the dot product for its cell to count as inside: 1e-9 of cos r is an
 * angle of 1e-9 / sin r, about 20 m at 2 km and 0.8 m at 50 km, far more than the rounding of the dot product.
 */
const INSIDE_MARGIN = 1e-9;
/** Whether every point of cell k is within the circle, by a margin: the farthest point of a cell is a corner. */
export function inside(near: NearCond, g: GeoCells, k: number): boolean {
  const { x: cx, y: cy, z: cz, cos } = near.circle;
  const d = NEAR_FILTER.cellDegrees;
  for (const la of [g.lat[k] * d, (g.lat[k] + 1) * d])
    for (const lo of [g.lon[k] * d, (g.lon[k] + 1) * d]) {
      const [x, y, z] = unitVector(la, lo);
      if (!(x * cx + y * cy + z * cz >= cos + INSIDE_MARGIN)) return false;
    }
  return true;
}

/** The first cell at or after (la, lo) in (lat_cell, lon_cell) order. */
function firstCell(g: GeoCells, la: number, lo: number): number {
  let a = 0,
    b = g.lat.length;
  while (a < b) {
    const m = (a + b) >>> 1;
    if (g.lat[m] < la || (g.lat[m] === la && g.lon[m] < lo)) a = m + 1;
    else b = m;
  }
  return a;
}

/**
 * Calls run(from, to, k0, k1) with each run of the cell order inside the circle's box (a row of cells each: cells
 * k0..k1 - 1, their rows order[from..to)).
 */
export function eachRun(
  near: NearCond,
  g: GeoCells,
  run: (from: number, to: number, k0: number, k1: number) => void,
): void {
  const { latLo, latHi, lonLo, lonHi } = near.circle;
  const la1 = nearCell(latHi),
    lo0 = nearCell(lonLo),
    lo1 = nearCell(lonHi);
  let k = firstCell(g, nearCell(latLo), lo0);
  while (k < g.lat.length && g.lat[k] <= la1) {
    const la = g.lat[k];
    if (g.lon[k] < lo0) k = firstCell(g, la, lo0);
    const end = firstCell(g, la, lo1 + 1);
    if (k < end) run(g.start[k], g.start[end], k, end);
    k = firstCell(g, la + 1, lo0);
  }
}

/** How many listings the circle's box holds: what nearRows reads. */
export function boxRows(near: NearCond, g: GeoCells): number {
  let n = 0;
  eachRun(near, g, (from, to) => {
    n += to - from;
  });
  return n;
}

/**
 * Sets in `out` (cleared first) the rows within the circle, from the box's cell runs: a cell wholly inside the circle
 * sets its rows untested, the others test each row.
 */
export function nearRows(near: NearCond, g: GeoCells, out: Uint32Array): void {
  out.fill(0);
  const { x: cx, y: cy, z: cz, cos, zLo, zHi } = near.circle;
  const { order, x, y, z } = g;
  eachRun(near, g, (_from, _to, k0, k1) => {
    for (let k = k0; k < k1; k++) {
      const from = g.start[k],
        to = g.start[k + 1];
      if (to - from > MIN_UNTESTED && inside(near, g, k)) {
        for (let j = from; j < to; j++) out[order[j] >>> 5] |= 1 << (order[j] & 31);
        continue;
      }
      // geo.ts' within(), written out over locals: a call with the circle per row cost several times as much.
      for (let j = from; j < to; j++) {
        const zj = z[j];
        if (zj >= zLo && zj <= zHi && x[j] * cx + y[j] * cy + zj * cz >= cos) {
          const i = order[j];
          out[i >>> 5] |= 1 << (i & 31);
        }
      }
    }
  });
}
/** A cell with at most this many rows tests them rather than its corners (four points, each a few trigonometric calls). */
const MIN_UNTESTED = 16;
