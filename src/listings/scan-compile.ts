// A filter set compiled for the column scan, from the filter table: codes and bounds, the loop's primary
// condition, the residual narrow(); the row test.

import { type Circle, circleOf } from '../../snapshot-format/geo.ts';
import {
  boundsOf,
  EQ_FILTERS,
  eqColumn,
  type ListingFilters,
  RANGE_FILTERS,
} from '../../snapshot-format/listing-filters.ts';
import type { Columns, GeoCells, GeoColumns, Primary, PrimaryHint } from './scan-loops.ts';
import type { TermRows } from './term-rows.ts';

/** One equality condition: rows whose code in `arr` is `code`. */
export interface EqCond {
  arr: Uint16Array | Uint32Array;
  code: number;
}
/** One range condition: rows whose value in `arr` is in [lo, hi] (NaN, no value, never is). */
export interface RangeCond {
  arr: Float64Array;
  lo: number;
  hi: number;
}

/** The near condition: rows whose point (x, y, z) is within the circle (snapshot-format/geo.ts' within). */
export interface NearCond {
  circle: Circle;
  x: Float64Array;
  y: Float64Array;
  z: Float64Array;
  cells: GeoCells;
}

/** A compiled filter set. `null` from compilePred = matches nothing. */
export interface Pred {
  /** The condition the scan loops over (the most selective one by the planner's estimates). */
  primary: Primary;
  /** The equality conditions, at their filter's place in EQ_FILTERS (null: not filtered). */
  eq: (EqCond | null)[];
  /** The range conditions, at their filter's place in RANGE_FILTERS (null: not filtered). */
  range: (RangeCond | null)[];
  /** q's bitmap of rows. */
  bits: Uint8Array | null;
  /** The near filter's circle, and the points. */
  near: NearCond | null;
  /** narrow() of the conditions the primary loop does not apply (null: none). */
  narrow: Narrow | null;
}

/** narrow(cand, k): keeps the candidates passing every residual condition; returns how many. */
export type Narrow = (cand: Uint32Array, k: number) => number;
/** A filter's code lookup: 0 for no value, -1 for a value no listing has. */
export type CodeOf = (column: string, value: string | undefined) => number;

/**
 * A filter set as the scan's predicate: each value's column code (`code`: -1 for one no listing has, then null is
 * returned), the loop's primary condition (the planner's `hint` when it applies) and the residual conditions'
 * narrow() for the rest.
 */
export function compilePred(
  f: ListingFilters,
  hint: PrimaryHint,
  c: Columns,
  code: CodeOf,
  termRows: TermRows,
  geo: () => GeoColumns,
): Pred | null {
  const eq = eqConds(f, c, code);
  if (eq === null) return null; // a value no listing has
  const range = RANGE_FILTERS.map((r) => {
    const b = boundsOf(r, f);
    return b && { arr: c[r.name], lo: b.lo, hi: b.hi };
  });
  const terms = f.fts ? termRows.rows(f.fts.terms, c.n) : null;
  const bits = terms?.bits ?? null;
  // q with a rare term: loop over the rows of its list (a few thousand at most) instead of the bitmap.
  const q: Primary | null = bits && (terms?.list ? { kind: 'list', rows: terms.list } : { kind: 'bits' });
  const circle = f.near ? circleOf(f.near) : null;
  const g = circle && geo();
  const near: NearCond | null = circle && g && { circle, x: g.x, y: g.y, z: g.z, cells: g.cells };
  // near as the loop's condition: the rows in its band of z (the latitudes it spans); narrow() tests the circle.
  const band: RangeCond | null = circle && g && { arr: g.z, lo: circle.zLo, hi: circle.zHi };
  const { primary, covered } = primaryOf(hint, eq, range, q, band);
  const residual = {
    eq: eq.map((e) => (e === covered ? null : e)),
    range: range.map((r) => (r === covered ? null : r)),
    bits: covered === 'q' ? null : bits,
  };
  const any = residual.bits !== null || near !== null || residual.eq.some((e) => e) || residual.range.some((r) => r);
  const narrow = any ? narrowFor(residual.eq, residual.range, residual.bits, near) : null;
  return { primary, eq, range, bits, near, narrow };
}

/** Each equality filter's condition at its place (null where absent); null when a value is one no listing has. */
function eqConds(f: ListingFilters, c: Columns, code: CodeOf): (EqCond | null)[] | null {
  const out: (EqCond | null)[] = [];
  for (const e of EQ_FILTERS) {
    const value = f[e.key];
    if (value === undefined) {
      out.push(null);
      continue;
    }
    const col = eqColumn(e.key, f);
    const k = code(col, value);
    if (k < 0) return null;
    out.push({ arr: c[col], code: k });
  }
  return out;
}

/**
 * The loop's primary condition and the condition it covers (narrow() need not apply it again): the hinted filter
 * when present, else q, else the first equality filter present, else every row.
 */
