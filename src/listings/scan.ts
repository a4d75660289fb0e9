// In-memory column scan over the listing filter columns: bounded time for any filter set, pages and stats.
import type { Database, Statement } from 'better-sqlite3';
import type { ListingFilters } from '../../snapshot-format/listing-sql.ts';
import { round2 } from '../../snapshot-format/price-stats.ts';
import { accumulateBits, eqBits, firstSetRows, popcount, RangeBins, searchOrder, wordCount } from './bits.ts';
import {
  accumulate,
  BIT,
  BUCKET_BITS,
  bitsCollect,
  CHUNK,
  type Columns,
  eqCollect,
  narrowFor,
  type Pred,
  type Primary,
  rangeCollect,
  wordsOf,
} from './scan-loops.ts';
import { SimilarIndex } from './similar.ts';
import { TermRows } from './term-rows.ts';

/** The filters cityTypeStats answers. */
const CITY_TYPE_KEYS = new Set(['location_column', 'location_id', 'property_type', 'min_price', 'max_price']);

/** Which filter the primary loop runs over: the planner's estimate of rows per filter (lower is better). */
export type PrimaryHint =
  | 'fts'
  | 'location_id'
  | 'owner_id'
  | 'property_type'
  | 'furnishing'
  | 'price'
  | 'size'
  | 'rooms'
  | null;

export interface ScanStats {
  count: number;
  min: number | null;
  max: number | null;
  average: number | null;
  median: number | null;
}

/**
 * The number kept in `map` under `key`, read once: the snapshot never changes. A client can ask for any value
 * (unknown ones are kept too), so the map is emptied when it grows past 16k entries.
 */
export function rememberedIn(map: Map<string, number>, key: string, read: () => number): number {
  let n = map.get(key);
  if (n === undefined) {
    n = read();
    if (map.size >= 16_384) map.clear();
    map.set(key, n);
  }
  return n;
}

/** The shortest chunk of a page's scan: each chunk costs a collect and a narrow() call of its own. */
const MIN_CHUNK = 512;

/**
 * Loaded lazily on first use (start-up stays fast); about 64 bytes per listing, plus ~3 MB per range
 * column's bin bitmaps and up to 48 equality bitmaps (~94 KB each at 751k listings) once stats use
 * them. A page is one pass over the columns at most (stopping at the page's end); stats are word
 * operations on row sets plus one accumulation over the smaller side: a few milliseconds at 1M.
 */
export class ListingScan {
  private cols: Columns | null = null;
  private readonly dict: Statement;
  /** The q terms' bitmaps and rare terms' row lists. */
  readonly terms: TermRows;

  constructor(private readonly db: Database) {
    this.dict = db.prepare('SELECT code FROM listing_dict WHERE column = ? AND value = ?').pluck();
    this.terms = new TermRows(db);
  }

  private columns(): Columns {
    if (this.cols) return this.cols;
    const get = this.db.prepare('SELECT data FROM listing_columns WHERE name = ?').pluck();
    // Copy into fresh (aligned) buffers: a Buffer from SQLite may start at any byte offset.
    const f64 = (name: string) => {
      const b = get.get(name) as Buffer;
      const a = new Float64Array(b.byteLength / 8);
      new Uint8Array(a.buffer).set(b);
      return a;
    };
    const u16 = (name: string) => {
      const b = get.get(name) as Buffer;
      const a = new Uint16Array(b.byteLength / 2);
      new Uint8Array(a.buffer).set(b);
      return a;
    };
    const u32 = (name: string) => {
      const b = get.get(name) as Buffer;
      const a = new Uint32Array(b.byteLength / 4);
      new Uint8Array(a.buffer).set(b);
      return a;
    };
    const price = f64('price_eur');
    this.cols = {
      n: price.length,
      price,
      size: f64('size_m2'),
      rooms: f64('rooms'),
      city_id: u16('city_id'),
      province_id: u16('province_id'),
      neighbourhood_id: u16('neighbourhood_id'),
      property_type: u16('property_type'),
      furnishing: u16('furnishing'),
      owner_id: u32('owner_id'),
      order: u32('price_order'),
      rank: u32('price_rank'),
      sizeOrder: u32('size_order'),
    };
    return this.cols;
  }

  /**
   * A value's code in its column (0 for no value, -1 for a value no listing has), read once each (see
   * rememberedIn): a statement per filter value was ~3 µs of each page and stats call.
   */
  private code(column: string, value: string | undefined): number {
    if (value === undefined) return 0;
    return rememberedIn(
      this.codes,
      `${column}\u0000${value}`,
      () => (this.dict.get(column, value) as number | undefined) ?? -1,
    );
  }
  private readonly codes = new Map<string, number>();

