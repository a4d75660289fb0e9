// npm run bench [-- --quick] [--listings N] [--seed S] [--duration S] [--warmup S] [--rounds R] [--connections C] [--only TEXT]
// The real server as a child process on loopback, driven by autocannon over a scenario mix (each scenario ~1,000
// distinct requests by default) and compared with a bare node:http server that replays each request's own bytes;
// server CPU per request against that reference; plus cold start, RSS, event-loop delay and the in-process worst
// case per query shape (bench/queries.ts). Prints a table with the targets; writes .bench-cache/results/*.json.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from '../scripts/bundle-options.ts';
import { createKey, openKeyStore } from '../src/access/key-store.ts';
import {
  CACHE,
  ensureSnapshot,
  fmt,
  lpad,
  median,
  pad,
  pct,
  procCpuSeconds,
  RESULTS,
  ROOT,
  speedCheck,
  stamp,
  verdict,
  waitForOtherBuild,
} from './common.ts';
import { type FuzzReport, formatFuzz, runQueryFuzz, SHAPE_TARGET_MS } from './queries.ts';
import { type Group, pick, type Scenario, scenarios } from './scenarios.ts';
import { type Captured, captureDistinct, pools } from './variants.ts';

const TARGETS = { detail_ratio: 0.6, search_ratio: 0.4, shape_ms: SHAPE_TARGET_MS, cold_start_ms: 300, rss_mb: 200 };
/** Server CPU per request at most this multiple of the same-bytes reference's, per scenario group (none: no target). */
const CPU_TARGETS: Partial<Record<Group, number>> = {
  detail: 3.5,
  stats: 3.5,
  search: 4,
  similar: 4,
  'other-search': 4,
};

const { values: a } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    listings: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '16' },
    'cold-runs': { type: 'string' },
    'fuzz-n': { type: 'string' },
    'fuzz-budget': { type: 'string' },
    'fuzz-cap': { type: 'string', default: '1' },
    'skip-fuzz': { type: 'boolean', default: false },
    only: { type: 'string' },
    distinct: { type: 'string' },
    fixed: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});
if (a.help) {
  console.log(`usage: npm run bench -- [options]
  --quick            100,000 listings, 0.5 s runs, 1 round, 300 fuzz sets: a smoke run of a minute or two
  --listings N       snapshot size (default 1,000,000; cached in .bench-cache by size and seed)
  --seed S           generator seed (default 1)
  --duration S       seconds per measured run (default 2; quick 0.5)
  --warmup S         seconds of unmeasured load per target before a scenario's rounds (default 1; quick 0.3)
  --rounds R         measured rounds per scenario, each ours then the reference (default 3; quick 1)
  --connections C    concurrent connections (default 16)
  --cold-runs N      cold starts of src/main.ts to take the median of (default 3; quick 1)
  --fuzz-n N         random filter sets per collection endpoint (default 1000; quick 300)
  --fuzz-budget S    wall-time budget per endpoint for the fuzz, seconds (default 60; quick 15)
  --fuzz-cap S       a filter set still running after S seconds is killed and counted at the cap (default 1)
  --skip-fuzz        no in-process query fuzz
  --only TEXT        only scenarios whose name contains TEXT (comma-separated alternatives)
  --distinct N       distinct requests per scenario (default 1000; quick 200): other ids, filter values, locales
                     and cursors, each captured once for the reference
  --fixed            one request per scenario, repeated (the scenario's fixed path)`);
  process.exit(0);
}
const quick = a.quick!;
const opt = {
  listings: Number(a.listings ?? (quick ? 100_000 : 1_000_000)),
  seed: Number(a.seed),
  duration: Number(a.duration ?? (quick ? 0.5 : 2)),
  warmup: Number(a.warmup ?? (quick ? 0.3 : 1)),
  rounds: Number(a.rounds ?? (quick ? 1 : 3)),
  connections: Number(a.connections),
  coldRuns: Number(a['cold-runs'] ?? (quick ? 1 : 3)),
  fuzzN: Number(a['fuzz-n'] ?? (quick ? 300 : 1000)),
  fuzzBudget: Number(a['fuzz-budget'] ?? (quick ? 15 : 60)),
  fuzzCap: Number(a['fuzz-cap']),
  skipFuzz: a['skip-fuzz']!,
  only: a.only?.split(',').map((s) => s.toLowerCase()),
  distinct: a.fixed ? 1 : Number(a.distinct ?? (quick ? 200 : 1000)),
  fixed: a.fixed!,
};
const say = (s: string) => process.stderr.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------ child processes

interface Child {
  name: string;
  proc: ChildProcess;
  exited: boolean;
  stderrTail: string[];
  messages: Record<string, unknown>[];
  waiters: ((m: Record<string, unknown>) => boolean)[];
}
const children = new Set<Child>();
const tmp = mkdtempSync(join(tmpdir(), 'nlr-bench-'));

