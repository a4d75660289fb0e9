// npm run bench:queries [-- --quick | --listings N --seed S | --db FILE] [--n 1000] [--budget 60] [--only listings-page,owners]
// Worst case per query shape, without a server: seeded random filter sets against every collection endpoint's
// statements (the route modules' prepare(db), the planner in src/listings/planner.ts); prints max / p99 and the slowest
// sets with their driver and EXPLAIN QUERY PLAN. Used by bench/serve.ts too (runQueryFuzz). The statements run in a
// child process per endpoint (this file with --child), so a runaway one can be killed at the --cap.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { type Driver, type ListingFilters, matchSql, pageSql, params } from '../snapshot-format/listing-sql.ts';
import { statsOf } from '../snapshot-format/price-stats.ts';
import { shapeKey } from '../src/listings/planner.ts';
import { ftsQuery } from '../src/routes/support/full-text.ts';
// app.ts first: it imports routes/index.ts, which imports every route module (the order the server loads them in;
// importing a route module first would evaluate routes/index.ts before that module's exports exist).
import '../src/http/app.ts';
import { ADJECTIVES, FEATURES, PROPERTY_TYPES, RARE, SURROUNDINGS } from '../generate/listing-text.ts';
import * as insuranceRoute from '../src/routes/insurance.ts';
import * as internetRoute from '../src/routes/internet.ts';
import * as listingsRoute from '../src/routes/listings.ts';
import * as locationsRoute from '../src/routes/locations.ts';
import * as ownersRoute from '../src/routes/owners.ts';
import * as platformsRoute from '../src/routes/platforms.ts';
import {
  ensureSnapshot,
  fmt,
  isMain,
  lpad,
  pad,
  pct,
  RESULTS,
  type Rng,
  ROOT,
  rng,
  snapshotProblem,
  termDocs,
  verdict,
} from './common.ts';

export const SHAPE_TARGET_MS = 5;
const LOCALES = ['en', 'nl', 'de', 'fr', 'es'];
/** Words no listing contains: the FTS index answers them from an empty doclist. */
const ABSENT = ['zzqxv', 'kasteel', 'xylofoon', 'qwertyuiop'];

type Query = Record<string, string | number>;
export interface Sample {
  query: Query;
  ms: number;
  timedRuns: number;
  killed?: boolean;
  driver?: string;
  shape?: string;
}
export interface Slow extends Sample {
  estimates?: string;
  matches?: number;
  plan?: string[];
}
export interface EndpointReport {
  endpoint: string;
  planned: number;
  done: number;
  budget_hit: boolean;
  killed: number;
  wall_s: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  slowest: Slow[];
}
export interface FuzzReport {
  db: string;
  listings: number;
  seed: number;
  runs: number;
  cap_s: number;
  endpoints: EndpointReport[];
}
export interface FuzzOptions {
  n: number;
  seed: number;
  runs: number;
  top: number;
  budgetS: number;
  capS: number;
  only?: string[];
  explain: boolean;
  log?: (s: string) => void;
}

const now = () => process.hrtime.bigint();
const since = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/**
 * One figure per filter set: an untimed first run (statement preparation, page cache, lazy loads such
 * as in-memory columns and bin bitmaps), then the minimum of `runs` timed runs (noise only ever adds
 * time); no more timed runs once one took over 4× the target (repeating a clear miss only costs wall
 * time). The untimed run does not decide that: it is the one that pays for the one-time loads.
 * `onRun` is called before every run, so the parent can apply its cap to each run, not to the set (and a
 * longer one to the untimed run, which may read pages the OS has evicted).
 */
function measure(
  fn: () => unknown,
  runs: number,
  onRun: (timed: boolean) => void = () => {},
): { ms: number; timedRuns: number } {
  onRun(false);
  let t0 = now();
  fn();
  let best = Infinity,
    n = 0;
  while (n < Math.max(1, runs)) {
    onRun(true);
    t0 = now();
    fn();
    const ms = since(t0);
    best = Math.min(best, ms);
    n++;
    if (ms > 4 * SHAPE_TARGET_MS) break;
  }
  return { ms: best, timedRuns: n };
}

const driverName = (d: Driver) => (d.kind === 'eq' || d.kind === 'range' ? `${d.kind}:${d.col}` : d.kind);

// ------------------------------------------------------------------------------------------ value pools