function primaryOf(
  hint: PrimaryHint,
  eq: (EqCond | null)[],
  range: (RangeCond | null)[],
  q: Primary | null,
  band: RangeCond | null,
): { primary: Primary; covered: EqCond | RangeCond | 'q' | null } {
  if (hint === 'fts' && q) return { primary: q, covered: 'q' };
  if (hint === 'near' && band) return { primary: { kind: 'range', ...band }, covered: null };
  const e = EQ_FILTERS.findIndex((x) => x.key === hint);
  if (e >= 0 && eq[e]) return { primary: { kind: 'eq', ...eq[e] }, covered: eq[e] };
  const r = RANGE_FILTERS.findIndex((x) => x.name === hint);
  if (r >= 0 && range[r]) return { primary: { kind: 'range', ...range[r] }, covered: range[r] };
  if (q) return { primary: q, covered: 'q' };
  const first = eq.find((x) => x !== null);
  if (first) return { primary: { kind: 'eq', ...first }, covered: first };
  return { primary: { kind: 'all' }, covered: null };
}

/** Does row i match? (NaN never satisfies a bound, so unknown values never match a range filter.) */
export function testRow(p: Pred, i: number): boolean {
  // One shared function, not generated per shape: it runs a few thousand times per request (sampling,
  // the median walk), too few for a new shape's code to be optimised, and is warm for every shape.
  const eq = p.eq,
    range = p.range,
    n = p.near;
  for (let k = 0; k < eq.length; k++) {
    const e = eq[k];
    if (e !== null && e.arr[i] !== e.code) return false;
  }
  for (let k = 0; k < range.length; k++) {
    const r = range[k];
    if (r !== null && !(r.arr[i] >= r.lo && r.arr[i] <= r.hi)) return false;
  }
  if (n !== null) {
    // geo.ts' within(), written out (as in narrowFor and the row sets).
    const c = n.circle,
      z = n.z[i];
    if (!(z >= c.zLo && z <= c.zHi && n.x[i] * c.x + n.y[i] * c.y + z * c.z >= c.cos)) return false;
  }
  return p.bits === null || (p.bits[i >> 3] & (1 << (i & 7))) !== 0;
}

const NO_CODES = new Uint16Array(0);
const NO_VALUES = new Float64Array(0);
const NO_CIRCLE = circleOf({ lat: 0, lon: 0, km: 1 });
// narrowFor's slots: one per filter of the table (a filter added to the table needs its slot there).
if (EQ_FILTERS.length !== 4 || RANGE_FILTERS.length !== 3)
  throw new Error('narrowFor has a slot per filter of EQ_FILTERS (4) and RANGE_FILTERS (3)');

/**
 * All the residual conditions in one loop: one pass over the candidates for all of them (a pass per condition
 * costs 2-3 times as much at 751k listings). Each filter of the table has its slot, so a slot's array is always
 * of one type; a condition that is absent is skipped by a test that is the same for every row; the others are
 * branchless, as the collectors are.
 */
export function narrowFor(
  eq: (EqCond | null)[],
  range: (RangeCond | null)[],
  q: Uint8Array | null,
  near: NearCond | null,
): Narrow {
  const [e0, e1, e2, e3] = eq;
  const [r0, r1, r2] = range;
  const use0 = e0 !== null,
    use1 = e1 !== null,
    use2 = e2 !== null,
    use3 = e3 !== null,
    useR0 = r0 !== null,
    useR1 = r1 !== null,
    useR2 = r2 !== null,
    useBits = q !== null,
    useNear = near !== null;
  // Local copies: the loop reads no object per row.
  const a0 = e0?.arr ?? NO_CODES,
    k0 = e0?.code ?? 0,
    a1 = e1?.arr ?? NO_CODES,
    k1 = e1?.code ?? 0,
    a2 = e2?.arr ?? NO_CODES,
    k2 = e2?.code ?? 0,
    a3 = e3?.arr ?? NO_CODES,
    k3 = e3?.code ?? 0,
    v0 = r0?.arr ?? NO_VALUES,
    lo0 = r0?.lo ?? 0,
    hi0 = r0?.hi ?? 0,
    v1 = r1?.arr ?? NO_VALUES,
    lo1 = r1?.lo ?? 0,
    hi1 = r1?.hi ?? 0,
    v2 = r2?.arr ?? NO_VALUES,
    lo2 = r2?.lo ?? 0,
    hi2 = r2?.hi ?? 0,
    bits = q ?? new Uint8Array(0),
    gx = near?.x ?? NO_VALUES,
    gy = near?.y ?? NO_VALUES,
    gz = near?.z ?? NO_VALUES,
    { x: cx, y: cy, z: cz, cos, zLo, zHi } = near?.circle ?? NO_CIRCLE;
  return (cand, k) => {
    let m = 0;
    for (let j = 0; j < k; j++) {
      const i = cand[j];
      cand[m] = i;
      let ok = 1;
      if (use0) ok &= +(a0[i] === k0);
      if (use1) ok &= +(a1[i] === k1);
      if (use2) ok &= +(a2[i] === k2);
      if (use3) ok &= +(a3[i] === k3);
      if (useR0) ok &= +(v0[i] >= lo0) & +(v0[i] <= hi0);
      if (useR1) ok &= +(v1[i] >= lo1) & +(v1[i] <= hi1);
      if (useR2) ok &= +(v2[i] >= lo2) & +(v2[i] <= hi2);
      if (useBits) ok &= (bits[i >> 3] >> (i & 7)) & 1;
      // geo.ts' within(), written out: z in the band, then the dot product with the centre.
      if (useNear) ok &= +(gz[i] >= zLo) & +(gz[i] <= zHi) & +(gx[i] * cx + gy[i] * cy + gz[i] * cz >= cos);
      m += ok;
    }
    return m;
  };
}
