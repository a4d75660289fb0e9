// Row sets of the column scan: the rows matching a predicate as a bitmap, from cached per-value and per-range bitmaps.

import { eqBits, popcount, RangeBins, wordCount } from './bits.ts';
import { boxRows, nearRows } from './near-rows.ts';
import type { NearCond, Pred } from './scan-compile.ts';
import type { Columns } from './scan-loops.ts';

/** Clears the rows of `res` outside near's circle, testing only the rows it holds (other conditions ANDed first). */
function keepNear(near: NearCond, res: Uint32Array): void {
  const { x, y, z } = near;
  const { x: cx, y: cy, z: cz, cos, zLo, zHi } = near.circle;
  for (let w = 0; w < res.length; w++) {
    let bits = res[w];
    while (bits !== 0) {
      const t = bits & -bits;
      bits ^= t;
      const i = (w << 5) + 31 - Math.clz32(t);
      // geo.ts' within(), written out over locals (a call per row with the circle cost several times as much).
      const zi = z[i];
      if (!(zi >= zLo && zi <= zHi && x[i] * cx + y[i] * cy + zi * cz >= cos)) res[w] &= ~t;
    }
  }
}

/** The bitmaps of one snapshot's columns, built on first use and kept (see each method for how many). */
export class RowSets {
  constructor(private readonly c: Columns) {}

  /**
   * The rows matching every condition, as a bitmap (valid until the next call): an equality is a
   * cached per-value bitmap, a range the difference of two cumulative bin bitmaps plus a row test in
   * the bins it cuts through, q its term bitmap; they are ANDed a word (32 rows) at a time; then near, from
   * the cells its box covers (near-rows.ts) or by testing the rows left, whichever reads fewer.
   */
  rowSet(p: Pred, c: Columns): Uint32Array {
    const W = wordCount(c.n);
    const res = (this.resBuf ??= new Uint32Array(W));
    const tmp = (this.tmpBuf ??= new Uint32Array(W));
    let first = true;
    const and = (src: Uint32Array) => {
      if (first) res.set(src);
      else for (let w = 0; w < W; w++) res[w] &= src[w];
      first = false;
    };
    for (const e of p.eq) if (e) and(this.eqWords(e.arr, e.code, c.n));
    for (const r of p.range) {
      if (!r) continue;
      this.rangeBins(r.arr, c.n).select(r.lo, r.hi, tmp);
      and(tmp);
    }
    if (p.bits) {
      tmp.fill(0);
      new Uint8Array(tmp.buffer).set(p.bits);
      and(tmp);
    }
    if (p.near) {
      // The box's cell runs, or, when the other conditions left fewer rows than the box holds, those rows.
      const g = p.near.cells;
      const box = boxRows(p.near, g);
      if (first) nearRows(p.near, g, res);
      else if (popcount(res, c.n) <= box) keepNear(p.near, res);
      else {
        nearRows(p.near, g, tmp);
        and(tmp);
      }
    } else if (first) res.fill(-1);
    return res;
  }
  private resBuf: Uint32Array | null = null;
  private tmpBuf: Uint32Array | null = null;

  /** Per-value bitmaps of the equality columns, built on first use (one pass) and kept for the 48 most recently used. */
  private eqWords(arr: Uint16Array | Uint32Array, code: number, n: number): Uint32Array {
    const key = `${this.columnId(arr)}:${code}`;
    let bits = this.eqCache.get(key);
    if (bits)
      this.eqCache.delete(key); // re-inserted below: most recently used last
    else {
      bits = eqBits(arr, code, n);
      if (this.eqCache.size >= 48) this.eqCache.delete(this.eqCache.keys().next().value!); // ~94 KB each at 751k listings
    }
    this.eqCache.set(key, bits);
    return bits;
  }
  private readonly eqCache = new Map<string, Uint32Array>();
  private columnId(arr: Uint16Array | Uint32Array): number {
    let id = this.columnIds.get(arr);
    if (id === undefined) this.columnIds.set(arr, (id = this.columnIds.size));
    return id;
  }
  private readonly columnIds = new Map<Uint16Array | Uint32Array, number>();

  /** Cumulative bin bitmaps of a range column, built on first use (~3 MB a column at 751k listings). */
  private rangeBins(values: Float64Array, n: number): RangeBins {
    const c = this.c;
    let bins = this.binsCache.get(values);
    if (!bins)
      this.binsCache.set(
        values,
        (bins = new RangeBins(values, n, values === c.price ? c.order : values === c.size ? c.sizeOrder : null)),
      );
    return bins;
  }
  private readonly binsCache = new Map<Float64Array, RangeBins>();
}
