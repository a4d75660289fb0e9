// npm run bench:cluster [-- --listings N] [--seed S] [--seconds S] [--connections C] [--rounds R]
// What more processes and Redis cost and give, with the real entry point on loopback driven by autocannon:
// WORKERS=1 against WORKERS=2 (requests/s, server CPU µs per request of all its processes) on the listing detail
// and the first page; Redis mode against embedded (server and redis-server CPU per request, latency at one
// connection); and the IPC round trip a cluster worker pays per request for exact limits (in process).
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { createKey, openKeyStore } from '../src/access/key-store.ts';
import { limitCounters, limitsOverIpc } from '../src/access/limits-ipc.ts';
import { connectRedis } from '../src/access/redis.ts';
import { redisKeyStore } from '../src/access/redis-keys.ts';
import { ensureSnapshot, fmt, lpad, median, pad, procCpuSeconds, ROOT, speedCheck } from './common.ts';

const LIMITS = { perKey: 1e9, authFailures: 1e9, windowSeconds: 60 };

async function main() {
  const { values: a } = parseArgs({
    options: {
      listings: { type: 'string', default: '1000000' },
      seed: { type: 'string', default: '1' },
      seconds: { type: 'string', default: '5' },
      connections: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const seconds = Number(a.seconds);
  const rounds = Number(a.rounds);
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const snapshot = await ensureSnapshot(Number(a.listings), Number(a.seed));
  const db = new Database(snapshot, { readonly: true });
  const ids = db.prepare('SELECT id FROM listings WHERE rowid % 1999 = 0 LIMIT 500').pluck().all() as string[];
  db.close();
  const tmp = join(ROOT, '.bench-cache', `cluster-${process.pid}`);
  const keysPath = join(tmp, 'keys.db');
  const store = openKeyStore(keysPath, { create: true });
  const key = createKey(store, { name: 'bench' }).key;
  store.close();
  const detail = ids.map((id) => ({ path: `/v1/listings/${id}` }));
  const page = [{ path: '/v1/listings?limit=20' }];
  const base = {
    SNAPSHOT_PATH: snapshot,
    KEYS_PATH: keysPath,
    LOG_REQUESTS: '0',
    DEV_KEY: '0',
    CURSOR_SECRET: 'bench-cluster-secret-0123456789',
    RATE_LIMIT_PER_MINUTE: '1000000000',
  };

  say(`machine speed check: ${fmt(speedCheck(), 0)} ms (lower is faster); ${ids.length} listing ids`);
  const servers: Record<string, Served> = {};
  servers.w1 = await serve({ ...base, WORKERS: '1' });
  servers.w2 = await serve({ ...base, WORKERS: '2' });
  let redis: ChildProcess | null = null;
  let rkey = '';
  const redisBin = '/usr/bin/redis-server';
  if (existsSync(redisBin)) {
    const port = await freePort();
    redis = spawn(redisBin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    running.add(redis);
    const url = `redis://127.0.0.1:${port}`;
    const link = connectRedis(url, { name: 'bench' });
    if (!(await link.waitReady(5000))) throw new Error('redis-server did not start');
    rkey = (await redisKeyStore(link, 'nlr:').create({ name: 'bench' })).key;
    await link.close();
    servers.redis = await serve({ ...base, REDIS_URL: url, WORKERS: '1' });
  }
  const c = Number(a.connections);
  type Case = { name: string; server: string; requests: { path: string }[]; conns: number };
  const cases: Case[] = [
    { name: 'WORKERS=1 listing detail', server: 'w1', requests: detail, conns: c },
    { name: 'WORKERS=2 listing detail', server: 'w2', requests: detail, conns: c },
    { name: 'WORKERS=1 first page', server: 'w1', requests: page, conns: c },
    { name: 'WORKERS=2 first page', server: 'w2', requests: page, conns: c },
    { name: 'WORKERS=1 detail, 1 conn.', server: 'w1', requests: detail, conns: 1 },
  ];
  if (servers.redis)
    cases.push(
      { name: 'Redis detail', server: 'redis', requests: detail, conns: c },
      { name: 'Redis detail, 1 conn.', server: 'redis', requests: detail, conns: 1 },
    );
  else say('(redis-server missing: apt-get install redis-server; the Redis figures are left out)');
  // Rounds over all cases in turn, so a busy moment of a shared machine touches every case alike; medians shown.
  const runs = new Map<string, Awaited<ReturnType<typeof measure>>[]>();
  for (let round = 0; round < rounds; round++)
    for (const k of cases) {
      const m = await measure(
        servers[k.server],
        k.requests,
        k.server === 'redis' ? rkey : key,
        k.conns,
        seconds,
        redis?.pid,
      );
      runs.set(k.name, [...(runs.get(k.name) ?? []), m]);
    }
  say(`\n${rounds} rounds of ${seconds} s per case (medians); autocannon runs in this process on the same cores.`);
  say('CPU: of all the server processes (the primary and its workers); redis µs: of redis-server itself.');
  say(`${pad('', 28)}${lpad('req/s', 9)}${lpad('CPU µs/req', 12)}${lpad('mean ms', 9)}${lpad('redis µs/req', 14)}`);
  for (const k of cases) {
    const ms = runs.get(k.name)!;
    const med = (f: (m: (typeof ms)[number]) => number) => median(ms.map(f));
    const redisUs =
      k.server === 'redis'
        ? fmt(
            med((m) => m.extraUs ?? Number.NaN),
            1,
          )
        : '-';
    say(
      `${pad(k.name, 28)}${lpad(
        fmt(
          med((m) => m.rps),
          0,
        ),
        9,
      )}${lpad(
        fmt(
          med((m) => m.cpuUs),
          1,
        ),
        12,
      )}${lpad(
        fmt(
          med((m) => m.mean),
          3,
        ),
        9,
      )}${lpad(redisUs, 14)}`,
    );
  }
  for (const server of Object.values(servers)) await server.stop();
  redis?.kill('SIGTERM');

  say('\nThe IPC round trip of the exact limits (a worker asks the primary), in process, 200,000 requests:');
  for (const concurrency of [1, 16]) {
    const r = await ipcCost(concurrency, 200_000);
    say(
      `  ${lpad(String(concurrency), 2)} at a time: ${fmt(r.workerUs, 2)} µs CPU on the worker side + ${fmt(r.primaryUs, 2)} µs on the primary's per request; ${fmt(r.rttUs, 1)} µs wall per round trip`,
    );
  }
  say(`\nmachine speed check after: ${fmt(speedCheck(), 0)} ms`);
  rmSync(tmp, { recursive: true, force: true });
}

/** A TCP port nothing listens on at the moment. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

interface Served {
  url: string;
  pids(): number[];
  stop(): Promise<void>;
}

/** Servers and redis-server still running: stopped when the bench ends, however it ends. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/** The real entry point on a free port; pids() are the server's processes (the primary and its workers). */
async function serve(env: Record<string, string>): Promise<Served> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const deadline = Date.now() + 60_000;
  while (!/"msg":"listening"/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = /"msg":"listening","url":"([^"]+)"/.exec(out)![1];
  const pid = child.pid!;
  const children = () =>
    readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return {
    url,
    pids: () => [pid, ...children()],
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

const cpuOf = (pids: number[]) => pids.reduce((s, p) => s + procCpuSeconds(p), 0);

/** One warm-up second, then `seconds` of load: requests/s, CPU µs per request of the server (and of `extraPid`). */
async function measure(
  s: Served,
  requests: { path: string }[],
  key: string,
  connections: number,
  seconds: number,
  extraPid?: number,
) {
  const run = (duration: number) =>
    autocannon({ url: s.url, connections, duration, headers: { Authorization: `Bearer ${key}` }, requests });
  await run(1);
  const pids = s.pids();
  const cpu0 = cpuOf(pids);
  const extra0 = extraPid ? procCpuSeconds(extraPid) : 0;
  const r = await run(seconds);
  const n = r.requests.total;
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`non-2xx ${r.non2xx}, errors ${r.errors}`);
  return {
    rps: n / seconds,
    cpuUs: ((cpuOf(pids) - cpu0) * 1e6) / n,
    extraUs: extraPid ? ((procCpuSeconds(extraPid) - extra0) * 1e6) / n : null,
    // Closed loop: each connection waits for its answer, so the mean latency is connections / throughput.
    // (autocannon's own histogram counts whole milliseconds.)
    mean: (connections * 1000 * seconds) / n,
  };
}

/** `n` consumeKey round trips through a real IPC channel to a forked primary, `concurrency` in flight at a time. */
async function ipcCost(concurrency: number, n: number) {
  const child: ChildProcess = fork(new URL(import.meta.url).pathname, ['--ipc-child'], {
    execArgv: ['--import', 'tsx'],
  });
  const ipc = limitsOverIpc(LIMITS, (ops) => child.send({ ops }));
  child.on('message', (m: { answers: Parameters<typeof ipc.answer>[0] }) => ipc.answer(m.answers));
  const loop = async (count: number) => {
    let left = count;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) await ipc.limits.consumeKey('key_bench');
      }),
    );
  };
  await loop(20_000); // warm up both sides
  const own0 = process.cpuUsage();
  const theirs0 = procCpuSeconds(child.pid!);
  const t0 = performance.now();
  await loop(n);
  const wall = performance.now() - t0;
  const own = process.cpuUsage(own0);
  const theirs = procCpuSeconds(child.pid!) - theirs0;
  ipc.close();
  child.kill();
  return {
    workerUs: (own.user + own.system) / n,
    primaryUs: (theirs * 1e6) / n,
    rttUs: (wall * 1000 * concurrency) / n,
  };
}

// The primary's side of the IPC measurement: this script forked with --ipc-child.
if (process.argv.includes('--ipc-child')) {
  const answer = limitCounters(LIMITS);
  process.on('message', (m: { ops: Parameters<typeof answer>[0] }) => process.send!({ answers: answer(m.ops) }));
} else await main();
