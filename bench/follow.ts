// npm run bench:follow [-- --listings N] [--seed S] [--workers W] [--rounds R]
// Following a publication at scale: real nginx serves a folder with the snapshot, its minisign signature (the real
// minisign) and latest.json; a service (WORKERS=W) started with nothing at SNAPSHOT_PATH follows it. Prints the time
// from latest.json written to every worker serving the id (poll interval 1 s, no spread), the follower's download
// throughput as a ratio of curl fetching the same file from the same nginx to the same disk, and the peak RSS of the
// following process (the primary) against the file's size, and the latency of a light load (/livez) on the following
// process's port before and during the download.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createKey, openKeyStore } from '../src/access/key-store.ts';
import { CACHE, ensureSnapshot, fmt, median, ROOT } from './common.ts';

const say = (s: string) => process.stdout.write(`${s}\n`);
const sh = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
const rssKiB = (pid: number, field = 'VmRSS') =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

/** nginx serving `root` on a free port; its stop. */
async function nginx(dir: string, root: string) {
  const port = await freePort();
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`);
  writeFileSync(
    join(dir, 'nginx.conf'),
    `${process.getuid?.() === 0 ? 'user root;' : ''} pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 64; }
http { access_log off; ${temp.join(' ')} sendfile on; server { listen 127.0.0.1:${port}; root ${root}; } }`,
  );
  const child = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/** Publishes `snapshot` into `pub` as `snapshot publish` lays it out (minisign signs; latest.json last). */
function publish(pub: string, snapshot: string, secret: string) {
  const db = new Database(snapshot, { readonly: true });
  const m = new Map(
    (db.prepare('SELECT key, value FROM snapshot_meta').all() as { key: string; value: string }[]).map((r) => [
      r.key,
      r.value,
    ]),
  );
  db.close();
  const id = m.get('snapshot_id')!;
  const file = join(pub, `${id}.db`);
  symlinkSync(snapshot, file); // nginx follows it: no second copy of 1.2 GiB
  const t0 = performance.now();
  sh('minisign', ['-S', '-s', secret, '-m', file, '-t', `snapshot:${id}`]);
  const signSeconds = (performance.now() - t0) / 1000;
  const latest = {
    format: 1,
    snapshot_id: id,
    schema_version: Number(m.get('schema_version')),
    built_at: m.get('built_at'),
    published_at: new Date().toISOString(),
    file: `${id}.db`,
    signature: `${id}.db.minisig`,
    size: statSync(snapshot).size,
    expires_at: null,
  };
  return {
    id,
    size: latest.size,
    signSeconds,
    /** Writes latest.json (by rename); the instant it was written. */
    announce() {
      writeFileSync(join(pub, 'latest.json.tmp'), JSON.stringify(latest));
      renameSync(join(pub, 'latest.json.tmp'), join(pub, 'latest.json'));
      return performance.now();
    },
  };
}

async function followOnce(o: {
  work: string;
  url: string;
  pubKey: string;
  keys: string;
  workers: number;
  id: string;
  announce: () => number;
}) {
  const path = join(o.work, 'served', 'snapshot.db');
  rmSync(join(o.work, 'served'), { recursive: true, force: true });
  mkdirSync(join(o.work, 'served'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      WORKERS: String(o.workers),
      SNAPSHOT_PATH: path,
      KEYS_PATH: o.keys,
      DEV_KEY: '0',
      LOG_REQUESTS: '0',
      CURSOR_SECRET: 'bench-follow-secret-0123456789',
      SNAPSHOT_FOLLOW: `${o.url}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: o.pubKey,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '1000',
      SNAPSHOT_FOLLOW_SPREAD_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const seen = (test: (l: Record<string, unknown>) => boolean) =>
    new Promise<{ at: number; line: Record<string, unknown> }>((resolve) =>
      lines.on('line', (text) => {
        let l: Record<string, unknown>;
        try {
          l = JSON.parse(text);
        } catch {
          return;
        }
        if (test(l)) resolve({ at: performance.now(), line: l });
      }),
    );
  const listening = seen((l) => l.msg === 'listening');
  const everyWorker = o.workers > 1 ? 'snapshot served by every worker' : 'snapshot swapped in';
  const served = seen((l) => l.msg === everyWorker && l.snapshot_id === o.id);
  const downloaded = seen((l) => typeof l.mib_per_s === 'number');
  let downloading = true; // until the download's line: its peak alone, then the checks' and the swap's
  void downloaded.then(() => (downloading = false));
  const url = (await listening).line.url as string;
  // A light load (/livez every 20 ms, one connection) on the following process's port: 2 s before latest.json is
  // written, then until the download's line, each request's latency by phase.
  const latency = { before: [] as number[], during: [] as number[] };
  let phase: keyof typeof latency | null = 'before';
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const loader = (async () => {
    while (phase !== null) {
      const t = performance.now();
      const at = phase;
      await new Promise<void>((r) =>
        get(`${url}/livez`, { agent }, (res) => res.resume().on('end', r)).on('error', () => r()),
      );
      latency[at].push(performance.now() - t);
      await new Promise((r) => setTimeout(r, Math.max(0, 20 - (performance.now() - t))));
    }
  })();
  void downloaded.then(() => (phase = null));
  await new Promise((r) => setTimeout(r, 2000));
  phase = 'during';
  const baseRss = rssKiB(child.pid!);
  let peak = baseRss;
  let peakDownload = baseRss;
  const sampler = setInterval(() => {
    try {
      const rss = rssKiB(child.pid!);
      peak = Math.max(peak, rss);
      if (downloading) peakDownload = Math.max(peakDownload, rss);
    } catch {
      /* gone */
    }
  }, 50);
  const t0 = o.announce();
  const [dl, done] = await Promise.all([downloaded, served]);
  await loader;
  agent.destroy();
  clearInterval(sampler);
  peak = Math.max(peak, rssKiB(child.pid!, 'VmHWM'));
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const p = (xs: number[], q: number) => xs.sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
  const lat = (xs: number[]) => ({ p50: p(xs, 0.5), p99: p(xs, 0.99), max: p(xs, 1), n: xs.length });
  return {
    total: (done.at - t0) / 1000,
    download: dl.line.seconds as number,
    baseRss,
    peak,
    peakDownload,
    before: lat(latency.before),
    during: lat(latency.during),
  };
}

