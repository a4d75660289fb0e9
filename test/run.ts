// npm test's runner: every test/*.test.ts (or the files named) through node:test, several files at a time, the files
// that took longest last time started first (so a slow file never starts last and stretches the run), with
// test/reporter.ts. Run as `node --import tsx test/run.ts [files…]`: node hands --import tsx on to each file's process.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { run } from 'node:test';
import reporter from './reporter.ts';
import { CACHE, ROOT } from './support/files.ts';

/** Each file's wall time (ms) in the last run that ran it, by its path from the repository root. */
const DURATIONS = join(CACHE, 'durations.json');

function lastDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS, 'utf8'));
  } catch {
    return {};
  }
}

const named = process.argv.slice(2).map((f) => resolve(f));
const files = named.length
  ? named
  : readdirSync(join(ROOT, 'test'))
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => join(ROOT, 'test', f));
const missingFiles = files.filter((f) => !existsSync(f));
if (files.length === 0 || missingFiles.length) {
  // node:test given no file runs nothing and passes: a run that finds no test fails instead.
  console.error(`test/run.ts: ${files.length ? `no such file: ${missingFiles.join(', ')}` : 'no test files'}`);
  process.exit(1);
}
const last = lastDurations();
// A file not timed yet goes first: it may be slow.
const ms = (f: string) => last[relative(ROOT, f)] ?? Number.POSITIVE_INFINITY;
files.sort((a, b) => ms(b) - ms(a) || a.localeCompare(b));

const concurrency = Number(process.env.TEST_CONCURRENCY) || Math.max(2, 2 * availableParallelism());
const durations: Record<string, number> = {};
const stream = run({ files, concurrency });
stream.on('test:fail', () => {
  process.exitCode = 1;
});
stream.on(
  'test:complete',
  (data: { nesting: number; name: string; file?: string; details: { duration_ms: number } }) => {
    // The repository's own files only: a sample run elsewhere (test/reporter.test.ts) leaves no entry.
    if (data.nesting === 0 && data.file !== undefined && data.name === data.file && data.file.startsWith(ROOT))
      durations[relative(ROOT, data.file)] = Math.round(data.details.duration_ms);
  },
);
stream.on('end', () => {
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(`${DURATIONS}.${process.pid}`, JSON.stringify({ ...lastDurations(), ...durations }));
  renameSync(`${DURATIONS}.${process.pid}`, DURATIONS);
});
stream.compose(reporter).pipe(process.stdout);