process.on('exit', () => {
  for (const c of children) if (!c.exited) c.proc.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(sig, () => {
    say(`\nbench: ${sig}, stopping`);
    process.exit(130);
  });

/** node --import tsx SCRIPT (plain node for a .mjs); stdout carries JSON protocol lines when `protocol`, else it is discarded. */
function startChild(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  protocol: boolean,
  echoStderr: boolean,
): Child {
  const proc = spawn(process.execPath, [...(script.endsWith('.mjs') ? [] : ['--import', 'tsx']), script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', protocol ? 'pipe' : 'ignore', 'pipe'],
  });
  const c: Child = { name, proc, exited: false, stderrTail: [], messages: [], waiters: [] };
  children.add(c);
  proc.on('exit', () => {
    c.exited = true;
    children.delete(c);
  });
  createInterface({ input: proc.stderr! }).on('line', (l) => {
    c.stderrTail.push(l);
    if (c.stderrTail.length > 40) c.stderrTail.shift();
    if (echoStderr) say(`[${name}] ${l}`);
  });
  if (protocol) {
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      let m: Record<string, unknown>;
      try {
        m = JSON.parse(l);
      } catch {
        say(`[${name}] ${l}`);
        return;
      }
      const i = c.waiters.findIndex((w) => w(m));
      if (i >= 0) c.waiters.splice(i, 1);
      else c.messages.push(m);
    });
  }
  return c;
}

/** The next protocol message matching `pred` (already received or future); rejects on exit or after `ms`. */
function nextMessage(
  c: Child,
  pred: (m: Record<string, unknown>) => boolean,
  ms = 30_000,
): Promise<Record<string, unknown>> {
  const i = c.messages.findIndex(pred);
  if (i >= 0) return Promise.resolve(c.messages.splice(i, 1)[0]);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      c.waiters.splice(c.waiters.indexOf(w), 1);
      reject(new Error(`${c.name}: no answer within ${ms} ms`));
    }, ms);
    const onExit = () => {
      clearTimeout(timer);
      reject(new Error(`${c.name} exited:\n${c.stderrTail.join('\n')}`));
    };
    const w = (m: Record<string, unknown>) => {
      if (!pred(m)) return false;
      clearTimeout(timer);
      c.proc.off('exit', onExit);
      resolve(m);
      return true;
    };
    c.waiters.push(w);
    c.proc.once('exit', onExit);
  });
}

async function stopChild(c: Child): Promise<void> {
  if (c.exited) return;
  const gone = new Promise((r) => c.proc.once('exit', r));
  c.proc.stdin?.end();
  c.proc.kill('SIGTERM');
  const t = setTimeout(() => c.proc.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(t);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

/** Status of one GET on a fresh connection, or null when nothing answers (not listening yet). */
function probe(port: number, path: string, key: string): Promise<number | null> {
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${key}` }, timeout: 5000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? null));
      },
    );
    req.on('error', () => resolve(null));
    req.on('timeout', () => req.destroy());
  });
}

/** Spawn → first 200 on an authenticated GET of `path`, polling every 2 ms. */
async function coldStart(
  name: string,
  script: string,
  env: Record<string, string>,
  path: string,
  key: string,
  protocol: boolean,
) {
  const port = await freePort();
  const t0 = performance.now();
  const child = startChild(name, script, [], { ...env, PORT: String(port) }, protocol, false);
  for (;;) {
    if (child.exited) throw new Error(`${script} exited before answering:\n${child.stderrTail.join('\n')}`);
    const status = await probe(port, path, key);
    if (status === 200) return { ms: performance.now() - t0, child, url: `http://127.0.0.1:${port}` };
    if (status !== null && status !== 503) {
      await stopChild(child);
      throw new Error(`${script}: GET ${path} answered ${status} during start-up`);
    }
    if (performance.now() - t0 > 60_000) {
      await stopChild(child);
      throw new Error(`${script}: no 200 within 60 s`);
    }
    await sleep(2);
  }
}

function memory(pid: number) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  return { rss_mb: (kb('VmRSS') * 1024) / 1e6, hwm_mb: (kb('VmHWM') * 1024) / 1e6 };
}

// ------------------------------------------------------------------------------------------ load

interface Run {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  mean_ms: number;
  max_ms: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  /** CPU time (user + system) per answered request: of the server process, and of this process (autocannon). */
  server_cpu_us: number;
  client_cpu_us: number;
}

/** One bounded autocannon run. Latencies are recorded per response at full resolution (autocannon's own histogram
 * rounds to 1 ms); sampleInt 100 because autocannon checks its deadline only once per sample interval. The
 * connections share one rotation through `paths`, so consecutive requests differ. */
