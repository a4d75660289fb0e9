// A filter set compiled for the column scan: codes, the primary condition, the residual narrow(); the row test.
import type { ListingFilters } from '../../snapshot-format/listing-sql.ts';
import { BIT, type Columns, narrowFor, type Pred, type Primary, type PrimaryHint } from './scan-loops.ts';
import type { TermRows } from './term-rows.ts';

/**
 * A filter set as the scan's predicate: each value's column code (`code`: 0 for no value, -1 for one no listing
 * has, then null is returned), the loop's primary condition (the planner's `hint` when it applies) and the
 * residual conditions' narrow() for the rest.
 */
export function compilePred(
  f: ListingFilters,
  hint: PrimaryHint,
  c: Columns,
  code: (column: string, value: string | undefined) => number,
  termRows: TermRows,
): Pred | null {
  const locCode = code(f.location_column ?? 'city_id', f.location_id);
  const owner = code('owner_id', f.owner_id);
  const type = code('property_type', f.property_type);
  const furn = code('furnishing', f.furnishing);
  if (locCode < 0 || owner < 0 || type < 0 || furn < 0) return null; // a value no listing has
  const terms = f.fts ? termRows.rows(f.fts.terms, c.n) : null;
  const bits = terms?.bits ?? null;
  // q with a rare term: loop over the rows of its list (a few thousand at most) instead of the bitmap.
  const ftsPrimary: Primary = terms?.list ? { kind: 'list', rows: terms.list } : { kind: 'bits' };
  const loc = f.location_id === undefined ? null : c[f.location_column ?? 'city_id'];
  const hasP = f.min_price !== undefined || f.max_price !== undefined;
  const hasS = f.min_size !== undefined || f.max_size !== undefined;
  const hasR = f.min_rooms !== undefined;
  const shape =
    (loc ? BIT.loc : 0) |
    (owner ? BIT.owner : 0) |
    (type ? BIT.type : 0) |
    (furn ? BIT.furn : 0) |
    (hasP ? BIT.price : 0) |
    (hasS ? BIT.size : 0) |
    (hasR ? BIT.rooms : 0) |
    (bits ? BIT.q : 0);
  // The loop's primary condition, and its bit: the one condition narrow() need not apply again.
  let primary: Primary = { kind: 'all' },
    covered = 0;
  if (hint === 'fts' && bits) {
    primary = ftsPrimary;
    covered = BIT.q;
  } else if (hint === 'location_id' && loc) {
    primary = { kind: 'eq', arr: loc, code: locCode };
    covered = BIT.loc;
  } else if (hint === 'owner_id' && owner) {
    primary = { kind: 'eq', arr: c.owner_id, code: owner };
    covered = BIT.owner;
  } else if (hint === 'property_type' && type) {
    primary = { kind: 'eq', arr: c.property_type, code: type };
    covered = BIT.type;
  } else if (hint === 'furnishing' && furn) {
    primary = { kind: 'eq', arr: c.furnishing, code: furn };
    covered = BIT.furn;
  } else if (hint === 'price' && hasP) {
    primary = { kind: 'range', arr: c.price, lo: f.min_price ?? -Infinity, hi: f.max_price ?? Infinity };
    covered = BIT.price;
  } else if (hint === 'size' && hasS) {
    primary = { kind: 'range', arr: c.size, lo: f.min_size ?? -Infinity, hi: f.max_size ?? Infinity };
    covered = BIT.size;
  } else if (hint === 'rooms' && hasR) {
    primary = { kind: 'range', arr: c.rooms, lo: f.min_rooms ?? -Infinity, hi: Infinity };
    covered = BIT.rooms;
  } else if (bits) {
    primary = ftsPrimary;
    covered = BIT.q;
  } else if (loc) {
    primary = { kind: 'eq', arr: loc, code: locCode };
    covered = BIT.loc;
  }
  const residual = shape & ~covered;
  return {
    primary,
    loc,
    locCode,
    owner,
    type,
    furn,
    pLo: f.min_price ?? -Infinity,
    pHi: f.max_price ?? Infinity,
    sLo: f.min_size ?? -Infinity,
    sHi: f.max_size ?? Infinity,
    rLo: f.min_rooms ?? -Infinity,
    bits,
    shape,
    narrow: residual ? narrowFor(residual) : null,
  };
}

/** Does row i match? (NaN never satisfies a bound, so unknown values never match a range filter.) */
export function testRow(p: Pred, c: Columns, i: number): boolean {
  // One shared function, not generated per shape: it runs a few thousand times per request (sampling,
  // the median walk), too few for a new shape's code to be optimised, and is warm for every shape.
  return (
    (p.loc === null || p.loc[i] === p.locCode) &&
    (p.owner === 0 || c.owner_id[i] === p.owner) &&
    (p.type === 0 || c.property_type[i] === p.type) &&
    (p.furn === 0 || c.furnishing[i] === p.furn) &&
    ((p.shape & BIT.price) === 0 || (c.price[i] >= p.pLo && c.price[i] <= p.pHi)) &&
    ((p.shape & BIT.size) === 0 || (c.size[i] >= p.sLo && c.size[i] <= p.sHi)) &&
    ((p.shape & BIT.rooms) === 0 || c.rooms[i] >= p.rLo) &&
    (p.bits === null || (p.bits[i >> 3] & (1 << (i & 7))) !== 0)
  );
}
