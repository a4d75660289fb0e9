// In-memory column scan over the listing filter columns: bounded time for any filter set, pages and stats.
import type { Database, Statement } from 'better-sqlite3';
import type { ListingFilters } from './listing-query.ts';
import { round2 } from './stats.ts';

const NONE = 0xffffffff;
const BUCKET_BITS = 10; // price ranks are counted in buckets of 1,024 listings for the median

interface Columns {
  n: number;
  price: Float64Array; size: Float64Array; rooms: Float64Array;
  city_id: Uint16Array; province_id: Uint16Array; neighbourhood_id: Uint16Array;
  property_type: Uint16Array; furnishing: Uint16Array; owner_id: Uint32Array;
  order: Uint32Array; rank: Uint32Array;
}

/** A compiled filter set: codes and bounds, plus an optional q bitmap. `null` from compile = matches nothing. */
interface Pred {
  loc: Uint16Array | null; locCode: number;
  owner: number; type: number; furn: number;
  pLo: number; pHi: number; sLo: number; sHi: number; rLo: number;
  hasP: boolean; hasS: boolean; hasR: boolean;
  bits: Uint8Array | null;
}

export interface ScanStats { count: number; min: number | null; max: number | null; average: number | null; median: number | null }

/**
 * Loaded lazily on first use (start-up stays fast); about 60 bytes per listing. Every operation is
 * one pass over the columns at most: ~1M simple comparisons, a few milliseconds at 1M listings.
 */
export class ListingScan {
  private cols: Columns | null = null;
  private readonly dict: Statement;
  private readonly bitmap: Statement;
  private readonly ftsRows: Statement;
  private readonly bitmapCache = new Map<string, Uint8Array | null>();

  constructor(private readonly db: Database) {
    this.dict = db.prepare('SELECT code FROM listing_dict WHERE column = ? AND value = ?').pluck();
    this.bitmap = db.prepare('SELECT bits FROM listing_term_bitmaps WHERE term = ?').pluck();
    this.ftsRows = db.prepare('SELECT rowid FROM listings_fts WHERE listings_fts MATCH ?').pluck();
  }

  private columns(): Columns {
    if (this.cols) return this.cols;
    const get = this.db.prepare('SELECT data FROM listing_columns WHERE name = ?').pluck();
    // Copy into fresh (aligned) buffers: a Buffer from SQLite may start at any byte offset.
    const f64 = (name: string) => { const b = get.get(name) as Buffer; const a = new Float64Array(b.byteLength / 8); new Uint8Array(a.buffer).set(b); return a; };
    const u16 = (name: string) => { const b = get.get(name) as Buffer; const a = new Uint16Array(b.byteLength / 2); new Uint8Array(a.buffer).set(b); return a; };
    const u32 = (name: string) => { const b = get.get(name) as Buffer; const a = new Uint32Array(b.byteLength / 4); new Uint8Array(a.buffer).set(b); return a; };
    const price = f64('price_eur');
    this.cols = {
      n: price.length, price, size: f64('size_m2'), rooms: f64('rooms'),
      city_id: u16('city_id'), province_id: u16('province_id'), neighbourhood_id: u16('neighbourhood_id'),
      property_type: u16('property_type'), furnishing: u16('furnishing'), owner_id: u32('owner_id'),
      order: u32('price_order'), rank: u32('price_rank'),
    };
    return this.cols;
  }

  private code(column: string, value: string | undefined): number {
    if (value === undefined) return 0;
    return (this.dict.get(column, value) as number | undefined) ?? -1;
  }

  /** A term's precomputed bitmap (terms in at least 5 % of listings), or null. */
  private termBitmap(term: string): Uint8Array | null {
    let bits = this.bitmapCache.get(term);
    if (bits === undefined) {
      const blob = this.bitmap.get(term) as Buffer | undefined;
      bits = blob ? new Uint8Array(blob) : null;
      if (this.bitmapCache.size > 512) this.bitmapCache.clear();
      this.bitmapCache.set(term, bits);
    }
    return bits;
  }