function load(base: string, paths: string[], seconds: number, key: string, serverPid: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const cpu0 = procCpuSeconds(serverPid);
    const own0 = process.cpuUsage();
    let lat = new Float64Array(1 << 16);
    let n = 0;
    let non2xx = 0;
    const t0 = performance.now();
    let next = 0;
    const inst = autocannon(
      {
        url: base + paths[0],
        requests: [
          {
            method: 'GET',
            setupRequest: (r) => {
              r.path = paths[next++ % paths.length];
              return r;
            },
          },
        ],
        connections: opt.connections,
        duration: seconds,
        sampleInt: 100,
        timeout: 10,
        headers: { authorization: `Bearer ${key}` },
      },
      (err, res) => {
        if (err) return reject(err);
        const elapsed = (performance.now() - t0) / 1000;
        const server_cpu_us = n ? ((procCpuSeconds(serverPid) - cpu0) * 1e6) / n : NaN;
        const own = process.cpuUsage(own0);
        const client_cpu_us = n ? (own.user + own.system) / n : NaN;
        const s = lat.subarray(0, n).sort();
        let sum = 0;
        for (let i = 0; i < n; i++) sum += s[i];
        resolve({
          rps: n / elapsed,
          p50_ms: pct(s, 50),
          p99_ms: pct(s, 99),
          mean_ms: n ? sum / n : NaN,
          max_ms: n ? s[n - 1] : NaN,
          ok: n,
          non2xx,
          errors: res.errors,
          timeouts: res.timeouts,
          seconds: elapsed,
          server_cpu_us,
          client_cpu_us,
        });
      },
    );
    inst.on('response', (_c, status, _bytes, ms) => {
      if (status < 200 || status > 299) {
        non2xx++;
        return;
      }
      if (n === lat.length) {
        const b = new Float64Array(n * 2);
        b.set(lat);
        lat = b;
      }
      lat[n++] = ms;
    });
  });
}

/**
 * Waits until the server is idle again. autocannon stops at its deadline but requests the server has already read
 * still run (a slow statement blocks the loop for each), so without this a slow scenario's backlog would be billed
 * to the next run. Idle = GET /v1/ping answered within 20 ms twice in a row. Returns the time it took.
 */
async function settle(base: string): Promise<number> {
  const t0 = performance.now();
  let fast = 0;
  while (fast < 2 && performance.now() - t0 < 120_000) {
    const t = performance.now();
    await (await fetch(`${base}/v1/ping`)).arrayBuffer();
    fast = performance.now() - t < 20 ? fast + 1 : 0;
  }
  return performance.now() - t0;
}

// ------------------------------------------------------------------------------------------ the run

interface ScenarioResult {
  name: string;
  group: Group;
  /** The first of its requests; `distinct` requests in all, in rotation. */
  path: string;
  distinct: number;
  status: number;
  /** Mean body size over its requests. */
  body_bytes: number;
  skipped?: string;
  note?: string;
  rounds: { ours: Run; ref: Run; eld: Record<string, number | null>; drain_ms: number }[];
  ours_rps: number;
  ref_rps: number;
  ratio: number;
  ours_p50_ms: number;
  ours_p99_ms: number;
  ref_p50_ms: number;
  ref_p99_ms: number;
  eld_p99_ms: number | null;
  problems: string[];
  /** Medians of the rounds: server CPU µs per request, ours and the reference's; autocannon's (this process) against ours. */
  ours_cpu_us: number;
  ref_cpu_us: number;
  /** Median over the rounds of ours ÷ the reference's CPU per request (the same round): the CPU budget's measure. */
  cpu_x: number;
  client_cpu_us: number;
}

/** A scenario's requests: its distinct traffic (pools given), else its fixed path (after `deepPages` - 1 pages). */
function captureOf(s: Scenario, pool: ReturnType<typeof pools> | null, url: string, auth: Record<string, string>) {
  const skip = (s.deepPages ?? 1) - 1;
  if (pool === null || !s.bases) return captureDistinct(url, auth, [s.path], { n: 1, walk: skip > 0, skip });
  return captureDistinct(url, auth, s.bases(pool), { n: opt.distinct, walk: s.walk === true, skip });
}

function newResult(s: Scenario, captures: Captured[]): ScenarioResult {
  const sizes = captures.map((c) => Buffer.byteLength(c.body_base64, 'base64'));
  return {
    name: s.name,
    group: s.group,
    path: captures[0]?.url ?? s.path,
    distinct: captures.length,
    status: captures.length ? 200 : 0,
    body_bytes: sizes.length ? Math.round(sizes.reduce((x, y) => x + y, 0) / sizes.length) : 0,
    note: s.deepPages ? `from page ${s.deepPages}` : undefined,
    rounds: [],
    ours_rps: NaN,
    ref_rps: NaN,
    ratio: NaN,
    ours_p50_ms: NaN,
    ours_p99_ms: NaN,
    ref_p50_ms: NaN,
    ref_p99_ms: NaN,
    eld_p99_ms: null,
    problems: [],
    ours_cpu_us: NaN,
    ref_cpu_us: NaN,
    cpu_x: NaN,
    client_cpu_us: NaN,
  };
}