interface Pools {
  locations: Record<'province' | 'city' | 'neighbourhood', string[]>;
  ownersBig: string[];
  ownersAll: string[];
  words: { common: string[]; mid: string[]; rare: string[]; absent: string[] };
  prices: number[];
  sizes: number[];
  /** City centres (latitude, longitude), by listings descending: near's points. */
  centres: [number, number][];
  small: Record<string, { words: string[]; values: Record<string, (string | number)[]> }>;
}

function tokens(text: string | null | undefined): string[] {
  if (!text) return [];
  try {
    return ftsQuery(text).terms;
  } catch {
    return [];
  }
}
const distinct = (db: Database.Database, sql: string) => db.prepare(sql).pluck().all() as (string | number)[];

/** Values to draw filters from; the listing words (document counts from the FTS vocabulary, slow for common words) only when asked. */
function pools(db: Database.Database, listingWords: boolean): Pools {
  const locations = { province: [] as string[], city: [] as string[], neighbourhood: [] as string[] };
  for (const r of db.prepare('SELECT id, type FROM locations').all() as { id: string; type: keyof typeof locations }[])
    locations[r.type]?.push(r.id);
  const owners = db
    .prepare("SELECT value FROM listing_value_counts WHERE column = 'owner_id' ORDER BY n DESC")
    .pluck()
    .all() as string[];

  // Listing words from the generator's vocabulary (every locale), bucketed by how many listings contain them.
  const texts: (string | undefined)[] = [];
  for (const a of ADJECTIVES) texts.push(a.en, a.nl[0], a.de, a.fr[0], a.es[0]);
  for (const t of [...FEATURES, ...SURROUNDINGS, ...RARE]) texts.push(t.en, t.nl, t.de, t.fr, t.es);
  for (const p of PROPERTY_TYPES) texts.push(p.en, p.nl, p.de, p.fr, p.es);
  for (const r of RARE) texts.push(r.word);
  const docs = termDocs(db);
  const words = { common: [] as string[], mid: [] as string[], rare: [] as string[], absent: [...ABSENT] };
  for (const w of listingWords ? new Set(texts.flatMap((t) => tokens(t))) : []) {
    const n = docs(w);
    (n === 0 ? words.absent : n < 5_000 ? words.rare : n < 100_000 ? words.mid : words.common).push(w);
  }
  const quantiles = (col: string) =>
    db.prepare('SELECT value FROM listing_quantiles WHERE column = ? ORDER BY k').pluck().all(col) as number[];

  const nameWords = (sql: string) =>
    [...new Set((db.prepare(sql).pluck().all() as string[]).flatMap(tokens))].slice(0, 300);
  const small: Pools['small'] = {
    owners: {
      words: nameWords('SELECT name FROM owners LIMIT 400'),
      values: { type: distinct(db, 'SELECT DISTINCT type FROM owners WHERE type IS NOT NULL') },
    },
    plans: {
      words: nameWords('SELECT name FROM internet_plans'),
      values: {
        provider_id: distinct(db, 'SELECT id FROM internet_providers'),
        connection_type: distinct(
          db,
          'SELECT DISTINCT connection_type FROM internet_plans WHERE connection_type IS NOT NULL',
        ),
        min_download_mbps: [0, 50, 100, 250, 500, 1000, 2000, 8000, 100_000],
        max_monthly_price_cents: [0, 1000, 3000, 4500, 6000, 9000, 20_000, 10_000_000],
      },
    },
    insurance: {
      words: nameWords('SELECT name FROM insurance_products'),
      values: {
        provider_id: distinct(db, 'SELECT id FROM insurance_providers'),
        insurance_type: distinct(
          db,
          'SELECT DISTINCT insurance_type FROM insurance_products WHERE insurance_type IS NOT NULL',
        ),
        availability: distinct(
          db,
          'SELECT DISTINCT availability FROM insurance_products WHERE availability IS NOT NULL',
        ),
      },
    },
    platforms: {
      words: nameWords('SELECT name FROM platforms'),
      values: {
        type: distinct(db, 'SELECT DISTINCT type FROM platforms WHERE type IS NOT NULL'),
        category: distinct(db, 'SELECT DISTINCT category FROM platforms WHERE category IS NOT NULL'),
      },
    },
    locations: {
      words: nameWords('SELECT name FROM locations'),
      values: { type: ['province', 'city', 'neighbourhood'], parent_id: [...locations.province, ...locations.city] },
    },
  };
  return {
    locations,
    ownersBig: owners.slice(0, 20),
    ownersAll: owners,
    words,
    prices: quantiles('price_eur'),
    sizes: quantiles('size_m2'),
    centres: db
      .prepare(
        `SELECT l.latitude, l.longitude FROM locations l JOIN listing_value_counts c ON c.column = 'city_id' AND c.value = l.id
         WHERE l.latitude IS NOT NULL ORDER BY c.n DESC`,
      )
      .raw()
      .all() as [number, number][],
    small,
  };
}