  /**
   * The rows containing every term: the AND of the bitmaps of frequent terms, and one FTS query for
   * all the other terms together (their document lists are short, and FTS intersects them in C).
   */
  private termsBits(terms: string[], n: number): Uint8Array {
    const out = new Uint8Array((n + 7) >> 3);
    const rare = terms.filter((t) => !this.termBitmap(t));
    if (rare.length) for (const rid of this.ftsRows.all(rare.map((t) => `"${t}"`).join(' ')) as number[]) { const i = rid - 1; out[i >> 3] |= 1 << (i & 7); }
    else out.fill(0xff);
    for (const t of terms) {
      const b = this.termBitmap(t);
      if (b) for (let k = 0; k < out.length; k++) out[k] &= b[k];
    }
    return out;
  }

  private compile(f: ListingFilters): Pred | null {
    const c = this.columns();
    const locCode = this.code(f.location_column ?? 'city_id', f.location_id);
    const owner = this.code('owner_id', f.owner_id);
    const type = this.code('property_type', f.property_type);
    const furn = this.code('furnishing', f.furnishing);
    if (locCode < 0 || owner < 0 || type < 0 || furn < 0) return null; // a value no listing has
    const bits = f.fts ? this.termsBits(f.fts.terms, c.n) : null;
    return {
      loc: f.location_id === undefined ? null : c[f.location_column ?? 'city_id'], locCode, owner, type, furn,
      hasP: f.min_price !== undefined || f.max_price !== undefined, pLo: f.min_price ?? -Infinity, pHi: f.max_price ?? Infinity,
      hasS: f.min_size !== undefined || f.max_size !== undefined, sLo: f.min_size ?? -Infinity, sHi: f.max_size ?? Infinity,
      hasR: f.min_rooms !== undefined, rLo: f.min_rooms ?? -Infinity,
      bits,
    };
  }

  /** Does row i match? (NaN never satisfies a bound, so unknown values never match a range filter.) */
  private test(p: Pred, c: Columns, i: number): boolean {
    return (p.loc === null || p.loc[i] === p.locCode)
      && (p.owner === 0 || c.owner_id[i] === p.owner)
      && (p.type === 0 || c.property_type[i] === p.type)
      && (p.furn === 0 || c.furnishing[i] === p.furn)
      && (!p.hasP || (c.price[i] >= p.pLo && c.price[i] <= p.pHi))
      && (!p.hasS || (c.size[i] >= p.sLo && c.size[i] <= p.sHi))
      && (!p.hasR || c.rooms[i] >= p.rLo)
      && (p.bits === null || (p.bits[i >> 3] & (1 << (i & 7))) !== 0);
  }

  /** rids after `afterRid`, ascending, at most `limit`. */
  page(f: ListingFilters, afterRid: number, limit: number): number[] {
    const p = this.compile(f);
    const out: number[] = [];
    if (!p) return out;
    const c = this.cols!;
    for (let i = afterRid; i < c.n && out.length < limit; i++) if (this.test(p, c, i)) out.push(i + 1);
    return out;
  }

  /** Count over all matches; min, max, average and median over the priced ones (median via rank buckets). */
  stats(f: ListingFilters): ScanStats {
    const empty: ScanStats = { count: 0, min: null, max: null, average: null, median: null };
    const p = this.compile(f);
    if (!p) return empty;
    const c = this.cols!;
    const buckets = new Uint32Array((c.order.length >> BUCKET_BITS) + 1);
    let count = 0, priced = 0, sum = 0;
    for (let i = 0; i < c.n; i++) {
      if (!this.test(p, c, i)) continue;
      count++;
      const r = c.rank[i];
      if (r !== NONE) { priced++; sum += c.price[i]; buckets[r >> BUCKET_BITS]++; }
    }
    if (priced === 0) return { ...empty, count };
    // The k-th smallest matching price (0-based): find its bucket, then walk that bucket in price order.
    const kth = (k: number): number => {
      let b = 0;
      while (k >= buckets[b]) k -= buckets[b++];
      const end = Math.min(c.order.length, (b + 1) << BUCKET_BITS);
      for (let pos = b << BUCKET_BITS; pos < end; pos++) {
        const i = c.order[pos];
        if (this.test(p, c, i) && k-- === 0) return c.price[i];
      }
      throw new Error('median bucket walk out of range');
    };
    const mid = priced >> 1;
    const median = priced % 2 ? kth(mid) : (kth(mid - 1) + kth(mid)) / 2;
    return { count, min: kth(0), max: kth(priced - 1), average: round2(sum / priced), median };
  }
}
