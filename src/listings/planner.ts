// Listing filters → SQL from a fixed vocabulary, with the driving index chosen from build-time statistics.
import type { Database, Statement } from 'better-sqlite3';
import { boundsOf, EQ_FILTERS, eqColumn, NEAR_FILTER, RANGE_FILTERS } from '../../snapshot-format/listing-filters.ts';
import {
  BITMAP_MIN_SHARE,
  type Driver,
  explainPage,
  type ListingFilters,
  matchSql,
  pageSql,
  params,
  type RangeCol,
} from '../../snapshot-format/listing-sql.ts';
import { NearCounts, registerNear } from './near-counts.ts';
import {
  COST,
  hintOf,
  rowCheckCost,
  SCAN_MIN_UNITS,
  SCAN_UNITS_PER_LISTING,
  STATEMENT_CACHE_SIZE,
  shapeKey,
  statsFromPrices,
} from './plan-costs.ts';
import { rememberedIn } from './remembered.ts';
import { ListingScan, type PrimaryHint, type ScanStats } from './scan.ts';

export { shapeKey, statsFromPrices } from './plan-costs.ts';

/**
 * A filter's estimated matches as a driver (`n`), what FTS reads whatever the page size (`merge`), and the rows the
 * column scan's loop reads over it when that is more than its matches (`loop`: near's band of latitudes).
 */
interface Estimate {
  driver: Driver;
  n: number;
  merge?: number;
  loop?: number;
  /** false for a filter no index drives (its table entry's drivesIndex): it counts in the matches and the hint. */
  drivesIndex?: boolean;
}

interface Quantiles {
  values: Float64Array;
  nonnull: number;
}

/** Chooses drivers from build-time statistics and runs cached statements (one per shape). */
export class ListingQueries {
  private readonly cache = new Map<string, Statement>();
  private readonly total: number;
  private readonly valueCount: Statement;
  private readonly termDocs: Statement;
  private readonly quantiles = new Map<string, Quantiles>();
  readonly scan: ListingScan;
  private readonly near: NearCounts;
  constructor(private readonly db: Database) {
    this.scan = new ListingScan(db);
    registerNear(db, this.scan);
    // Built with the snapshot's statements, not by its first near request (~0.3 s at 1M): see docs/performance.md.
    this.scan.prepareNear();
    this.near = new NearCounts(db);
    this.total =
      (db.prepare("SELECT count FROM listing_stats WHERE scope = ''").pluck().get() as number | undefined) ?? 0;
    this.valueCount = db.prepare('SELECT n FROM listing_value_counts WHERE column = ? AND value = ?').pluck();
    this.termDocs = db.prepare('SELECT docs FROM listing_terms WHERE term = ?').pluck();
    const rows = db.prepare('SELECT column, value, nonnull FROM listing_quantiles ORDER BY column, k').all() as {
      column: string;
      value: number;
      nonnull: number;
    }[];
    const by = new Map<string, { v: number[]; nonnull: number }>();
    for (const r of rows) {
      const e = by.get(r.column) ?? { v: [], nonnull: r.nonnull };
      e.v.push(r.value);
      by.set(r.column, e);
    }
    for (const [c, e] of by) this.quantiles.set(c, { values: Float64Array.from(e.v), nonnull: e.nonnull });
  }

  /** Rows per value and documents per term (unknown ones count 0), read once each (see rememberedIn). */
  private readonly counts = new Map<string, number>();
  /** Listings containing the term (listing_terms), cached. */
  private docsOf(term: string): number {
    return this.counted(`t\u0000${term}`, () => this.termDocs.get(term) as number | undefined);
  }

  private counted(key: string, read: () => unknown): number {
    return rememberedIn(this.counts, key, () => (read() as number | undefined) ?? 0);
  }

  /** Estimated number of listings in [lo, hi] of a range column, from the quantiles. */
  private rangeEstimate(col: RangeCol, lo: number | undefined, hi: number | undefined): number {
    const q = this.quantiles.get(col);
    if (!q) return 0;
    const n = q.values.length;
    let inside = 0;
    for (let i = 0; i < n; i++) {
      const x = q.values[i];
      if ((lo === undefined || x >= lo) && (hi === undefined || x <= hi)) inside++;
    }
    // One more quantile step of slack so that a narrow range between two quantiles is not estimated as 0.
    return Math.min(q.nonnull, Math.ceil(((inside + 1) / n) * q.nonnull));
  }