// ------------------------------------------------------------------------------------------ random filter sets

function qText(r: Rng, w: Pools['words']): string {
  const bucket = () => {
    const x = r.next();
    const b = x < 0.35 ? w.common : x < 0.6 ? w.mid : x < 0.85 ? w.rare : w.absent;
    return b.length ? b : w.common.length ? w.common : w.absent;
  };
  const n = r.chance(0.6) ? 1 : r.chance(0.7) ? 2 : 3;
  return Array.from({ length: n }, () => r.pick(bucket())).join(' ');
}

/** A realistic value most of the time, an extreme one (0, huge, the schema's bounds) otherwise. */
const rangeValue = (r: Rng, quantiles: number[], extremes: number[]) =>
  r.chance(0.8) && quantiles.length ? Math.round(r.pick(quantiles)) : r.pick(extremes);

function listingQuery(r: Rng, p: Pools): Query {
  const gens: Record<string, () => string | number> = {
    q: () => qText(r, p.words),
    location_id: () => {
      const x = r.next();
      if (x < 0.05) return 'loc_unknown_9999';
      const level = x < 0.3 ? 'province' : x < 0.7 ? 'city' : 'neighbourhood';
      return r.pick(p.locations[level].length ? p.locations[level] : p.locations.city);
    },
    owner_id: () => (r.chance(0.1) ? 'own_unknown_99999' : r.chance(0.45) ? r.pick(p.ownersBig) : r.pick(p.ownersAll)),
    min_price: () => rangeValue(r, p.prices, [0, 1, 20_000, 1_000_000, 10_000_000]),
    max_price: () => rangeValue(r, p.prices, [0, 1, 100, 20_000, 10_000_000]),
    min_size: () => rangeValue(r, p.sizes, [0, 1, 1_000, 10_000_000]),
    max_size: () => rangeValue(r, p.sizes, [0, 1, 10, 1_000, 10_000_000]),
    min_rooms: () => (r.chance(0.85) ? r.int(0, 8) : r.pick([0, 20, 100])),
    furnishing: () => r.pick(['SHELL', 'FURNISHED', 'UPHOLSTERED']),
    property_type: () => (r.chance(0.1) ? 'castle' : r.pick(PROPERTY_TYPES.map((t) => t.code))),
    // A big city's centre (the densest areas) or any city's, moved up to ~3 km; or anywhere over the country.
    near: () => {
      if (r.chance(0.15) || !p.centres.length)
        return `${(50.7 + r.next() * 2.9).toFixed(4)},${(3.3 + r.next() * 4).toFixed(4)}`;
      const [lat, lon] = r.chance(0.5) ? r.pick(p.centres.slice(0, 3)) : r.pick(p.centres);
      return `${(lat + (r.next() - 0.5) * 0.05).toFixed(5)},${(lon + (r.next() - 0.5) * 0.08).toFixed(5)}`;
    },
    // The largest radius most often: the worst case.
    radius_km: () => (r.chance(0.4) ? 50 : r.pick([0.5, 1, 2, 5, 10, 20, 35])),
  };
  const prob: Record<string, number> = {
    q: 0.3,
    location_id: 0.45,
    owner_id: 0.15,
    min_price: 0.3,
    max_price: 0.3,
    min_size: 0.2,
    max_size: 0.2,
    min_rooms: 0.2,
    furnishing: 0.3,
    property_type: 0.3,
    near: 0.2,
    radius_km: 0.2,
  };
  const names = Object.keys(gens);
  const chosen = r.chance(0.2) ? [r.pick(names)] : names.filter((k) => r.chance(prob[k]));
  const out: Query = {};
  for (const k of chosen) out[k] = gens[k]();
  // near and radius_km go together (one alone is a 400).
  if ((out.near === undefined) !== (out.radius_km === undefined)) {
    out.near ??= gens.near();
    out.radius_km ??= gens.radius_km();
  }
  fixMinMax(out, 'min_price', 'max_price');
  fixMinMax(out, 'min_size', 'max_size');
  return out;
}
/** The route rejects min > max with a 400; a valid request has them in order. */
function fixMinMax(q: Query, lo: string, hi: string) {
  if (q[lo] !== undefined && q[hi] !== undefined && (q[lo] as number) > (q[hi] as number))
    [q[lo], q[hi]] = [q[hi], q[lo]];
}

