// npm run bench:build [-- --sizes 100000,1000000 --seed 1 --previous]: generate and compile source sets; print time,
// peak RSS, size. --previous: also compile each set with --previous against a snapshot of it with ~1 % of its listings
// different (every 100th listing repriced, every 1,000th absent), as an operator's next build would be.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { procCpuSeconds, RESULTS, speedCheck } from './common.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100000,1000000' },
    seed: { type: 'string', default: '1' },
    previous: { type: 'boolean', default: false },
  },
});

/**
 * The source `src` with ~1 % of its listings different: every 100th listing's price one euro higher, every 1,000th
 * left out (the next build sees it added). The other files are copied as they are.
 */
async function olderSource(src: string, out: string): Promise<void> {
  if (existsSync(join(out, 'metrics.ndjson'))) return;
  mkdirSync(out, { recursive: true });
  for (const f of readdirSync(src)) if (f !== 'listings.ndjson') copyFileSync(join(src, f), join(out, f));
  const w = createWriteStream(join(out, 'listings.ndjson'));
  let i = 0;
  for await (const line of createInterface({ input: createReadStream(join(src, 'listings.ndjson')) })) {
    i++;
    if (i % 1000 === 0) continue;
    const text =
      i % 100 === 0 ? line.replace(/"price_eur":(\d+(?:\.\d+)?)/, (_m, p) => `"price_eur":${Number(p) + 1}`) : line;
    if (!w.write(`${text}\n`)) await new Promise<void>((r) => w.once('drain', () => r()));
  }
  await new Promise<void>((r) => w.end(() => r()));
  // Written last: its presence says the folder is complete.
  copyFileSync(join(src, 'metrics.ndjson'), join(out, 'metrics.ndjson'));
}

/** One build as `npm run build-snapshot` runs it (two malloc arenas: README, "Where the time goes"). */
function build(src: string, out: string, previous?: string) {
  const t0 = process.hrtime.bigint();
  const cpu0 = procCpuSeconds('self', 'children');
  const args = ['--import', 'tsx', 'build-snapshot/main.ts', '--source', src, '--out', out];
  if (previous) args.push('--previous', previous);
  const b = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, MALLOC_ARENA_MAX: '2' },
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = procCpuSeconds('self', 'children') - cpu0;
  if (b.status !== 0) {
    console.error(b.stderr);
    throw new Error(`build failed: ${src}`);
  }
  const phases = b.stderr
    .split('\n')
    .filter((l) => /^\[\d/.test(l) || /changes since/.test(l))
    .join('\n    ');
  return { seconds, cpu, rss: Number(/peak RSS (\d+) MiB/.exec(b.stderr)?.[1]), phases, bytes: statSync(out).size };
}
const sizes = values.sizes!.split(',').map(Number);
const root = resolve(import.meta.dirname, '..');
const cache = join(root, '.bench-cache');
mkdirSync(cache, { recursive: true });

const results: Record<string, unknown>[] = [];
const speedBefore = speedCheck();
console.log(
  `machine speed check: ${speedBefore.toFixed(0)} ms for a fixed workload (lower is faster; see bench/README.md)`,
);
for (const n of sizes) {
  const src = join(cache, `src-${n}-seed${values.seed}`);
  if (!existsSync(join(src, 'metrics.ndjson'))) {
    const t0 = Date.now();
    const g = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'generate/main.ts', '--listings', String(n), '--out', src, '--seed', values.seed!],
      { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (g.status !== 0) throw new Error(`generate failed for ${n}`);
    console.log(`generated ${n.toLocaleString('en')} listings in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  const out = join(cache, `snapshot-${n}-seed${values.seed}.db`);
  let previous: string | undefined;
  if (values.previous) {
    const older = `${src}-older`;
    await olderSource(src, older);
    previous = join(cache, `snapshot-${n}-seed${values.seed}-older.db`);
    const o = build(older, previous);
    console.log(
      `${n.toLocaleString('en')} listings (the previous snapshot, ~1 % different): ${o.seconds.toFixed(1)} s wall (${o.cpu.toFixed(1)} CPU-s), peak RSS ${o.rss} MiB`,
    );
  }
  const b = build(src, out, previous);
  const r = {
    listings: n,
    ...(previous ? { previous: true } : {}),
    wall_s: +b.seconds.toFixed(1),
    cpu_s: +b.cpu.toFixed(1),
    peak_rss_mib: b.rss,
    file_mib: +(b.bytes / 1048576).toFixed(1),
  };
  const rss = b.rss;
  const phases = b.phases;
  results.push(r);
  console.log(
    `${n.toLocaleString('en')} listings${previous ? ' with --previous' : ''}: ${r.wall_s} s wall (${r.cpu_s} CPU-s), peak RSS ${rss} MiB, snapshot ${r.file_mib} MiB\n    ${phases}`,
  );
}
mkdirSync(RESULTS, { recursive: true });
const speedAfter = speedCheck();
console.log(`machine speed check after: ${speedAfter.toFixed(0)} ms`);
writeFileSync(
  join(RESULTS, 'build-last.json'),
  `${JSON.stringify(
    {
      at: new Date().toISOString(),
      speed_check_ms: { before: +speedBefore.toFixed(0), after: +speedAfter.toFixed(0) },
      results,
    },
    null,
    2,
  )}\n`,
);
console.log('targets: 1M listings ≤ 60 s, peak RSS ≤ 512 MiB, snapshot ≤ 1.5 GB');