  private similarIndex: SimilarIndex | null = null;
  /** The similar-listings index over these columns (similar.ts), built on first use. */
  similar(): SimilarIndex {
    this.similarIndex ??= new SimilarIndex(this.columns());
    return this.similarIndex;
  }

  private bucketsBuf: Uint32Array | null = null;
  private readonly accBuf = new Float64Array(3);

  private compile(f: ListingFilters, hint: PrimaryHint = null): Pred | null {
    const c = this.columns();
    const locCode = this.code(f.location_column ?? 'city_id', f.location_id);
    const owner = this.code('owner_id', f.owner_id);
    const type = this.code('property_type', f.property_type);
    const furn = this.code('furnishing', f.furnishing);
    if (locCode < 0 || owner < 0 || type < 0 || furn < 0) return null; // a value no listing has
    const terms = f.fts ? this.terms.rows(f.fts.terms, c.n) : null;
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
  private test(p: Pred, c: Columns, i: number): boolean {
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

  /**
   * Calls `cb(rows, k)` with the matching rows (rows[0..k), ascending) of each chunk of rows >= from,
   * in row order, until it returns true. Works a chunk of rows at a time: the primary condition (the
   * most selective by the planner's estimates) collects candidate rows from its column, then the
   * shape's narrow() applies all the other conditions in one pass over the candidates.
   */
  private each(
    p: Pred,
    c: Columns,
    from: number,
    cb: (cand: Uint32Array, k: number) => boolean | undefined,
    size?: (scanned: number) => number,
  ): void {
    const cand = this.cand;
    const pr = p.primary;
    const narrow = p.narrow;
    const words = pr.kind === 'bits' ? wordsOf(p.bits!) : null;
    // A row list (q with rare terms) is walked in chunks of its own positions, from the first row >= from.
    let pos = 0;
    if (pr.kind === 'list') {
      let a = 0,
        b = pr.rows.length;
      while (a < b) {
        const m = (a + b) >>> 1;
        if (pr.rows[m] < from) a = m + 1;
        else b = m;
      }
      pos = a;
    }
    // Chunks may be shorter (`size`, given the rows scanned so far): a page needs only its own rows.
    for (
      let start = from, rows = size ? size(0) : CHUNK;
      pr.kind === 'list' ? pos < pr.rows.length : start < c.n;
      start += rows, rows = size ? size(start - from) : CHUNK
    ) {
      const end = Math.min(c.n, start + rows);
      let k: number;
      if (pr.kind === 'list') {
        const stop = Math.min(pr.rows.length, pos + CHUNK);
        k = stop - pos;
        cand.set(pr.rows.subarray(pos, stop));
        pos = stop;
      } else if (pr.kind === 'eq') k = eqCollect(pr.arr, pr.code, start, end, cand);
      else if (pr.kind === 'range') k = rangeCollect(pr.arr, pr.lo, pr.hi, start, end, cand);
      else if (pr.kind === 'bits') k = bitsCollect(p.bits!, words, start, end, cand);
      else {
        k = 0;
        for (let i = start; i < end; i++) cand[k++] = i;
      }
      if (k && narrow) k = narrow(c, p, cand, k);
      if (k && cb(cand, k)) return;
    }
  }
  private readonly cand = new Uint32Array(CHUNK);

  /** rids after `afterRid`, ascending, at most `limit`. */
  page(f: ListingFilters, afterRid: number, limit: number, hint: PrimaryHint = null): number[] {
    const p = this.compile(f, hint);
    const out: number[] = [];
    if (!p) return out;
    const c = this.cols!;
    const span = p.primary.kind === 'list' ? 0 : this.spanOfFour(p, c, afterRid);
    if (span < 0) {
      // So few rows match that the chunked loop would read to the end (~5 ms at 751k listings): the
      // row set costs a few word operations per condition, and the page is its first set bits.
      firstSetRows(this.rowSet(p, c), c.n, afterRid, limit, out);
      return out;
    }
    // Chunk sizes follow the density: the first from the sample's (4 matches in span / 128 sampled rows), each
    // next from the rows read so far, for 1.5 times the rows the rest of the page needs at that density (512 to
    // 8,192), so that a page of a common filter reads a few thousand rows, not whole chunks of 8,192.
    const size = (scanned: number) => {
      const need = limit - out.length;
      const rows = scanned === 0 ? (need * span) / 512 : out.length > 0 ? (need * scanned) / out.length : CHUNK;
      return Math.min(CHUNK, Math.max(MIN_CHUNK, Math.ceil(rows * 1.5)));
    };
    this.each(
      p,
      c,
      afterRid,
      (cand, k) => {
        for (let j = 0; j < k && out.length < limit; j++) out.push(cand[j] + 1);
        return out.length >= limit;
      },
      span === 0 ? undefined : size,
    );
    return out;
  }

  /**
   * The rows from `from` up to and including the 4th sampled row (every 128th) that matches, or -1 when
   * fewer than 4 do: the matches are rare, or too few to tell. One sampled match says little: 23 matches at 751k
   * listings put one in a sample by chance, and the loop then read 680k rows for a page (~4 ms); the row set
   * takes ~0.5 ms.
   */
  private spanOfFour(p: Pred, c: Columns, from: number): number {
    let seen = 0;
    for (let i = from; i < c.n; i += 128) if (this.test(p, c, i) && ++seen >= 4) return i - from + 128;
    return -1;
  }

  /** Count over all matches; min, max, average and median over the priced ones (median via rank buckets). */
  stats(f: ListingFilters, hint: PrimaryHint = null): ScanStats {
    const empty: ScanStats = { count: 0, min: null, max: null, average: null, median: null };
    const p = this.compile(f, hint);
    if (!p) return empty;
    const c = this.cols!;
    // A price bound excludes listings without a price; with no filter at all they count, so that is not this case.
    const onlyPrice =
      (f.min_price !== undefined || f.max_price !== undefined) &&
      Object.entries(f).every(([k, v]) => v === undefined || k === 'min_price' || k === 'max_price');
    if (onlyPrice) return this.priceRange(c, f.min_price ?? -Infinity, f.max_price ?? Infinity);
    const buckets = (this.bucketsBuf ??= new Uint32Array((c.order.length >> BUCKET_BITS) + 1)).fill(0);
    const acc = this.accBuf.fill(0); // count, priced, sum
    let inSet: (i: number) => boolean = (i) => this.test(p, c, i);
    if (p.primary.kind !== 'list') {
      // The matching rows as a bitmap, then whichever side is smaller accumulated a set bit at a time.
      const res = this.rowSet(p, c);
      if (popcount(res, c.n) * 2 <= c.n) accumulateBits(res, c.n, 0, c.rank, c.price, BUCKET_BITS, buckets, acc);
      else {
        const t = this.totals(c);
        accumulateBits(res, c.n, 1, c.rank, c.price, BUCKET_BITS, buckets, acc);
        for (let b = 0; b < buckets.length; b++) buckets[b] = t.buckets[b] - buckets[b];
        acc[0] = c.n - acc[0];
        acc[1] = t.priced - acc[1];
        acc[2] = t.sum - acc[2];
      }
      inSet = (i) => ((res[i >>> 5] >>> (i & 31)) & 1) === 1;
    } else {
      // q with a rare term: its filtered row list (under 0.5 % of the listings) drives the loop.
      this.each(p, c, 0, (cand, k) => {
        accumulate(cand, k, c.rank, c.price, buckets, acc);
        return undefined;
      });
    }
    const [count, priced, sum] = acc;
    if (priced === 0) return { ...empty, count };
    // The k-th smallest matching price (0-based): find its bucket, then walk that bucket in price order.
    const kth = (k: number): number => {
      let b = 0;
      while (k >= buckets[b]) k -= buckets[b++];
      const end = Math.min(c.order.length, (b + 1) << BUCKET_BITS);
      for (let pos = b << BUCKET_BITS; pos < end; pos++) {
        const i = c.order[pos];
        if (inSet(i) && k-- === 0) return c.price[i];
      }
      throw new Error('median bucket walk out of range');
    };
    const mid = priced >> 1;
    const median = priced % 2 ? kth(mid) : (kth(mid - 1) + kth(mid)) / 2;
    return { count, min: kth(0), max: kth(priced - 1), average: round2(sum / priced), median };
  }

  /**
   * The rows matching every condition, as a bitmap (valid until the next call): an equality is a
   * cached per-value bitmap, a range the difference of two cumulative bin bitmaps plus a row test in
   * the bins it cuts through, q its term bitmap; they are ANDed a word (32 rows) at a time.
   */
  private rowSet(p: Pred, c: Columns): Uint32Array {
    const W = wordCount(c.n);
    const res = (this.resBuf ??= new Uint32Array(W));
    const tmp = (this.tmpBuf ??= new Uint32Array(W));
    let first = true;
    const and = (src: Uint32Array) => {
      if (first) res.set(src);
      else for (let w = 0; w < W; w++) res[w] &= src[w];
      first = false;
    };
    if (p.loc) and(this.eqWords(p.loc, p.locCode, c.n));
    if (p.owner) and(this.eqWords(c.owner_id, p.owner, c.n));
    if (p.type) and(this.eqWords(c.property_type, p.type, c.n));
    if (p.furn) and(this.eqWords(c.furnishing, p.furn, c.n));
    if (p.shape & BIT.price) {
      this.rangeBins(c.price, c.n).select(p.pLo, p.pHi, tmp);
      and(tmp);
    }
    if (p.shape & BIT.size) {
      this.rangeBins(c.size, c.n).select(p.sLo, p.sHi, tmp);
      and(tmp);
    }
    if (p.shape & BIT.rooms) {
      this.rangeBins(c.rooms, c.n).select(p.rLo, Infinity, tmp);
      and(tmp);
    }
    if (p.bits) {
      tmp.fill(0);
      new Uint8Array(tmp.buffer).set(p.bits);
      and(tmp);
    }
    if (first) res.fill(-1);
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
    let bins = this.binsCache.get(values);
    const c = this.cols!;
    if (!bins)
      this.binsCache.set(
        values,
        (bins = new RangeBins(values, n, values === c.price ? c.order : values === c.size ? c.sizeOrder : null)),
      );
    return bins;
  }
  private readonly binsCache = new Map<Float64Array, RangeBins>();

  /**
   * Stats of a price range alone, without touching the rows: the matches are one run of the price
   * order, found by binary search; the sum comes from prefix sums over the price order (built on
   * first use, 8 bytes a priced listing).
   */
  private priceRange(c: Columns, lo: number, hi: number): ScanStats {
    const at = (pos: number) => c.price[c.order[pos]];
    const from = searchOrder(c.order, c.price, lo, false),
      to = searchOrder(c.order, c.price, hi, true); // [from, to)
    const n = to - from;
    if (n <= 0) return { count: 0, min: null, max: null, average: null, median: null };
    if (!this.prefix) {
      const prefix = new Float64Array(c.order.length + 1);
      for (let k = 0; k < c.order.length; k++) prefix[k + 1] = prefix[k] + at(k);
      this.prefix = prefix;
    }
    const mid = from + (n >> 1);
    return {
      count: n,
      min: at(from),
      max: at(to - 1),
      average: round2((this.prefix[to] - this.prefix[from]) / n),
      median: n % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2,
    };
  }
  private prefix: Float64Array | null = null;

  /**
   * Stats of one city and property type, within a price range or not, from the similar index's group (its
   * priced listings in price order): two binary searches and the group's running price sums, at every group
   * size. null when the filters are any other shape.
   */
  cityTypeStats(f: ListingFilters): ScanStats | null {
    for (const k in f) {
      const v = f[k as keyof ListingFilters];
      if (v !== undefined && !CITY_TYPE_KEYS.has(k)) return null;
    }
    if (f.location_column !== 'city_id' || f.location_id === undefined || f.property_type === undefined) return null;
    const city = this.code('city_id', f.location_id),
      type = this.code('property_type', f.property_type);
    if (city < 0 || type < 0) return { count: 0, min: null, max: null, average: null, median: null };
    const c = this.columns();
    const g = this.similar().group(city, type);
    const ranged = f.min_price !== undefined || f.max_price !== undefined;
    const from = ranged ? searchOrder(g.rows, c.price, f.min_price ?? -Infinity, false) : 0,
      to = ranged ? searchOrder(g.rows, c.price, f.max_price ?? Infinity, true) : g.rows.length; // [from, to)
    const n = Math.max(0, to - from);
    const count = n + (ranged ? 0 : g.unpriced); // a price bound excludes listings without a price
    if (n === 0) return { count, min: null, max: null, average: null, median: null };
    if (!g.prefix) {
      g.prefix = new Float64Array(g.rows.length + 1);
      for (let k = 0; k < g.rows.length; k++) g.prefix[k + 1] = g.prefix[k] + c.price[g.rows[k]];
    }
    const at = (pos: number) => c.price[g.rows[pos]];
    const mid = from + (n >> 1);
    return {
      count,
      min: at(from),
      max: at(to - 1),
      average: round2((g.prefix[to] - g.prefix[from]) / n),
      median: n % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2,
    };
  }

  /** Priced rows, their price sum and rank-bucket counts over all listings (once per snapshot). */
  private totals(c: Columns) {
    if (this.allTotals) return this.allTotals;
    const buckets = new Uint32Array((c.order.length >> BUCKET_BITS) + 1);
    const acc = new Float64Array(3);
    for (let start = 0; start < c.n; start += CHUNK) {
      const end = Math.min(c.n, start + CHUNK);
      for (let i = start; i < end; i++) this.cand[i - start] = i;
      accumulate(this.cand, end - start, c.rank, c.price, buckets, acc);
    }
    return (this.allTotals = { priced: acc[1], sum: acc[2], buckets });
  }
  private allTotals: { priced: number; sum: number; buckets: Uint32Array } | null = null;
}