function smallQuery(r: Rng, pool: Pools['small'][string]): Query {
  const out: Query = {};
  const kinds = [...Object.keys(pool.values), 'q'];
  const chosen = r.chance(0.2) ? [r.pick(kinds)] : kinds.filter(() => r.chance(0.4));
  for (const k of chosen) {
    if (k === 'q')
      out.q = r.chance(0.15)
        ? r.pick(ABSENT)
        : Array.from({ length: r.chance(0.7) ? 1 : 2 }, () => r.pick(pool.words.length ? pool.words : ABSENT)).join(
            ' ',
          );
    else out[k] = r.chance(0.1) && typeof pool.values[k][0] === 'string' ? 'absent_value' : r.pick(pool.values[k]);
  }
  return out;
}

// ------------------------------------------------------------------------------------------ route logic (mirrored)

type ListingStmts = ReturnType<typeof listingsRoute.prepare>;
type AnyFn = (...args: any[]) => any;
/** The route's own logic when src/routes/listings.ts exports it; read dynamically so that the bench still type-checks and runs if the export goes. */
const routeFn = (name: string) => (listingsRoute as Record<string, unknown>)[name] as AnyFn | undefined;

/** toFilters() of src/routes/listings.ts, or a mirror of it: location level by lookup (unknown → city_id), q through ftsQuery. */
export function toListingFilters(st: ListingStmts, q: Query): ListingFilters {
  const viaRoute = routeFn('toFilters');
  if (viaRoute) return viaRoute(st, { locale: 'en', ...q }) as ListingFilters;
  const out: ListingFilters = {
    owner_id: q.owner_id as string | undefined,
    min_price: q.min_price as number | undefined,
    max_price: q.max_price as number | undefined,
    min_size: q.min_size as number | undefined,
    max_size: q.max_size as number | undefined,
    min_rooms: q.min_rooms as number | undefined,
    furnishing: q.furnishing as string | undefined,
    property_type: q.property_type as string | undefined,
  };
  if (q.q !== undefined) out.fts = ftsQuery(String(q.q));
  if (q.location_id !== undefined) {
    const type = st.locationType.get(String(q.location_id));
    out.location_column =
      type === 'province' ? 'province_id' : type === 'neighbourhood' ? 'neighbourhood_id' : 'city_id';
    out.location_id = String(q.location_id);
  }
  return out;
}

/**
 * stats() of src/routes/listings.ts (takes the validated query), or a mirror of it: precomputed scopes for
 * location-only sets, else the planner's stats() (or matching prices + statsOf on older planners).
 */
function listingStats(st: ListingStmts, q: Query, f: ListingFilters): unknown {
  const viaRoute = routeFn('stats');
  if (viaRoute) return viaRoute(st, { locale: 'en', ...q });
  const keys = Object.entries(f)
    .filter(([, x]) => x !== undefined)
    .map(([k]) => k);
  if (keys.every((k) => k === 'location_id' || k === 'location_column')) {
    const pre = st.precomputed.get(f.location_id === undefined ? '' : `location:${f.location_id}`);
    if (pre || f.location_id !== undefined) return pre ?? { count: 0 };
  }
  const planner = st.planner as unknown as Record<string, AnyFn>;
  if (planner.stats) return planner.stats.call(st.planner, f);
  const all = planner.matchingPrices.call(st.planner, f) as (number | null)[];
  const prices = new Float64Array(all.length);
  let k = 0;
  for (const x of all) if (x !== null) prices[k++] = x;
  return [all.length, ...statsOf(prices.subarray(0, k))];
}

/**
 * What the planner will do for a filter set: its index driver, and — on planners that have them
 * (plan(), useScan()) — the estimated cost and whether the in-memory column scan replaces the index plan.
 */
function planOf(
  planner: ListingStmts['planner'],
  f: ListingFilters,
  limit: number | null,
): { driver: Driver; cost?: number; scan: boolean; text: string } {
  const p = planner as unknown as Record<string, AnyFn>;
  const planned = p.plan
    ? (p.plan.call(planner, f, limit) as { driver: Driver; cost: number })
    : { driver: planner.choose(f, limit), cost: undefined };
  const scan = planned.cost !== undefined && p.useScan ? !!p.useScan.call(planner, planned.cost) : false;
  const cost = planned.cost === undefined ? '' : ` ≈${Math.round(planned.cost)}`;
  return {
    ...planned,
    scan,
    text: scan ? `scan (index: ${driverName(planned.driver)}${cost})` : `${driverName(planned.driver)}${cost}`,
  };
}

