// The column scan's inner loops: branchless row collectors, word-wise AND, stats accumulation.
import type { EqKey, RangeName } from '../../snapshot-format/listing-filters.ts';

const NONE = 0xffffffff;

/** Which filter the primary loop runs over: the planner's estimate of rows per filter (lower is better). */
export interface ScanStats {
  count: number;
  min: number | null;
  max: number | null;
  average: number | null;
  median: number | null;
}

/** The filter the column scan loops over (the most selective by the planner's estimates): q, an equality's key, a range's name or near. */
export type PrimaryHint = 'fts' | EqKey | RangeName | 'near' | null;

export const BUCKET_BITS = 10; // price ranks are counted in buckets of 1,024 listings for the median

export interface Columns {
  n: number;
  price: Float64Array;
  size: Float64Array;
  rooms: Float64Array;
  city_id: Uint16Array;
  province_id: Uint16Array;
  neighbourhood_id: Uint16Array;
  property_type: Uint16Array;
  furnishing: Uint16Array;
  owner_id: Uint32Array;
  order: Uint32Array;
  rank: Uint32Array;
  /** Rows with a size, in size order (for the size range bins). */
  sizeOrder: Uint32Array;
}

/** The near filter's columns (snapshot-format/geo.ts), loaded on its first use: ~50 bytes a listing. */
export interface GeoColumns {
  /** Each row's point as a unit vector (NaN: no coordinates). */
  x: Float64Array;
  y: Float64Array;
  z: Float64Array;
  cells: GeoCells;
}

/**
 * The listing_geo_cells cells in (lat_cell, lon_cell) order and their rows: cell k's rows are order[start[k]..start[k
 * + 1]), and x, y, z hold the same points as GeoColumns in that order (a box's runs are read in sequence: the rows'
 * own places are scattered, and reading them there cost 3-4 times the whole pass at 1M).
 */
export interface GeoCells {
  lat: Int32Array;
  lon: Int32Array;
  start: Uint32Array;
  order: Uint32Array;
  x: Float64Array;
  y: Float64Array;
  z: Float64Array;
}

export type Primary =
  | { kind: 'all' }
  | { kind: 'eq'; arr: Uint16Array | Uint32Array; code: number }
  | { kind: 'range'; arr: Float64Array; lo: number; hi: number }
  | { kind: 'bits' }
  | { kind: 'list'; rows: Uint32Array };

export const CHUNK = 8192;

// The loops below are branchless (write the row, then advance by 0 or 1): on real data a condition is
// often as likely true as false, and a mispredicted branch per row made them 3-4 times slower.
export function eqCollect(
  arr: Uint16Array | Uint32Array,
  code: number,
  start: number,
  end: number,
  out: Uint32Array,
): number {
  let k = 0;
  for (let i = start; i < end; i++) {
    out[k] = i;
    k += +(arr[i] === code);
  }
  return k;
}
export function rangeCollect(
  arr: Float64Array,
  lo: number,
  hi: number,
  start: number,
  end: number,
  out: Uint32Array,
): number {
  let k = 0;
  for (let i = start; i < end; i++) {
    const x = arr[i];
    out[k] = i;
    k += +(x >= lo) & +(x <= hi);
  }
  return k;
}
/**
 * The set rows of a bitmap, 32 at a time: a word's set bits are taken lowest first (isolate, count
 * leading zeros, clear), so the cost follows the matches, not the rows (~8 times fewer steps than a
 * test per row for a term in 13 % of the listings). `words` views the same bytes (null when the
 * bytes are not 4-byte aligned or the machine is big-endian: then a row at a time).
 */
export function bitsCollect(
  bits: Uint8Array,
  words: Uint32Array | null,
  start: number,
  end: number,
  out: Uint32Array,
): number {
  let k = 0,
    i = start;
  if (words) {
    for (; i < end && (i & 31) !== 0; i++) if (bits[i >> 3] & (1 << (i & 7))) out[k++] = i;
    for (; i + 32 <= end; i += 32) {
      let w = words[i >> 5];
      while (w !== 0) {
        const t = w & -w;
        out[k++] = i + 31 - Math.clz32(t);
        w ^= t;
      }
    }
  }
  for (; i < end; i++) {
    const b = bits[i >> 3];
    if (b === 0) {
      i |= 7;
      continue;
    } // skip the rest of an empty byte
    if (b & (1 << (i & 7))) out[k++] = i;
  }
  return k;
}
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
export const wordsOf = (bits: Uint8Array) =>
  LITTLE_ENDIAN && bits.byteOffset % 4 === 0
    ? new Uint32Array(bits.buffer, bits.byteOffset, bits.byteLength >> 2)
    : null;
/** out &= b over b's bytes (out at least as long), a word at a time where both allow it. */
export function andWords(out: Uint8Array, b: Uint8Array): void {
  const wo = wordsOf(out),
    wb = wordsOf(b);
  let k = 0;
  if (wo && wb) {
    const W = b.length >> 2;
    for (let w = 0; w < W; w++) wo[w] &= wb[w];
    k = W << 2;
  }
  for (; k < b.length; k++) out[k] &= b[k];
}
/** Adds a chunk's matching rows to the stats: count, priced count and price sum, and rank-bucket counts. */
export function accumulate(
  cand: Uint32Array,
  k: number,
  rank: Uint32Array,
  price: Float64Array,
  buckets: Uint32Array,
  acc: Float64Array,
): void {
  let priced = 0,
    sum = 0;
  for (let j = 0; j < k; j++) {
    const i = cand[j];
    const r = rank[i];
    if (r !== NONE) {
      priced++;
      sum += price[i];
      buckets[r >>> BUCKET_BITS]++;
    }
  }
  acc[0] += k;
  acc[1] += priced;
  acc[2] += sum;
}
