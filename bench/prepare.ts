// npm run bench:prepare [-- --runs 11] [--snapshot FILE]
// What a worker does when the owner says "prepare": open a checked snapshot and prepare every route's statements
// (SnapshotSource.stage, as a cluster worker runs it). Each run is a fresh process, as a worker's first candidate is;
// prints the time of each and their min, median and max: what PREPARE_MS (src/snapshot/members.ts) must leave room
// for. The cached 1M bench snapshot unless given (it is in the page cache, as a candidate is: the owner's
// quick_check has just read it).
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { ensureSnapshot, fmt, isMain, median, ROOT } from './common.ts';

/** One stage() of `file` in this process; prints its milliseconds. */
async function stageOnce(file: string) {
  const { SnapshotSource } = await import('../src/snapshot/source.ts');
  const { ROUTE_MODULES } = await import('../src/routes/index.ts');
  const served = { file, inode: '', linked: false };
  const source = new SnapshotSource(file, { served });
  for (const m of ROUTE_MODULES) for (const p of m.prepare) source.prepare(p);
  const t0 = performance.now();
  source.stage(1, served);
  process.stdout.write(`${performance.now() - t0}\n`);
}

async function main() {
  const { values: a } = parseArgs({
    options: { runs: { type: 'string', default: '11' }, snapshot: { type: 'string' }, once: { type: 'string' } },
  });
  if (a.once) return stageOnce(a.once);
  const file = a.snapshot ?? (await ensureSnapshot(1_000_000, 1));
  const times: number[] = [];
  for (let i = 0; i < Number(a.runs); i++) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/prepare.ts', '--once', file], { cwd: ROOT });
    times.push(Number(String(out).trim()));
    console.log(`run ${i + 1}: ${fmt(times.at(-1), 1)} ms`);
  }
  const sorted = [...times].sort((x, y) => x - y);
  console.log(
    `prepare ${file}: min ${fmt(sorted[0], 1)} ms, median ${fmt(median(times), 1)} ms, max ${fmt(sorted.at(-1), 1)} ms`,
  );
}

if (isMain(import.meta.url)) await main();