async function main() {
  const started = Date.now();
  const dbPath = await ensureSnapshot(opt.listings, opt.seed, say);
  const picks = pick(dbPath);
  let list = scenarios(picks);
  if (opt.only) list = list.filter((s) => opt.only!.some((o) => s.name.toLowerCase().includes(o)));
  const loadBefore = loadavg();
  const speedBefore = speedCheck();
  const perScenario = 2 * opt.warmup + opt.rounds * 2 * opt.duration + 0.3;
  const expected = list.length * perScenario + (opt.skipFuzz ? 0 : 2 * opt.fuzzBudget + 15) + opt.coldRuns * 2 + 10;
  setTimeout(
    () => {
      say(`bench: watchdog: still running after ${Math.round(2 * expected + 300)} s; stopping`);
      process.exit(3);
    },
    (2 * expected + 300) * 1000,
  ).unref();
  say(
    `bench: ${opt.listings.toLocaleString('en')} listings (${dbPath}, ${(statSync(dbPath).size / 1e9).toFixed(2)} GB); ${list.length} scenarios × (${opt.rounds} rounds × ${opt.duration} s, ours and reference, after ${opt.warmup} s warm-up each); ${opt.connections} connections; about ${Math.round(expected / 60)} min`,
  );

  // A real key in a temp key store, made with the operator's functions.
  const keysPath = join(tmp, 'keys.db');
  const ks = openKeyStore(keysPath, { create: true });
  const { key } = createKey(ks, { name: 'bench' });
  ks.close();
  const env = {
    SNAPSHOT_PATH: dbPath,
    HOST: '127.0.0.1',
    KEYS_PATH: keysPath,
    LOG_REQUESTS: '1', // every request's log line is part of its cost (the wrapper writes them to /dev/null)
    DEV_KEY: '0',
    RATE_LIMIT_PER_MINUTE: '100000000',
    CURSOR_SECRET: randomBytes(24).toString('hex'),
  };
  const detailPath = `/v1/listings/${encodeURIComponent(picks.listing_id)}`;

  // Cold start of the real entry point, then of the wrapper that serves the load.
  const cold: number[] = [];
  // Idle RSS right after the first 200, per form: tsx runs its loader in a thread of its own (a second V8 isolate).
  const idle: { tsx_mb: number[]; bundle_mb: number[] } = { tsx_mb: [], bundle_mb: [] };
  for (let i = 0; i < opt.coldRuns; i++) {
    const c = await coldStart('main', 'src/main.ts', env, detailPath, key, false);
    cold.push(c.ms);
    idle.tsx_mb.push(memory(c.child.proc.pid!).rss_mb);
    await stopChild(c.child);
    say(`  cold start src/main.ts #${i + 1}: ${c.ms.toFixed(0)} ms`);
  }
  // What the runtime alone costs: node, and node with the tsx loader, each spawned to exit with nothing to run.
  const baseline = async (args: string[]) => {
    const runs: number[] = [];
    for (let i = 0; i < Math.max(1, opt.coldRuns); i++) {
      const t0 = performance.now();
      const p = spawn(process.execPath, args, { cwd: ROOT, stdio: 'ignore' });
      await new Promise((r) => p.once('exit', r));
      runs.push(performance.now() - t0);
    }
    return median(runs);
  };
  // The deployed form (the service ships as one esbuild bundle of all but the native addon, as `npm run bundle`
  // makes it): a fresh bundle of the current code, built into .bench-cache (inside the project, so that
  // better-sqlite3 resolves from its node_modules).
  const bundleCold: number[] = [];
  let bundleNote = 'no scripts/bundle.ts';
  if (existsSync(join(ROOT, 'scripts', 'bundle.ts'))) {
    const dist = join(CACHE, 'dist');
    const b = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bundle.ts', dist], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (b.status === 0 && existsSync(join(dist, 'server.mjs'))) {
      for (let i = 0; i < opt.coldRuns; i++) {
        const c = await coldStart('bundle', join(dist, 'server.mjs'), env, detailPath, key, false);
        bundleCold.push(c.ms);
        idle.bundle_mb.push(memory(c.child.proc.pid!).rss_mb);
        await stopChild(c.child);
        say(`  cold start of the bundle (node server.mjs) #${i + 1}: ${c.ms.toFixed(0)} ms`);
      }
      bundleNote = `median of ${bundleCold.map((x) => x.toFixed(0)).join(', ')}`;
    } else {
      bundleNote = `npm run bundle failed: ${(b.stderr || b.stdout).trim().split('\n')[0]}`;
      say(`  ${bundleNote}`);
    }
  }
  const nodeBaseline = await baseline(['--eval', '0']);
  const tsxBaseline = await baseline(['--import', 'tsx', '--eval', '0']);
  say(
    `  spawn → exit of an empty program: node ${nodeBaseline.toFixed(0)} ms, node --import tsx ${tsxBaseline.toFixed(0)} ms`,
  );
  // The load is served the way the service is deployed, as an esbuild bundle: bench/server-wrapper.ts bundled with
  // the options of `npm run bundle`, run by plain node; under tsx when bundling is not possible.
  let loadScript = 'bench/server-wrapper.ts';
  if (bundleCold.length) {
    // A folder of its own: npm run bundle refuses a folder that holds files other than the bundle's.
    const out = join(CACHE, 'bench-dist', 'bench-server.mjs');
    try {
      await build({ ...BUNDLE_OPTIONS, entryPoints: ['bench/server-wrapper.ts'], outfile: out, logLevel: 'silent' });
      loadScript = out;
    } catch (e) {
      say(
        `  bundling bench/server-wrapper.ts failed, serving the load under tsx: ${(e as Error).message.split('\n')[0]}`,
      );
    }
  }
  const loadForm = loadScript.endsWith('.mjs') ? 'bundle' : 'tsx';
  const srv = await coldStart('server', loadScript, env, detailPath, key, true);
  const server = srv.child;
  say(`  cold start ${loadScript}: ${srv.ms.toFixed(0)} ms (serves the load, as a ${loadForm})`);
  const rssIdle = memory(server.proc.pid!);

  // Per scenario: capture each of its distinct requests once from our server (status, headers, bytes), hand them
  // to the reference, check it gives back exactly those bytes, then warm both and run rounds of ours → reference.
  const auth = { authorization: `Bearer ${key}` };
  const pool = opt.fixed ? null : pools(dbPath, opt.distinct);
  const ref = startChild('reference', 'bench/reference-server.ts', [], { PORT: '0' }, true, true);
  const refUrl = String((await nextMessage(ref, (m) => 'ready' in m)).ready);
  const eldCmd = async (cmd: 'start' | 'stop') => {
    server.proc.stdin!.write(`${cmd}\n`);
    return nextMessage(server, (m) => m.eld === (cmd === 'start' ? 'started' : 'stopped'));
  };
  const results: ScenarioResult[] = [];
  let rssPeakSampled = rssIdle.rss_mb;
  let lastEld: Record<string, unknown> | null = null;
  for (const [i, s] of list.entries()) {
    const t0 = performance.now();
    const { captures, refused } = await captureOf(s, pool, srv.url, auth);
    const r = newResult(s, captures);
    results.push(r);
    if (captures.length === 0) {
      const why = refused[0] ? `status ${refused[0].status}: ${refused[0].body}` : 'no request';
      r.skipped = why;
      say(`\n!!!!! SKIPPED "${s.name}": GET ${refused[0]?.url ?? s.path} answered ${why}\n`);
      continue;
    }
    if (refused.length) r.problems.push(`${refused.length} distinct request(s) not 200, left out (${refused[0].url})`);
    const capturePath = join(tmp, 'capture.json');
    writeFileSync(capturePath, JSON.stringify(captures));
    ref.proc.stdin!.write(`load ${capturePath}\n`);
    await nextMessage(ref, (m) => 'loaded' in m);
    for (const c of captures.filter((_, k) => k % Math.ceil(captures.length / 20) === 0)) {
      // the reference must give back exactly what was captured
      const got = Buffer.from(await (await fetch(refUrl + c.url)).arrayBuffer());
      if (!got.equals(Buffer.from(c.body_base64, 'base64')))
        throw new Error(`reference server returned different bytes for ${c.url}`);
    }
    const paths = captures.map((c) => c.url);
    const captureS = (performance.now() - t0) / 1000;
    if (opt.warmup > 0) {
      await load(srv.url, paths, opt.warmup, key, server.proc.pid!);
      await settle(srv.url);
      await load(refUrl, paths, opt.warmup, key, ref.proc.pid!);
    }
    for (let k = 0; k < opt.rounds; k++) {
      await eldCmd('start');
      const o = await load(srv.url, paths, opt.duration, key, server.proc.pid!);
      rssPeakSampled = Math.max(rssPeakSampled, memory(server.proc.pid!).rss_mb);
      const drain_ms = await settle(srv.url); // the backlog is load too: the delay window closes after it
      lastEld = await eldCmd('stop');
      const f = await load(refUrl, paths, opt.duration, key, ref.proc.pid!);
      r.rounds.push({ ours: o, ref: f, eld: lastEld.window as Record<string, number | null>, drain_ms });
      for (const [who, run] of [
        ['ours', o],
        ['reference', f],
      ] as const) {
        if (run.non2xx || run.errors || run.timeouts)
          r.problems.push(
            `${who} round ${k + 1}: ${run.non2xx} non-2xx, ${run.errors} errors, ${run.timeouts} timeouts`,
          );
      }
      if (server.exited) throw new Error(`the server exited during the load:\n${server.stderrTail.join('\n')}`);
    }
    const med = (f: (x: ScenarioResult['rounds'][number]) => number) => median(r.rounds.map(f));
    r.ours_rps = med((x) => x.ours.rps);
    r.ref_rps = med((x) => x.ref.rps);
    r.ratio = med((x) => x.ours.rps / x.ref.rps);
    r.ours_p50_ms = med((x) => x.ours.p50_ms);
    r.ours_p99_ms = med((x) => x.ours.p99_ms);
    r.ref_p50_ms = med((x) => x.ref.p50_ms);
    r.ref_p99_ms = med((x) => x.ref.p99_ms);
    r.eld_p99_ms = med((x) => x.eld.p99_ms ?? NaN);
    r.ours_cpu_us = med((x) => x.ours.server_cpu_us);
    r.ref_cpu_us = med((x) => x.ref.server_cpu_us);
    r.cpu_x = med((x) => x.ours.server_cpu_us / x.ref.server_cpu_us);
    r.client_cpu_us = med((x) => x.ours.client_cpu_us);
    say(
      `  [${i + 1}/${list.length}] ${pad(r.name, 46)} ${lpad(String(r.distinct), 5)} distinct (captured in ${captureS.toFixed(1)} s) ${lpad(r.ours_rps.toFixed(0), 7)} req/s  ratio ${r.ratio.toFixed(2)}  server CPU ${r.ours_cpu_us.toFixed(0)} µs/req (reference ${r.ref_cpu_us.toFixed(0)}, ×${r.cpu_x.toFixed(2)}), autocannon ${r.client_cpu_us.toFixed(0)}${r.problems.length ? `  PROBLEMS: ${r.problems.join('; ')}` : ''}`,
    );
  }
  const mem = memory(server.proc.pid!);
  const eldOverall = (lastEld?.overall ?? null) as Record<string, number | null> | null;
  await stopChild(server);
  await stopChild(ref);

  // Worst case per query shape, no HTTP (the servers are gone: the fuzz has the machine to itself).
  let fuzz: FuzzReport | null = null;
  let fuzzError: string | null = null;
  if (!opt.skipFuzz) {
    say(`query fuzz: ${opt.fuzzN} sets per endpoint, budget ${opt.fuzzBudget} s each`);
    try {
      // The code under src/ may have changed since this process loaded it; the fuzz children load it afresh, so check in a fresh process.
      await waitForOtherBuild(dbPath, say);
      const check = spawnSync(process.execPath, ['--import', 'tsx', 'bench/queries.ts', '--check', '--db', dbPath], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      });
      const problem = check.status === 0 ? null : (check.stdout + check.stderr).trim() || `exit ${check.status}`;
      if (problem)
        throw new Error(
          `the snapshot no longer fits the current code under src/ (${problem.split('\n')[0]}); run the bench again to rebuild it`,
        );
      fuzz = await runQueryFuzz(dbPath, {
        n: opt.fuzzN,
        seed: 42,
        runs: 2,
        top: 5,
        budgetS: opt.fuzzBudget,
        capS: opt.fuzzCap,
        explain: false,
        log: say,
      });
    } catch (e) {
      // the HTTP figures are still worth writing
      fuzzError = (e as Error).message;
      say(`\n!!!!! the query fuzz FAILED: ${fuzzError}\n`);
    }
  }

  // ---------------------------------------------------------------------------------------- report
  const previous = existsSync(join(RESULTS, 'last.json'))
    ? JSON.parse(readFileSync(join(RESULTS, 'last.json'), 'utf8'))
    : null;
  const prevRps = new Map<string, number>(
    previous?.listings === opt.listings
      ? (previous.scenarios ?? []).map((s: ScenarioResult) => [s.name, s.ours_rps])
      : [],
  );
  const coldMedian = median(cold);
  const coldDeployed = bundleCold.length ? median(bundleCold) : coldMedian;
  const detail = results.find((r) => r.group === 'detail' && !r.skipped);
  const searches = results.filter((r) => r.group === 'search' && !r.skipped);
  const worstSearch = [...searches].sort((x, y) => x.ratio - y.ratio)[0];
  const worstShape = fuzz ? [...fuzz.endpoints].sort((x, y) => y.max_ms - x.max_ms)[0] : undefined;
  const targetOf = (r: ScenarioResult) =>
    r.group === 'detail' ? TARGETS.detail_ratio : r.group === 'search' ? TARGETS.search_ratio : null;

  const out: string[] = [];
  out.push(
    `HTTP load: ${opt.listings.toLocaleString('en')} listings, ${opt.connections} connections, ${opt.rounds} × ${opt.duration} s per side (medians of rounds), loopback, ${cpus().length} CPUs, node ${process.version}`,
  );
  out.push(
    `ratio = our req/s ÷ req/s of a bare node:http server replaying the same bytes; ELD = server event-loop delay p99 during our runs`,
  );
  out.push(
    `CPU µs = server process CPU time (user + system) per answered request, ours / the reference's; CPU × = ours ÷ the reference's (median of the rounds' pairs)`,
  );
  out.push(
    `distinct = different requests per scenario, in rotation (${opt.fixed ? '--fixed: one request, repeated' : 'other ids, filter values, locales and cursors'}); bytes = mean body size`,
  );
  out.push(
    `${pad('scenario', 46)} ${lpad('distinct', 8)} ${lpad('bytes', 7)} ${lpad('req/s', 8)} ${lpad('p50 ms', 7)} ${lpad('p99 ms', 8)} ${lpad('ref req/s', 9)} ${lpad('ratio', 6)} ${lpad('CPU µs', 9)} ${lpad('CPU ×', 6)} ${lpad('ELD p99', 8)} ${lpad('Δ last', 7)}  target (CPU ×; req/s ratio)`,
  );
  for (const r of results) {
    if (r.skipped) {
      out.push(`${pad(r.name, 46)} SKIPPED (${r.skipped.slice(0, 80)})`);
      continue;
    }
    const t = targetOf(r);
    const c = CPU_TARGETS[r.group];
    const v = [
      c === undefined ? '' : `≤ ${c.toFixed(1)} ${verdict(r.cpu_x, c, 'max', '×').text}`,
      t === null ? '' : `≥ ${t.toFixed(2)} ${verdict(r.ratio, t, 'min', '%').text}`,
    ]
      .filter(Boolean)
      .join('; ');
    const prev = prevRps.get(r.name);
    const delta = prev ? `${r.ours_rps >= prev ? '+' : ''}${(((r.ours_rps - prev) / prev) * 100).toFixed(0)}%` : '';
    out.push(
      `${pad(r.name, 46)} ${lpad(String(r.distinct), 8)} ${lpad(String(r.body_bytes), 7)} ${lpad(r.ours_rps.toFixed(0), 8)} ${lpad(fmt(r.ours_p50_ms), 7)} ${lpad(fmt(r.ours_p99_ms), 8)} ${lpad(r.ref_rps.toFixed(0), 9)} ${lpad(fmt(r.ratio), 6)} ${lpad(`${r.ours_cpu_us.toFixed(0)}/${r.ref_cpu_us.toFixed(0)}`, 9)} ${lpad(fmt(r.cpu_x), 6)} ${lpad(fmt(r.eld_p99_ms, 1), 8)} ${lpad(delta, 7)}  ${v}${r.problems.length ? `  ! ${r.problems.length} problem(s)` : ''}${median(r.rounds.map((x) => x.drain_ms)) > 1000 ? `  (backlog drained ${(median(r.rounds.map((x) => x.drain_ms)) / 1000).toFixed(1)} s after each run)` : ''}`,
    );
  }
  if (fuzz) out.push('', formatFuzz(fuzz, false));
  if (fuzzError) out.push('', `!!! query fuzz failed: ${fuzzError.split('\n').slice(0, 8).join('\n    ')}`);
  const row = (label: string, value: string, v: string) => out.push(`  ${pad(label, 46)} ${pad(value, 62)} ${v}`);
  out.push('', 'Targets');
  const cpuVerdicts: Record<string, { scenario: string; cpu_x: number; pass: boolean; text: string }> = {};
  for (const [group, target] of Object.entries(CPU_TARGETS) as [Group, number][]) {
    const rs = results.filter((r) => r.group === group && !r.skipped && Number.isFinite(r.cpu_x));
    if (!rs.length) continue;
    const worst = rs.reduce((w, r) => (r.cpu_x > w.cpu_x ? r : w));
    const v = verdict(worst.cpu_x, target, 'max', '×');
    cpuVerdicts[group] = { scenario: worst.name, cpu_x: worst.cpu_x, ...v };
    row(
      `server CPU per request, ${group} ≤ ${target} × reference`,
      `worst ${fmt(worst.cpu_x)} (${worst.name}, ${worst.ours_cpu_us.toFixed(0)}/${worst.ref_cpu_us.toFixed(0)} µs); ${rs.filter((r) => r.cpu_x <= target).length}/${rs.length} pass`,
      v.text,
    );
  }
  if (detail)
    row(
      `listing detail ≥ ${TARGETS.detail_ratio.toFixed(2)} × reference`,
      `${fmt(detail.ratio)} (${detail.ours_rps.toFixed(0)} vs ${detail.ref_rps.toFixed(0)} req/s)`,
      verdict(detail.ratio, TARGETS.detail_ratio, 'min', '%').text,
    );
  if (worstSearch) {
    const passing = searches.filter((r) => r.ratio >= TARGETS.search_ratio).length;
    row(
      `search page of 20 ≥ ${TARGETS.search_ratio.toFixed(2)} × reference`,
      `worst ${fmt(worstSearch.ratio)} (${worstSearch.name}); ${passing}/${searches.length} pass`,
      verdict(worstSearch.ratio, TARGETS.search_ratio, 'min', '%').text,
    );
  }
  if (worstShape)
    row(
      `every query shape ≤ ${TARGETS.shape_ms} ms worst case`,
      `worst ${fmt(worstShape.max_ms)} ms (${worstShape.endpoint})`,
      verdict(worstShape.max_ms, TARGETS.shape_ms, 'max', 'ms').text,
    );
  // Judged on the deployed form, as the RSS is (the service ships as an esbuild bundle); tsx alone takes longer than the target to start.
  if (bundleCold.length)
    row(
      `cold start ≤ ${TARGETS.cold_start_ms} ms (bundle, → first 200)`,
      `${coldDeployed.toFixed(0)} ms (${bundleNote})`,
      verdict(coldDeployed, TARGETS.cold_start_ms, 'max', 'ms').text,
    );
  else row(`cold start ≤ ${TARGETS.cold_start_ms} ms (no bundle: ${bundleNote})`, '', '');
  row(
    '  npm start (src/main.ts under tsx, development)',
    `${coldMedian.toFixed(0)} ms (median of ${cold.map((x) => x.toFixed(0)).join(', ')})`,
    '',
  );
  row(
    '  of which runtime alone (spawn → exit, empty)',
    `node ${nodeBaseline.toFixed(0)} ms; node --import tsx ${tsxBaseline.toFixed(0)} ms`,
    '',
  );
  row(
    `RSS ≤ ${TARGETS.rss_mb} MB (peak VmHWM while serving, ${loadForm})`,
    `${mem.hwm_mb.toFixed(0)} MB (VmRSS ${mem.rss_mb.toFixed(0)} MB after load, ${rssIdle.rss_mb.toFixed(0)} MB idle)`,
    verdict(mem.hwm_mb, TARGETS.rss_mb, 'max', 'MB').text,
  );
  row(
    '  idle RSS at first 200, per form',
    `tsx ${idle.tsx_mb.length ? median(idle.tsx_mb).toFixed(0) : '-'} MB, bundle ${idle.bundle_mb.length ? median(idle.bundle_mb).toFixed(0) : '-'} MB`,
    '',
  );
  const heap = (lastEld?.memory ?? null) as Record<string, number> | null;
  if (heap)
    row(
      '  after the last run: V8 heap used / total, array buffers',
      `${(heap.heapUsed / 1e6).toFixed(0)} / ${(heap.heapTotal / 1e6).toFixed(0)} MB, ${(heap.arrayBuffers / 1e6).toFixed(0)} MB (rss ${(heap.rss / 1e6).toFixed(0)} MB)`,
      '',
    );
  row(
    'event-loop delay under load (no target)',
    eldOverall
      ? `p99 ${fmt(eldOverall.p99_ms)} ms, max ${fmt(eldOverall.max_ms)} ms (${eldOverall.samples} samples)`
      : '-',
    '',
  );
  const problems = results.filter((r) => r.skipped || r.problems.length);
  if (problems.length)
    out.push(
      '',
      `!!! ${problems.length} scenario(s) skipped or with errors: ${problems.map((r) => r.name).join('; ')}`,
    );
  const wall = (Date.now() - started) / 1000;
  const loadAfter = loadavg();
  const speedAfter = speedCheck();
  out.push(
    '',
    `wall time ${(wall / 60).toFixed(1)} min; load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${loadAfter.map((x) => x.toFixed(2)).join(' ')} (other work on the machine skews every figure)`,
  );
  out.push(
    `machine speed check (bench/README.md): ${speedBefore.toFixed(0)} ms before, ${speedAfter.toFixed(0)} ms after (lower is faster)`,
  );
  console.log(`\n${out.join('\n')}`);

  const json = {
    at: new Date().toISOString(),
    listings: opt.listings,
    seed: opt.seed,
    quick,
    options: opt,
    wall_s: wall,
    machine: {
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      node: process.version,
      loadavg_before: loadBefore,
      loadavg_after: loadAfter,
      speed_check_ms: { before: +speedBefore.toFixed(0), after: +speedAfter.toFixed(0) },
    },
    snapshot: { path: dbPath, bytes: statSync(dbPath).size },
    picks,
    targets: TARGETS,
    cold_start_ms: {
      main_runs: cold,
      main_median: coldMedian,
      wrapper: srv.ms,
      bundle_runs: bundleCold,
      bundle_median: bundleCold.length ? median(bundleCold) : null,
      bundle_note: bundleNote,
      empty_node: nodeBaseline,
      empty_node_tsx: tsxBaseline,
    },
    memory: {
      load_server: loadForm,
      idle_rss_mb: rssIdle.rss_mb,
      after_load_rss_mb: mem.rss_mb,
      peak_hwm_mb: mem.hwm_mb,
      max_sampled_rss_mb: rssPeakSampled,
      idle_at_first_200: idle,
      after_last_run: lastEld?.memory ?? null,
    },
    event_loop_delay: eldOverall,
    scenarios: results,
    fuzz,
    fuzz_error: fuzzError,
    verdicts: {
      cpu_x: cpuVerdicts,
      detail_ratio: detail ? verdict(detail.ratio, TARGETS.detail_ratio, 'min', '%') : null,
      search_ratio: worstSearch
        ? { scenario: worstSearch.name, ...verdict(worstSearch.ratio, TARGETS.search_ratio, 'min', '%') }
        : null,
      shape_ms: worstShape
        ? { endpoint: worstShape.endpoint, ...verdict(worstShape.max_ms, TARGETS.shape_ms, 'max', 'ms') }
        : null,
      cold_start_ms: {
        form: bundleCold.length ? 'bundle' : 'tsx',
        ...verdict(coldDeployed, TARGETS.cold_start_ms, 'max', 'ms'),
      },
      rss_mb: verdict(mem.hwm_mb, TARGETS.rss_mb, 'max', 'MB'),
    },
  };
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `${stamp()}.json`);
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(RESULTS, 'last.json'), `${JSON.stringify(json, null, 2)}\n`);
  say(`results: ${file} (and .bench-cache/results/last.json)`);
}

main().then(
  () => process.exit(0),
  (e) => {
    say(`bench failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
