// In-memory column scan over the listing filter columns: bounded time for any filter set, pages and stats.
import type { Database, Statement } from 'better-sqlite3';
import type { ListingFilters } from '../../snapshot-format/listing-sql.ts';
import { round2 } from '../../snapshot-format/price-stats.ts';
import { accumulateBits, firstSetRows, popcount } from './bits.ts';
import { loadColumns, loadGeo } from './columns.ts';
import { type CellPrices, cellPrices } from './near-cells.ts';
import { statsFromCells } from './near-stats.ts';
import { allTotals, cityTypeStats, pricePrefix, priceRangeStats, type Totals } from './price-ranges.ts';
import { rememberedIn } from './remembered.ts';
import { RowSets } from './row-sets.ts';
import { compilePred, type Pred, testRow } from './scan-compile.ts';
import {
  accumulate,
  BUCKET_BITS,
  bitsCollect,
  CHUNK,
  type Columns,
  eqCollect,
  type GeoColumns,
  type PrimaryHint,
  rangeCollect,
  type ScanStats,
  wordsOf,
} from './scan-loops.ts';
import { SimilarIndex } from './similar.ts';
import { TermRows } from './term-rows.ts';

export type { PrimaryHint, ScanStats };
export { rememberedIn };

/** The shortest chunk of a page's scan: each chunk costs a collect and a narrow() call of its own. */
const MIN_CHUNK = 512;

/**
 * The columns are loaded when the snapshot is prepared (prepareNear); about 64 bytes per listing, plus ~3 MB
 * per range column's bin bitmaps and up to 48 equality bitmaps (~94 KB each at 751k listings) once stats use
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
    this.cols ??= loadColumns(this.db);
    return this.cols;
  }

  /**
   * A value's code in its column (0 for no value, -1 for a value no listing has), read once each (see
   * rememberedIn): a statement per filter value cost every page and stats call.
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

  /** The near filter's columns (every listing's point, and the cells), loaded on its first use. */
  points(): GeoColumns {
    this.geo ??= loadGeo(this.db);
    return this.geo;
  }
  private geo: GeoColumns | null = null;

  private sets: RowSets | null = null;
  private rowSets(): RowSets {
    this.sets ??= new RowSets(this.columns());
    return this.sets;
  }

  private similarIndex: SimilarIndex | null = null;
  /** The similar-listings index over these columns (similar.ts), built on first use. */
  similar(): SimilarIndex {
    this.similarIndex ??= new SimilarIndex(this.columns());
    return this.similarIndex;
  }

  private bucketsBuf: Uint32Array | null = null;
  private readonly accBuf = new Float64Array(3);

  private compile(f: ListingFilters, hint: PrimaryHint = null): Pred | null {
    return compilePred(
      f,
      hint,
      this.columns(),
      (column, value) => this.code(column, value),
      this.terms,
      () => this.points(),
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
      if (k && narrow) k = narrow(cand, k);
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
      // So few rows match that the chunked loop would read to the end: the row set costs a few word
      // operations per condition, and the page is its first set bits.
      firstSetRows(this.rowSets().rowSet(p, c), c.n, afterRid, limit, out);
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
   * listings put one in a sample by chance, and the loop then read 680k rows for a page, several times what the
   * row set costs.
   */
  private spanOfFour(p: Pred, c: Columns, from: number): number {
    let seen = 0;
    for (let i = from; i < c.n; i += 128) if (testRow(p, i) && ++seen >= 4) return i - from + 128;
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
    const fromCells = p.near && statsFromCells(f, p, c, this.nearCells());
    if (fromCells) return fromCells;
    const buckets = (this.bucketsBuf ??= new Uint32Array((c.order.length >> BUCKET_BITS) + 1)).fill(0);
    const acc = this.accBuf.fill(0); // count, priced, sum
    let inSet: (i: number) => boolean = (i) => testRow(p, i);
    if (p.primary.kind !== 'list') {
      // The matching rows as a bitmap, then whichever side is smaller accumulated a set bit at a time.
      const res = this.rowSets().rowSet(p, c);
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

  /** Stats of a price range alone (see priceRangeStats), with the price order's prefix sums built on first use. */
  private priceRange(c: Columns, lo: number, hi: number): ScanStats {
    this.prefix ??= pricePrefix(c);
    return priceRangeStats(c, lo, hi, this.prefix);
  }
  private prefix: Float64Array | null = null;
  /** The near cells' counts, price sums, sorted price ranks and rank histograms (near-stats.ts). */
  private nearCells(): CellPrices {
    this.cellPriceRanks ??= cellPrices(this.columns(), this.points().cells);
    return this.cellPriceRanks;
  }
  private cellPriceRanks: CellPrices | null = null;

  /**
   * Stats of near alone or with one value of a CELL_COLUMNS filter from the cells (near-stats.ts); null for another
   * shape, a circle whose edge holds half its box's listings, or a value no listing has.
   */
  nearCellStats(f: ListingFilters): ScanStats | null {
    const p = f.near ? this.compile(f) : null;
    return p && statsFromCells(f, p, this.cols!, this.nearCells());
  }

  /** Loads the near filter's columns and builds its cells' sets now (the snapshot's preparation), not in a request. */
  prepareNear(): void {
    this.nearCells();
  }

  /** Stats of one city and property type from the similar index's group (price-ranges.ts' cityTypeStats). */
  cityTypeStats(f: ListingFilters): ScanStats | null {
    return cityTypeStats(
      f,
      (column, value) => this.code(column, value),
      () => this.columns(),
      () => this.similar(),
    );
  }

  private totals(c: Columns) {
    this.allTotals ??= allTotals(c);
    return this.allTotals;
  }
  private allTotals: Totals | null = null;
}