// ------------------------------------------------------------------------------------------ the fuzz

interface Endpoint {
  name: string;
  what: string;
  gen: (r: Rng) => Query;
  run: (q: Query) => () => unknown;
  describe?: (q: Query) => { driver: string; shape: string };
}

export const ENDPOINTS = [
  'listings-page',
  'listings-page-deep',
  'listings-stats',
  'owners',
  'internet-plans',
  'insurance-products',
  'platforms',
  'locations',
];

function endpoints(db: Database.Database, p: Pools): Endpoint[] {
  const ls = listingsRoute.prepare(db);
  const planner = ls.planner;
  const maxRid = (db.prepare('SELECT max(rid) FROM listings').pluck().get() as number | null) ?? 0;
  const small = (
    name: string,
    what: string,
    pool: Pools['small'][string],
    search: (f: Record<string, unknown>, after: string | null, n: number, locale: string) => unknown[],
  ): Endpoint => ({
    name,
    what,
    gen: (r) => ({ ...smallQuery(r, pool), locale: r.pick(LOCALES) }),
    run: (q) => {
      const { q: text, locale, ...rest } = q;
      const filters = { ...rest, fts: text === undefined ? undefined : ftsQuery(String(text)).expr };
      return () => search(filters, null, 21, String(locale));
    },
  });
  return [
    {
      name: 'listings-page',
      what: 'GET /v1/listings first page: planner.page(filters, 0, 21)',
      gen: (r) => listingQuery(r, p),
      run: (q) => {
        const f = toListingFilters(ls, q);
        return () => planner.page(f, 0, 21);
      },
      describe: (q) => {
        const f = toListingFilters(ls, q);
        return { driver: planOf(planner, f, 21).text, shape: shapeKey(f) };
      },
    },
    {
      // A cursor's position is any rid: a plan that walks up to it (FTS steps over a term's documents one by one)
      // costs more the deeper the page.
      name: 'listings-page-deep',
      what: 'GET /v1/listings after a cursor: planner.page(filters, a random rid, 21)',
      gen: (r) => ({ ...listingQuery(r, p), after_rid: r.int(0, maxRid) }),
      run: ({ after_rid, ...q }) => {
        const f = toListingFilters(ls, q);
        return () => planner.page(f, Number(after_rid), 21);
      },
      describe: ({ after_rid, ...q }) => {
        const f = toListingFilters(ls, q);
        return { driver: `${planOf(planner, f, 21).text} after rid ${after_rid}`, shape: shapeKey(f) };
      },
    },
    {
      name: 'listings-stats',
      what: "GET /v1/listings/stats: the route's stats() (precomputed scope, else the planner)",
      gen: (r) => listingQuery(r, p),
      run: (q) => {
        const f = toListingFilters(ls, q);
        return () => listingStats(ls, q, f);
      },
      describe: (q) => {
        const f = toListingFilters(ls, q);
        return { driver: planOf(planner, f, null).text, shape: shapeKey(f) };
      },
    },
    small('owners', 'GET /v1/owners first page', p.small.owners, ownersRoute.prepare(db).search),
    small('internet-plans', 'GET /v1/internet/plans first page', p.small.plans, internetRoute.prepare(db).plans),
    small(
      'insurance-products',
      'GET /v1/insurance/products first page',
      p.small.insurance,
      insuranceRoute.prepare(db).products,
    ),
    small('platforms', 'GET /v1/platforms first page', p.small.platforms, platformsRoute.prepare(db).search),
    small('locations', 'GET /v1/locations first page', p.small.locations, locationsRoute.prepare(db).search),
  ];
}

function openSnapshot(dbPath: string) {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  db.pragma('query_only = 1');
  db.pragma('mmap_size = 0'); // as the server opens it
  return db;
}

/**
 * The measuring side (a child process, so that a runaway statement can be killed: better-sqlite3 cannot
 * interrupt one). Runs sets `from`..n-1 of one endpoint's seeded sequence and writes, per set, a line
 * {"s":i,"query":…,"driver":…} first, {"r":i,"timed":…} before each run and {"d":i,"ms":…,"runs":…} at the end.
 */
