// tsx bench/sea.ts [--listings 100000] [--rounds 2] [--starts 15]: the single executable against the repository's
// commands: its size, its start (spawn → the "listening" line, WORKERS=1, the sample snapshot; the first start writes
// the addon to a new TMPDIR), and a build of N generated listings by `nl-rental-api build-snapshot` and by the form
// `npm run build-snapshot` runs (node --import tsx, MALLOC_ARENA_MAX=2), alternating, each with wall and CPU time.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildSea } from '../scripts/sea.ts';
import { CACHE, procCpuSeconds, RESULTS, ROOT, speedCheck } from './common.ts';

const { values } = parseArgs({
  options: {
    listings: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '2' },
    starts: { type: 'string', default: '15' },
  },
});
const n = Number(values.listings);
mkdirSync(CACHE, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'bench-sea-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const speed = speedCheck();
console.log(`machine speed check: ${speed.toFixed(0)} ms (lower is faster); load ${load()}`);

mkdirSync(join(CACHE, 'sea'), { recursive: true });
const exe = await buildSea(join(CACHE, 'sea'));
const size = statSync(exe).size;
console.log(`${exe}: ${(size / 2 ** 20).toFixed(1)} MiB`);

// Start: the sample snapshot, built by the executable itself.
const sample = join(work, 'sample.db');
const sb = spawnSync(exe, ['build-snapshot', '--source', join(ROOT, 'data'), '--out', sample], { encoding: 'utf8' });
if (sb.status !== 0) throw new Error(`sample build failed: ${sb.stderr}`);
async function start(tmp: string): Promise<{ ms: number; cpu: number }> {
  const t0 = performance.now();
  const env = {
    PATH: '/usr/bin:/bin',
    TMPDIR: tmp,
    HOST: '127.0.0.1',
    PORT: '0',
    WORKERS: '1',
    SNAPSHOT_PATH: sample,
    KEYS_PATH: join(work, 'keys.db'),
    DEV_KEY: '0',
    LOG_REQUESTS: '0',
    CURSOR_SECRET: 'bench-sea-cursor-secret-0123456789',
  };
  const child = spawn(exe, ['serve'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  const ms = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('"msg":"listening"')) resolve(performance.now() - t0);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  const cpu = procCpuSeconds(child.pid!);
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  return { ms, cpu };
}
const first = await start(mkdtempSync(join(work, 'tmp-')));
const tmp = mkdtempSync(join(work, 'tmp-'));
await start(tmp);
const starts: { ms: number; cpu: number }[] = [];
for (let i = 0; i < Number(values.starts); i++) starts.push(await start(tmp));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const startResult = {
  first_ms: Math.round(first.ms),
  median_ms: Math.round(median(starts.map((s) => s.ms))),
  min_ms: Math.round(Math.min(...starts.map((s) => s.ms))),
  max_ms: Math.round(Math.max(...starts.map((s) => s.ms))),
  median_cpu_ms: Math.round(median(starts.map((s) => s.cpu)) * 1000),
  runs: starts.length,
};
console.log(`start to listening: ${JSON.stringify(startResult)}; load ${load()}`);

// The build, both ways, alternating which goes first.
const src = join(CACHE, `src-${n}-seed1`);
if (!existsSync(join(src, 'metrics.ndjson'))) {
  const g = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'generate/main.ts', '--listings', String(n), '--out', src, '--seed', '1'],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (g.status !== 0) throw new Error('generate failed');
}
const ways = {
  npm: [process.execPath, ['--import', 'tsx', 'build-snapshot/main.ts'], { MALLOC_ARENA_MAX: '2' }],
  executable: [exe, ['build-snapshot'], {}],
} as const;
const builds: Record<string, unknown>[] = [];
for (let round = 0; round < Number(values.rounds); round++) {
  const order = round % 2 ? (['executable', 'npm'] as const) : (['npm', 'executable'] as const);
  for (const way of order) {
    const [bin, args, env] = ways[way];
    const out = join(work, `${way}.db`);
    rmSync(out, { force: true });
    const l = load();
    const t0 = performance.now();
    const cpu0 = procCpuSeconds('self', 'children');
    const b = spawnSync(bin, [...args, '--source', src, '--out', out], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: { ...process.env, ...env },
    });
    if (b.status !== 0) throw new Error(`${way} build failed: ${b.stderr}`);
    const r = {
      way,
      wall_s: +((performance.now() - t0) / 1000).toFixed(1),
      cpu_s: +(procCpuSeconds('self', 'children') - cpu0).toFixed(1),
      peak_rss_mib: Number(/peak RSS (\d+) MiB/.exec(b.stderr)?.[1]),
      snapshot_id: /OK (snap_\w+)/.exec(b.stderr)?.[1],
      load_before: Number(l),
    };
    builds.push(r);
    console.log(`build ${n.toLocaleString('en')} listings: ${JSON.stringify(r)}`);
  }
}
mkdirSync(RESULTS, { recursive: true });
writeFileSync(
  join(RESULTS, 'sea-last.json'),
  `${JSON.stringify({ at: new Date().toISOString(), speed_check_ms: +speed.toFixed(0), size_bytes: size, start: startResult, builds }, null, 2)}\n`,
);