  /**
   * Estimated matches per present filter, keyed by driver, and what FTS reads whatever the page size
   * (`merge`): every document of the terms to intersect several, or the documents of one term before
   * the page's position (`afterRid`, a cursor's), which it steps over one by one.
   */
  estimates(f: ListingFilters, afterRid = 0): Estimate[] {
    const out: Estimate[] = [];
    if (f.fts) {
      let n = this.total;
      let sum = 0;
      for (const t of f.fts.terms) {
        const docs = this.docsOf(t);
        n = Math.min(n, docs);
        sum += docs;
      }
      // Several terms: FTS5 reads their document lists to intersect them, whatever the page size
      // ("centre near": 2 × 122k documents, no match, 8.7 ms). One term: the documents before the position.
      const before = Math.min(1, afterRid / Math.max(1, this.total));
      const merge = f.fts.terms.length > 1 ? sum * COST.ftsMergeDoc : n * before * COST.ftsSkipDoc;
      out.push({ driver: { kind: 'fts' }, n, merge });
    }
    for (const e of EQ_FILTERS) {
      const value = f[e.key];
      if (value === undefined) continue;
      const col = eqColumn(e.key, f);
      out.push({
        driver: { kind: 'eq', col },
        n: this.counted(`${col}\u0000${value}`, () => this.valueCount.get(col, value)),
      });
    }
    for (const r of RANGE_FILTERS) {
      const b = boundsOf(r, f);
      if (b) out.push({ driver: { kind: 'range', col: r.column }, n: this.rangeEstimate(r.column, b.lo, b.hi) });
    }
    // City and property type together: one range of (city, type, price) in the composite index.
    if (f.location_column === 'city_id' && f.property_type !== undefined) {
      const cityType = `${f.location_id}\u0001${f.property_type}`;
      let n = this.counted(`city_type\u0000${cityType}`, () => this.valueCount.get('city_type', cityType));
      if (f.min_price !== undefined || f.max_price !== undefined) {
        n = Math.min(
          n,
          Math.ceil(
            (n * this.rangeEstimate('price_eur', f.min_price, f.max_price)) /
              Math.max(1, this.quantiles.get('price_eur')?.nonnull ?? 1),
          ) + 1,
        );
      }
      out.push({ driver: { kind: 'city_type' }, n });
    }
    if (f.near) {
      const { drivesIndex } = NEAR_FILTER;
      out.push({ driver: { kind: 'near' }, n: this.near.estimate(f.near), loop: this.near.band(f.near), drivesIndex });
    }
    return out;
  }

  /**
   * The cheapest way to produce `limit` rows (or all rows when limit is null, for stats). An ordered
   * driver (an (equality column, rid) index, FTS, or the rowid itself) reads about limit / selectivity
   * rows, all of its rows when little matches; an unordered one (a range, city + type) reads its whole
   * range and sorts it. Every row read also pays for the residual checks, and q checked per row is dear.
   */
  choose(f: ListingFilters, limit: number | null): Driver {
    return this.plan(f, limit).driver;
  }

  /**
   * The index plan and its cost, plus `worst`: the rows it reads if the filters match far fewer rows
   * than independence suggests (correlated filters): the whole driver range, or just the page when
   * the driver is the only filter.
   */
  plan(
    f: ListingFilters,
    limit: number | null,
    afterRid = 0,
  ): { driver: Driver; cost: number; worst: number; hint: PrimaryHint } {
    const est = this.estimates(f, afterRid);
    const N = Math.max(1, this.total);
    if (est.length === 0)
      return {
        driver: { kind: 'rowid' },
        cost: limit === null ? N : limit,
        worst: limit === null ? N : limit,
        hint: null,
      };
    const matches = Math.max(
      est.reduce((m, e) => m * (e.n / N), N),
      1e-9,
    );
    const perRow = (d: Driver) =>
      (d.kind === 'fts' ? COST.ftsRow : COST.row) + (f.fts && d.kind !== 'fts' ? COST.ftsCheck : 0) + rowCheckCost(f);
    const read = (n: number, ordered: boolean) =>
      limit === null ? n : ordered ? Math.min(n, (limit * n) / matches) : n;
    let best: Driver = { kind: 'rowid' };
    let bestCost = read(N, true) * perRow(best);
    let bestN = N;
    let hint: PrimaryHint = null;
    let hintN = Infinity;
    let bestMerge = 0;
    for (const e of est) {
      const ordered = e.driver.kind === 'eq' || e.driver.kind === 'fts';
      const cost =
        read(e.n, ordered) * perRow(e.driver) + (ordered || limit === null ? 0 : e.n * COST.sortRow) + (e.merge ?? 0);
      if (e.drivesIndex !== false && cost < bestCost) {
        best = e.driver;
        bestCost = cost;
        bestN = e.n;
        bestMerge = e.merge ?? 0;
      }
      const h = hintOf(e.driver);
      if (h && (e.loop ?? e.n) < hintN) {
        hint = h;
        hintN = e.loop ?? e.n;
      }
    }
    // q checked per row through FTS costs about a millisecond a row for common words: never do that,
    // the scan checks q against a bitmap instead.
    if (f.fts && best.kind !== 'fts') return { driver: best, cost: bestCost, worst: Infinity, hint };
    const alone =
      est.length === 1 &&
      est[0].drivesIndex !== false &&
      limit !== null &&
      best.kind !== 'range' &&
      best.kind !== 'city_type';
    const worst = alone
      ? bestCost
      : bestN * perRow(best) +
        (best.kind === 'range' || best.kind === 'city_type' ? bestN * COST.sortRow : 0) +
        bestMerge;
    return { driver: best, cost: bestCost, worst, hint };
  }