function fuzzChild(dbPath: string, endpoint: string, seed: number, from: number, n: number, runs: number) {
  const db = openSnapshot(dbPath);
  const ep = endpoints(db, pools(db, endpoint.startsWith('listings'))).find((e) => e.name === endpoint);
  if (!ep) throw new Error(`unknown endpoint ${endpoint}; one of ${ENDPOINTS.join(', ')}`);
  const r = rng(seed);
  const write = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
  for (let i = 0; i < n; i++) {
    const query = ep.gen(r);
    if (i < from) continue;
    write({ s: i, query, ...(ep.describe?.(query) ?? {}) });
    const { ms, timedRuns } = measure(ep.run(query), runs, (timed) => write({ r: i, timed }));
    write({ d: i, ms, runs: timedRuns });
  }
  db.close();
}

/**
 * Runs one endpoint's sets in a child, killing it when one set runs past `capS` (recorded as killed, at the cap)
 * or the endpoint's wall budget is spent, and resuming with the next set in a fresh child.
 */
async function fuzzEndpoint(
  dbPath: string,
  endpoint: string,
  o: FuzzOptions,
): Promise<{ samples: Sample[]; budgetHit: boolean; kills: number }> {
  const samples: Sample[] = [];
  const t0 = Date.now();
  let next = 0;
  let kills = 0;
  let budgetHit = false;
  while (next < o.n && !budgetHit) {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        FILE,
        '--child',
        endpoint,
        '--db',
        dbPath,
        '--fuzz-seed',
        String(o.seed),
        '--from',
        String(next),
        '--n',
        String(o.n),
        '--runs',
        String(o.runs),
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.add(child);
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    // 'close': the process has exited and its stdout is fully read.
    const exited = new Promise<number | null>((res) =>
      child.once('close', (code) => {
        children.delete(child);
        res(code);
      }),
    );
    let inflight: { s: number; query: Query; driver?: string; shape?: string; at: number; timed: boolean } | null =
      null;
    // The untimed first run of a set gets a longer leash: it may pay for cold pages, which is not the query shape's cost.
    const capMs = () => (inflight?.timed ? o.capS * 1000 : Math.max(5000, 5 * o.capS * 1000));
    const lines = createInterface({ input: child.stdout! });
    const outcome = await new Promise<'done' | 'cap' | 'budget' | 'startup'>((resolve) => {
      let lastLine = Date.now();
      const watch = setInterval(() => {
        const nowMs = Date.now();
        if (nowMs - t0 > o.budgetS * 1000) resolve('budget');
        else if (inflight && nowMs - inflight.at > capMs()) resolve('cap');
        else if (!inflight && nowMs - lastLine > 60_000) resolve('startup');
      }, 20);
      lines.on('line', (l) => {
        lastLine = Date.now();
        const m = JSON.parse(l);
        if ('s' in m) inflight = { ...m, at: Date.now(), timed: false };
        else if ('r' in m && inflight) {
          inflight.at = Date.now();
          inflight.timed = m.timed;
        } // the cap applies to each run
        else if ('d' in m && inflight) {
          samples.push({
            query: inflight.query,
            ms: m.ms,
            timedRuns: m.runs,
            driver: inflight.driver,
            shape: inflight.shape,
          });
          next = m.d + 1;
          inflight = null;
        }
      });
      exited.then(() => resolve('done'));
      void exited.finally(() => clearInterval(watch));
    });
    if (outcome !== 'done') child.kill('SIGKILL');
    await exited;
    lines.close();
    if (outcome === 'budget') budgetHit = true;
    if (outcome === 'startup') throw new Error(`query fuzz child for ${endpoint} did not start:\n${stderr}`);
    if (inflight) {
      const f = inflight as { s: number; query: Query; driver?: string; shape?: string; at: number; timed: boolean };
      if (outcome === 'done')
        throw new Error(
          `query fuzz child for ${endpoint} failed on set ${f.s} (${JSON.stringify(f.query)}):\n${stderr}`,
        );
      if (outcome === 'cap') {
        kills++;
        samples.push({
          query: f.query,
          ms: f.timed ? o.capS * 1000 : Date.now() - f.at,
          timedRuns: 0,
          killed: true,
          driver: f.driver,
          shape: f.shape,
        });
      } else if (outcome === 'budget' && Date.now() - f.at > 4 * SHAPE_TARGET_MS) {
        // Stopped by the budget while already slow: at least that slow.
        kills++;
        samples.push({
          query: f.query,
          ms: Date.now() - f.at,
          timedRuns: 0,
          killed: true,
          driver: f.driver,
          shape: f.shape,
        });
      }
      next = f.s + 1;
    } else if (outcome === 'done' && next < o.n && samples.length < o.n) {
      throw new Error(`query fuzz child for ${endpoint} exited early:\n${stderr}`);
    }
  }
  return { samples, budgetHit, kills };
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export async function runQueryFuzz(dbPath: string, o: FuzzOptions): Promise<FuzzReport> {
  const log = o.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const reports: EndpointReport[] = [];
  for (const endpoint of ENDPOINTS) {
    if (o.only && !o.only.includes(endpoint)) continue;
    const t0 = Date.now();
    const { samples, budgetHit, kills } = await fuzzEndpoint(dbPath, endpoint, o);
    const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
    const rep: EndpointReport = {
      endpoint,
      planned: o.n,
      done: samples.length,
      budget_hit: budgetHit,
      killed: kills,
      wall_s: (Date.now() - t0) / 1000,
      p50_ms: pct(sorted, 50),
      p99_ms: pct(sorted, 99),
      max_ms: sorted[sorted.length - 1] ?? NaN,
      slowest: [...samples].sort((a, b) => b.ms - a.ms).slice(0, o.top),
    };
    reports.push(rep);
    log(
      `  ${pad(endpoint, 19)} ${samples.length}/${o.n} sets in ${rep.wall_s.toFixed(1)} s${budgetHit ? ' (time budget reached)' : ''}${kills ? `, ${kills} killed at the ${o.capS} s cap` : ''}: max ${fmt(rep.max_ms)} ms`,
    );
  }
  const db = openSnapshot(dbPath);
  try {
    const listings =
      (db.prepare("SELECT count FROM listing_stats WHERE scope = ''").pluck().get() as number | undefined) ?? 0;
    if (o.explain) explainSlowest(db, reports, o.capS);
    return { db: dbPath, listings, seed: o.seed, runs: o.runs, cap_s: o.capS, endpoints: reports };
  } finally {
    db.close();
  }
}

/** For the slowest listing sets: the planner's estimates, the actual number of matches (when countable in a second) and the plan. */
function explainSlowest(db: Database.Database, reports: EndpointReport[], capS: number) {
  const ls = listingsRoute.prepare(db);
  const planner = ls.planner;
  const p = planner as unknown as Record<string, AnyFn>;
  for (const rep of reports) {
    const kind = rep.endpoint === 'listings-page' ? 'page' : rep.endpoint === 'listings-stats' ? 'stats' : null;
    if (!kind) continue;
    for (const s of rep.slowest) {
      const f = toListingFilters(ls, s.query);
      const planned = planOf(planner, f, kind === 'page' ? 21 : null);
      const sql = kind === 'page' ? pageSql(f, planned.driver) : matchSql(f, planned.driver);
      const bound = kind === 'page' ? { ...params(f), after: 0, limit: 21 } : params(f);
      s.estimates = planner
        .estimates(f)
        .map((e) => `${driverName(e.driver)}≈${e.n}`)
        .join(', ');
      const eqp = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(bound) as { detail: string }[]).map((r) => r.detail);
      s.plan = planned.scan
        ? ['in-memory column scan (ListingScan); the index plan it replaces:', sql, ...eqp]
        : [sql, ...eqp];
      // Counting runs the same kind of work: only when the set itself was not a runaway.
      if (s.ms < Math.min(1000, capS * 1000) && !s.killed) {
        s.matches = p.stats ? (p.stats.call(planner, f) as { count: number }).count : planner.matchingPrices(f).length;
      }
    }
  }
}