/** Seconds for node's own HTTP client to read the file and drop it (no hash, no disk): the floor of any follower. */
function nodeRead(url: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) =>
    get(url, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve((performance.now() - t0) / 1000));
      res.on('error', reject);
    }).on('error', reject),
  );
}

async function main() {
  const { values: a } = parseArgs({
    options: {
      listings: { type: 'string', default: '1000000' },
      seed: { type: 'string', default: '1' },
      workers: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const snapshot = await ensureSnapshot(Number(a.listings), Number(a.seed));
  const work = join(CACHE, `follow-${process.pid}`);
  const pub = join(work, 'pub');
  mkdirSync(pub, { recursive: true });
  try {
    sh('minisign', ['-G', '-W', '-f', '-p', join(work, 'k.pub'), '-s', join(work, 'k.key')]);
    const p = publish(pub, snapshot, join(work, 'k.key'));
    const keys = join(work, 'keys.db');
    const ks = openKeyStore(keys, { create: true });
    createKey(ks, { name: 'bench' });
    ks.close();
    const server = await nginx(work, pub);
    const mib = p.size / 1048576;
    say(`snapshot ${p.id}: ${fmt(mib, 0)} MiB (${a.listings} listings); minisign -S took ${fmt(p.signSeconds, 1)} s`);
    const curl: number[] = [];
    const bare: number[] = [];
    const runs: Awaited<ReturnType<typeof followOnce>>[] = [];
    for (let r = 0; r < Number(a.rounds); r++) {
      const out = join(work, 'curl.db');
      const t = sh('curl', ['-s', '-o', out, '-w', '%{time_total}', `${server.url}/${p.id}.db`]);
      rmSync(out);
      curl.push(Number(t));
      bare.push(await nodeRead(`${server.url}/${p.id}.db`));
      runs.push(
        await followOnce({
          work,
          url: server.url,
          pubKey: join(work, 'k.pub'),
          keys,
          workers: Number(a.workers),
          id: p.id,
          announce: p.announce,
        }),
      );
      rmSync(join(pub, 'latest.json'));
    }
    server.stop();
    const dl = median(runs.map((r) => r.download));
    say(`${a.rounds} rounds (medians), WORKERS=${a.workers}, latest.json polled every 1 s:`);
    say(`  latest.json written -> every worker serving the id: ${fmt(median(runs.map((r) => r.total)), 1)} s`);
    say(`  follower download (streamed to disk, hashed): ${fmt(dl, 1)} s = ${fmt(mib / dl, 0)} MiB/s`);
    say(
      `  curl, same nginx, same disk:                   ${fmt(median(curl), 1)} s = ${fmt(mib / median(curl), 0)} MiB/s`,
    );
    say(
      `  node's HTTP client alone (read, dropped):     ${fmt(median(bare), 1)} s = ${fmt(mib / median(bare), 0)} MiB/s`,
    );
    say(`  throughput ratio follower / curl: ${fmt(median(curl) / dl, 2)}`);
    say(
      `  peak RSS of the following process: ${fmt(median(runs.map((r) => r.peakDownload)) / 1024, 0)} MiB while downloading, ${fmt(median(runs.map((r) => r.peak)) / 1024, 0)} MiB with the checks and the swap (${fmt(median(runs.map((r) => r.baseRss)) / 1024, 0)} MiB before; the file is ${fmt(mib, 0)} MiB)`,
    );
    const ms = (k: 'before' | 'during', q: 'p50' | 'p99' | 'max') => fmt(median(runs.map((r) => r[k][q])), 1);
    say(
      `  /livez every 20 ms on the following process's port: p50 ${ms('before', 'p50')} ms, p99 ${ms('before', 'p99')} ms before; p50 ${ms('during', 'p50')} ms, p99 ${ms('during', 'p99')} ms, max ${ms('during', 'max')} ms while downloading and hashing`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