  /** The statement for a shape (which filters, which driver, and the page size), from a bounded LRU cache. */
  private stmt(kind: 'page' | 'match', f: ListingFilters, driver: Driver, limit?: number): Statement {
    const key = `${kind}|${driver.kind}|${'col' in driver ? driver.col : ''}|${shapeKey(f)}|${limit ?? ''}`;
    let s = this.cache.get(key);
    if (s) {
      this.cache.delete(key); // most recently used last
    } else {
      s = this.db.prepare(kind === 'page' ? pageSql(f, driver, limit) : matchSql(f, driver)).pluck();
      if (this.cache.size >= STATEMENT_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(key, s);
    return s;
  }

  /**
   * Where the best index plan would read more rows than a scan of the columns costs, scan instead:
   * the scan's cost is fixed (one pass), an index plan's grows with what it must read.
   */
  private useScan(worst: number): boolean {
    return worst > Math.max(SCAN_MIN_UNITS, this.total * SCAN_UNITS_PER_LISTING);
  }

  /** rids of one page: rid > afterRid, ascending, at most `limit` rows. */
  page(f: ListingFilters, afterRid: number, limit: number): number[] {
    const { driver, worst, hint } = this.plan(f, limit, afterRid);
    if (this.useScan(worst)) return this.scan.page(f, afterRid, limit, hint);
    if (driver.kind === 'fts' && this.scanFindsTerms(f.fts!.terms)) return this.scan.page(f, afterRid, limit, 'fts');
    const p = params(f);
    p.after = afterRid; // set, not spread into a copy: a copy's added property took V8's slow path (~1 % of a page)
    return this.stmt('page', f, driver, limit).all(p) as number[];
  }

  /**
   * Whether the column scan finds a page of these terms at about the cost of the page itself: every term
   * has a bitmap (a few words read per page, at any depth), or one of them is rare enough for its rows to be
   * a short list the scan reads once and keeps. FTS costs several times that for a common word's first page
   * and more for each page after (docs/performance.md).
   */
  private scanFindsTerms(terms: string[]): boolean {
    const short = Math.max(1, Math.ceil(this.total * BITMAP_MIN_SHARE));
    let everyBitmap = true;
    for (const t of terms) {
      if (this.scan.terms.hasBitmap(t)) continue;
      everyBitmap = false;
      if (this.docsOf(t) <= short) return true;
    }
    return everyBitmap;
  }

  /** count, min, max, average and median price of the matching listings. */
  stats(f: ListingFilters): ScanStats {
    const cityType = this.scan.cityTypeStats(f);
    if (cityType) return cityType;
    const { driver, worst, hint } = this.plan(f, null);
    if (this.useScan(worst)) return this.scan.stats(f, hint);
    return statsFromPrices(this.matchingPrices(f, driver));
  }

  /** Every matching rid, ascending, through the index plan (tests compare the scan against this). */
  matchingRids(f: ListingFilters): number[] {
    const driver = this.choose(f, null);
    return this.stmt('page', f, driver).all({ ...params(f), after: 0, limit: -1 }) as number[];
  }

  /** Price of every matching listing (null where unknown), through the index plan. */
  matchingPrices(f: ListingFilters, driver = this.choose(f, null)): (number | null)[] {
    return this.stmt('match', f, driver).all(params(f)) as (number | null)[];
  }
}

/** EXPLAIN QUERY PLAN detail lines of the page statement the planner picks for a filter set. */
export function planOf(db: Database, f: ListingFilters, limit = 21): string[] {
  return explainPage(db, f, new ListingQueries(db).choose(f, limit), limit);
}
