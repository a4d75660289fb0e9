// Shared benchmark pieces: the cached snapshot (generate + compile only when missing), a seeded PRNG, percentiles, formatting.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { mulberry32 } from '../generate/random.ts';
import { createKey, openKeyStore } from '../src/access/key-store.ts';

export const ROOT = resolve(import.meta.dirname, '..');
export const CACHE = join(ROOT, '.bench-cache');
export const RESULTS = join(ROOT, '.bench-cache', 'results');

export const snapshotPath = (listings: number, seed: number) => join(CACHE, `snapshot-${listings}-seed${seed}.db`);

/**
 * Why the current server code cannot serve this snapshot (opened as the server opens it, every route's
 * statements prepared), or null when it can. A cached snapshot from before a schema change is stale.
 */
export async function snapshotProblem(path: string): Promise<string | null> {
  await import('../src/http/app.ts'); // before routes/index.ts: the order the server loads the route modules in
  const { ROUTE_MODULES } = await import('../src/routes/index.ts');
  const { SnapshotSource } = await import('../src/snapshot/source.ts');
  try {
    const source = new SnapshotSource(path, {});
    try {
      for (const m of ROUTE_MODULES) for (const p of m.prepare ?? []) source.get().use(p);
    } finally {
      source.close();
    }
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Waits while another process compiles this snapshot (its temp file beside it keeps changing); at most 30 minutes. */
export async function waitForOtherBuild(out: string, say: (s: string) => void): Promise<void> {
  const prefix = `.${basename(out)}.tmp-`;
  const building = () =>
    readdirSync(dirname(out))
      .filter((f) => f.startsWith(prefix) && !f.endsWith('-journal'))
      .some((f) => Date.now() - (statSync(join(dirname(out), f), { throwIfNoEntry: false })?.mtimeMs ?? 0) < 120_000);
  const t0 = Date.now();
  if (building()) say(`another process is compiling ${out}; waiting for it …`);
  while (building()) {
    if (Date.now() - t0 > 30 * 60_000) throw new Error(`gave up waiting for the build of ${out}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/**
 * The snapshot for (listings, seed), from .bench-cache: generated and compiled only when missing or
 * stale (the current server cannot open it), as bench/build.ts does (the same file names, so both
 * scripts share the cache). A build by another process is waited for. Each step is killed after 30 minutes.
 */
export async function ensureSnapshot(
  listings: number,
  seed: number,
  say: (s: string) => void = (s) => process.stderr.write(`${s}\n`),
): Promise<string> {
  mkdirSync(CACHE, { recursive: true });
  const out = snapshotPath(listings, seed);
  await waitForOtherBuild(out, say);
  if (existsSync(out)) {
    const problem = await snapshotProblem(out);
    if (problem === null) return out;
    say(`the cached ${out} does not fit the current server (${problem.split('\n')[0]}): rebuilding it`);
  }
  const src = join(CACHE, `src-${listings}-seed${seed}`);
  const limit = 30 * 60_000;
  if (!existsSync(join(src, 'metrics.ndjson'))) {
    say(`generating ${listings.toLocaleString('en')} listings (seed ${seed}) into ${src} …`);
    const t0 = Date.now();
    const g = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'generate/main.ts', '--listings', String(listings), '--out', src, '--seed', String(seed)],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: limit },
    );
    if (g.status !== 0) throw new Error(`generate failed (status ${g.status}, signal ${g.signal})`);
    say(`  generated in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  say(`compiling ${out} (a few minutes at 1M listings) …`);
  const t0 = Date.now();
  const b = spawnSync(process.execPath, ['--import', 'tsx', 'build-snapshot/main.ts', '--source', src, '--out', out], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: limit,
  });
  if (b.status !== 0 || !existsSync(out))
    throw new Error(`build-snapshot failed (status ${b.status}, signal ${b.signal})`);
  say(`  compiled in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const problem = await snapshotProblem(out);
  if (problem !== null)
    throw new Error(`the freshly compiled ${out} does not fit the current server either: ${problem}`);
  return out;
}

/** Documents per FTS term: the listing_terms copy when the snapshot has it (fast), else the fts5vocab table. */
export function termDocs(db: import('better-sqlite3').Database): (term: string) => number {
  const hasTerms = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'listing_terms'").get() !== undefined;
  const st = db
    .prepare(
      hasTerms ? 'SELECT docs FROM listing_terms WHERE term = ?' : 'SELECT doc FROM listings_fts_vocab WHERE term = ?',
    )
    .pluck();
  return (term) => (st.get(term) as number | undefined) ?? 0;
}

/** Seeded (generate/'s mulberry32): the same seed gives the same filter sets on every run. */
export function rng(seed: number) {
  const next = mulberry32(seed);
  return {
    next,
    chance: (p: number) => next() < p,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
  };
}
export type Rng = ReturnType<typeof rng>;

/** Nearest-rank percentile of an ascending-sorted array. */
export function pct(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
export const median = (xs: number[]) =>
  pct(
    [...xs].sort((a, b) => a - b),
    50,
  );

export const fmt = (x: number | null | undefined, digits = 2) =>
  x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits);
export const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
export const lpad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

/** "PASS (+12 %)" / "MISS (−3.1 ms)": the margin is how far the value is inside (+) or outside (−) the target. */
export function verdict(
  value: number,
  target: number,
  kind: 'min' | 'max',
  unit: string,
): { pass: boolean; text: string } {
  const pass = kind === 'min' ? value >= target : value <= target;
  const margin = kind === 'min' ? value - target : target - value;
  const m =
    unit === '%'
      ? `${margin >= 0 ? '+' : '−'}${Math.abs(margin * 100).toFixed(0)} pts`
      : `${margin >= 0 ? '+' : '−'}${Math.abs(margin).toFixed(unit === 'ms' || unit === '×' ? 2 : 0)} ${unit}`;
  return { pass, text: `${pass ? 'PASS' : 'MISS'} (${m})` };
}

/** True when this module file is the script node was started with (tsx keeps argv[1] as the .ts path). */
export const isMain = (metaUrl: string) =>
  !!process.argv[1] && resolve(process.argv[1]) === resolve(new URL(metaUrl).pathname);

export const stamp = () => new Date().toISOString().replace(/[:.]/g, '-');

/**
 * How fast this machine is right now: milliseconds for a fixed single-threaded workload shaped like the
 * compiler's and the server's (JSON parse and serialise of a listing-sized record, a SHA-256), the median
 * of five rounds. On a shared VM the same code's figures move by half between quiet and busy hours
 * without any steal time showing in /proc/stat (a busy neighbour on the same physical core slows every
 * instruction instead); printed before and after a benchmark, it tells a slow machine from slow code.
 */
export function speedCheck(): number {
  const text = JSON.stringify({
    id: 'lst_0000001',
    title: { en: 'Sunny 2-room apartment in The Hague', nl: 'Zonnig 2-kamerappartement in Den Haag' },
    description: { en: 'Apartment of 80 m² with 2 rooms. '.repeat(12) },
    price_eur: 1550,
    size_m2: 80,
    rooms: 2,
    images: Array.from({ length: 5 }, (_, i) => `https://images.example.nl/listings/lst_0000001/${i + 1}.jpg`),
    attributes: { year_built: 1981, floor: 3 },
    created_at: '2025-04-06T08:55:12Z',
    updated_at: '2025-05-11T02:07:07Z',
  });
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    let n = 0;
    for (let i = 0; i < 20_000; i++) {
      const o = JSON.parse(text) as { rooms: number };
      o.rooms = i;
      n += createHash('sha256').update(JSON.stringify(o)).digest()[0];
    }
    if (n < 0) throw new Error('unreachable'); // keeps the loop's work observable
    rounds.push(performance.now() - t0);
  }
  return median(rounds);
}

/**
 * CPU seconds (user + system) from /proc/PID/stat: the process's own, or those of its children that have
 * ended ('self', 'children': a compile spawned and waited for).
 */
export function procCpuSeconds(pid: number | 'self', of: 'own' | 'children' = 'own'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // the command name may hold spaces
  const i = of === 'own' ? 11 : 13; // utime, stime (fields 14, 15 of the whole line) or cutime, cstime (16, 17)
  return (Number(f[i]) + Number(f[i + 1])) / 100; // clock ticks of 10 ms
}

/**
 * The benchmark server (bench/server-wrapper.ts, run as `node ...argv`) over `dbPath` on a free loopback port,
 * with a key store in `dir` holding one key: the settings of npm run bench (every request logged, no rate limit
 * in the way, a random cursor secret unless one is given). `cwd` is the checkout it runs in (this one unless
 * given). Resolves once it listens; rejects if it exits first.
 */
export async function startBenchServer(
  argv: string[],
  dbPath: string,
  dir: string,
  keyName: string,
  opts: { cwd?: string; cursorSecret?: string } = {},
): Promise<{ server: ChildProcess; url: string; key: string }> {
  const ks = openKeyStore(join(dir, 'keys.db'), { create: true });
  const { key } = createKey(ks, { name: keyName });
  ks.close();
  const server = spawn(process.execPath, argv, {
    cwd: opts.cwd ?? ROOT,
    env: {
      ...process.env,
      SNAPSHOT_PATH: dbPath,
      HOST: '127.0.0.1',
      PORT: '0',
      KEYS_PATH: join(dir, 'keys.db'),
      LOG_REQUESTS: '1',
      DEV_KEY: '0',
      RATE_LIMIT_PER_MINUTE: '100000000',
      CURSOR_SECRET: opts.cursorSecret ?? randomBytes(24).toString('hex'),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((ready, fail) => {
    server.once('exit', (code) => fail(new Error(`${argv.join(' ')} exited (${code}) before listening`)));
    createInterface({ input: server.stdout! }).on('line', (l) => {
      const m = JSON.parse(l) as { ready?: string };
      if (m.ready) ready(m.ready);
    });
  });
  return { server, url, key };
}
