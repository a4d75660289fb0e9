// npm run bench:build [-- --sizes 100000,1000000 --seed 1]: generate and compile source sets; print time, peak RSS, size.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { procCpuSeconds, RESULTS, speedCheck } from './common.ts';

const { values } = parseArgs({
  options: { sizes: { type: 'string', default: '100000,1000000' }, seed: { type: 'string', default: '1' } },
});
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
  const t0 = process.hrtime.bigint();
  const cpu0 = procCpuSeconds('self', 'children');
  // As `npm run build-snapshot` runs it: two malloc arenas (README, "Where the time goes").
  const b = spawnSync(process.execPath, ['--import', 'tsx', 'build-snapshot/main.ts', '--source', src, '--out', out], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, MALLOC_ARENA_MAX: '2' },
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = procCpuSeconds('self', 'children') - cpu0;
  if (b.status !== 0) {
    console.error(b.stderr);
    throw new Error(`build failed for ${n}`);
  }
  const rss = Number(/peak RSS (\d+) MiB/.exec(b.stderr)?.[1]);
  const phases = b.stderr
    .split('\n')
    .filter((l) => /^\[\d/.test(l))
    .join('\n    ');
  const bytes = statSync(out).size;
  const r = {
    listings: n,
    wall_s: +seconds.toFixed(1),
    cpu_s: +cpu.toFixed(1),
    peak_rss_mib: rss,
    file_mib: +(bytes / 1048576).toFixed(1),
  };
  results.push(r);
  console.log(
    `${n.toLocaleString('en')} listings: ${r.wall_s} s wall (${r.cpu_s} CPU-s), peak RSS ${rss} MiB, snapshot ${r.file_mib} MiB\n    ${phases}`,
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