const showQuery = (q: Query) =>
  Object.entries(q)
    .map(([k, v]) => `${k}=${typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : v}`)
    .join(' ') || '(no filters)';
const showMs = (s: { ms: number; killed?: boolean }) => (s.killed ? `>${fmt(s.ms, 0)}` : fmt(s.ms));

/** The fuzz table plus the slowest filter sets; `plans` adds the estimates, match counts and query plans. */
export function formatFuzz(rep: FuzzReport, plans: boolean): string {
  const lines: string[] = [];
  lines.push(
    `Query shapes, no HTTP (${rep.listings.toLocaleString('en')} listings; seeded random filter sets; per set the min of ${rep.runs} timed runs after one untimed run` +
      ` (no more timed runs after one over ${4 * SHAPE_TARGET_MS} ms); a timed run still going after ${rep.cap_s} s (the untimed one: ${Math.max(5, 5 * rep.cap_s)} s) is killed and the set counted as >that)`,
  );
  lines.push(
    `  ${pad('endpoint', 19)} ${lpad('sets', 9)} ${lpad('killed', 7)} ${lpad('p50 ms', 8)} ${lpad('p99 ms', 9)} ${lpad('max ms', 9)}   target ≤ ${SHAPE_TARGET_MS} ms worst case`,
  );
  for (const e of rep.endpoints) {
    const v = verdict(e.max_ms, SHAPE_TARGET_MS, 'max', 'ms');
    lines.push(
      `  ${pad(e.endpoint, 19)} ${lpad(`${e.done}${e.budget_hit ? '*' : ''}`, 9)} ${lpad(String(e.killed), 7)} ${lpad(fmt(e.p50_ms, 3), 8)} ${lpad(fmt(e.p99_ms), 9)} ${lpad((e.killed ? '>' : '') + fmt(e.max_ms), 9)}   ${v.text}`,
    );
  }
  if (rep.endpoints.some((e) => e.budget_hit))
    lines.push('  * stopped at the time budget (--budget): the sets done are the first ones of the seeded sequence');
  for (const e of rep.endpoints) {
    if (!e.slowest.length) continue;
    lines.push(`  slowest ${e.endpoint}:`);
    for (const s of e.slowest) {
      lines.push(
        `    ${lpad(showMs(s), 9)} ms${s.driver ? `  driver ${pad(s.driver, 22)}` : '  '} ${showQuery(s.query)}`,
      );
      if (plans && s.estimates !== undefined)
        lines.push(
          `               estimates: ${s.estimates || '(none)'}; actual matches: ${s.matches ?? 'not counted (the set is a runaway)'}`,
        );
      if (plans && s.plan) {
        lines.push(`               ${s.plan[0]}`);
        for (const d of s.plan.slice(1)) lines.push(`                 ${d}`);
      }
    }
  }
  return lines.join('\n');
}

