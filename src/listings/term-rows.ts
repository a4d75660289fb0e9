// The q terms' rows for the column scan: precomputed bitmaps of frequent terms, short row lists of rare ones, cached.
import type { Database, Statement } from 'better-sqlite3';
import { andWords } from './scan-loops.ts';

export class TermRows {
  private readonly bitmap: Statement;
  private readonly ftsRows: Statement;
  private readonly bitmapCache = new Map<string, Uint8Array | null>();
  private readonly rareCache = new Map<string, Uint32Array>();
  private bitmapTerms: Set<string> | null = null;
  private termsBuf: Uint8Array | null = null;

  constructor(private readonly db: Database) {
    this.bitmap = db.prepare('SELECT bits FROM listing_term_bitmaps WHERE term = ?').pluck();
    this.ftsRows = db.prepare('SELECT rowid FROM listings_fts WHERE listings_fts MATCH ?').pluck();
  }

  /** Whether the term has a precomputed bitmap, without reading it (the terms' names, read once). */
  hasBitmap(term: string): boolean {
    this.bitmapTerms ??= new Set(this.db.prepare('SELECT term FROM listing_term_bitmaps').pluck().all() as string[]);
    return this.bitmapTerms.has(term);
  }

  /** A term's precomputed bitmap (terms in at least 0.5 % of listings, see build-snapshot/text-index.ts), or null. */
  private bitmapOf(term: string): Uint8Array | null {
    let bits = this.bitmapCache.get(term);
    if (bits === undefined) {
      const blob = this.bitmap.get(term) as Buffer | undefined;
      bits = blob ? new Uint8Array(blob) : null;
      if (this.bitmapCache.size >= 64) this.bitmapCache.clear(); // 64 × ~94 KB at 751k listings: bounded memory
      this.bitmapCache.set(term, bits);
    }
    return bits;
  }

  /**
   * The rows containing every term. With a rare term (no bitmap) among them: one FTS query for all the
   * rare terms together (their document lists are short, and FTS intersects them in C), kept where every
   * frequent term's bitmap has the row; that list can drive the scan. Only frequent terms: the AND of
   * their bitmaps, a word at a time.
   */
  rows(terms: string[], n: number): { bits: Uint8Array; list: Uint32Array | null } {
    const frequent: Uint8Array[] = [];
    const rare: string[] = [];
    for (const t of terms) {
      const b = this.bitmapOf(t);
      if (b) frequent.push(b);
      else rare.push(t);
    }
    // One frequent term: its bitmap as is (read-only from here on), no 94 KB copy per request.
    if (!rare.length && frequent.length === 1) return { bits: frequent[0], list: null };
    // A scratch buffer, valid for this request only (nothing keeps a compiled filter set): no 94 KB of
    // garbage per request at 751k listings.
    const out = (this.termsBuf ??= new Uint8Array((n + 7) >> 3));
    if (!rare.length) {
      out.set(frequent[0]);
      for (let t = 1; t < frequent.length; t++) andWords(out, frequent[t]);
      return { bits: out, list: null };
    }
    // Filtering the rare rows (a few thousand) costs less than ANDing 94 KB bitmaps, and is fast from the
    // first request on: a byte-wise AND ran ~4 ms a request before V8 had optimised it.
    let list = this.rareRows(rare);
    if (frequent.length) {
      const kept = new Uint32Array(list.length);
      let m = 0;
      for (let j = 0; j < list.length; j++) {
        const i = list[j];
        let all = 1;
        for (let t = 0; t < frequent.length; t++) all &= frequent[t][i >> 3] >> (i & 7);
        kept[m] = i;
        m += all & 1;
      }
      list = kept.subarray(0, m);
    }
    out.fill(0);
    for (let j = 0; j < list.length; j++) {
      const i = list[j];
      out[i >> 3] |= 1 << (i & 7);
    }
    return { bits: out, list };
  }

  /**
   * Rows (ascending) containing every one of these rare terms, from one FTS query, cached: each list is
   * under 0.5 % of the listings, and its FTS query is dearer than a page (docs/performance.md).
   */
  private rareRows(rare: string[]): Uint32Array {
    const key = [...rare].sort().join(' ');
    let rows = this.rareCache.get(key);
    if (!rows) {
      rows = Uint32Array.from(
        this.ftsRows.all(rare.map((t) => `"${t}"`).join(' ')) as number[],
        (rid) => rid - 1,
      ).sort();
      if (this.rareCache.size >= 256) this.rareCache.clear();
      this.rareCache.set(key, rows);
    }
    return rows;
  }
}