const FILE = new URL(import.meta.url).pathname;

if (isMain(import.meta.url)) {
  const { values: a } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      listings: { type: 'string' },
      seed: { type: 'string', default: '1' },
      db: { type: 'string' },
      n: { type: 'string' },
      'fuzz-seed': { type: 'string', default: '42' },
      runs: { type: 'string', default: '2' },
      top: { type: 'string', default: '5' },
      budget: { type: 'string' },
      cap: { type: 'string', default: '1' },
      only: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      child: { type: 'string' },
      from: { type: 'string', default: '0' },
      check: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (a.help) {
    console.log(`usage: npm run bench:queries -- [options]
  --quick            the 100,000-listing snapshot, 300 sets, 20 s budget
  --listings N       snapshot size (default 1,000,000), --seed S generator seed (default 1), or --db FILE any snapshot
  --n SETS           random filter sets per endpoint (default 1000)
  --fuzz-seed S      seed of the filter sets (default 42): the same seed gives the same sets
  --runs R           timed runs per set, the minimum is kept (default 2)
  --cap SECONDS      a timed run still going after this is killed and its set counted at the cap (default 1;
                     the untimed first run of a set, which may read cold pages, gets max(5, 5 × cap))
  --budget SECONDS   wall time per endpoint (default 60; quick 20)
  --top K            slowest sets shown per endpoint (default 5)
  --only LIST        comma-separated: ${ENDPOINTS.join(',')}`);
    process.exit(0);
  }
  if (a.check) {
    // used by bench/serve.ts: can the code under src/ as it is now serve this snapshot?
    const problem = await snapshotProblem(a.db!);
    console.log(problem ?? 'ok');
    process.exit(problem ? 1 : 0);
  } else if (a.child) {
    fuzzChild(a.db!, a.child, Number(a['fuzz-seed']), Number(a.from), Number(a.n), Number(a.runs));
  } else {
    const listings = a.listings ? Number(a.listings) : a.quick ? 100_000 : 1_000_000;
    const dbPath = a.db ?? (await ensureSnapshot(listings, Number(a.seed)));
    const rep = await runQueryFuzz(dbPath, {
      n: Number(a.n ?? (a.quick ? 300 : 1000)),
      seed: Number(a['fuzz-seed']),
      runs: Number(a.runs),
      top: Number(a.top),
      budgetS: Number(a.budget ?? (a.quick ? 20 : 60)),
      capS: Number(a.cap),
      only: a.only?.split(','),
      explain: true,
    });
    console.log(formatFuzz(rep, true));
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(
      join(RESULTS, 'queries-last.json'),
      `${JSON.stringify({ at: new Date().toISOString(), ...rep }, null, 2)}\n`,
    );
  }
}
