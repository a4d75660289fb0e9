// Edits of a source folder's records, and builds that must fail, for the compiler's tests: over an existing
// snapshot that must stay as it was, with no temporary file left beside it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildSnapshot } from '../../build-snapshot/compile.ts';
import { copyFixture } from './files.ts';
import { snapshotCopy } from './snapshots.ts';

/** Rewrites the records of one source file (`dir`/`file`, one JSON record a line). */
export function editRecords(dir: string, file: string, change: (records: any[]) => any[]) {
  const path = join(dir, file);
  const records = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  writeFileSync(
    path,
    `${change(records)
      .map((r) => JSON.stringify(r))
      .join('\n')}\n`,
  );
}

/** The build's temporary files in `dir` (`.snapshot.db.tmp-PID` and the like). */
export const temps = (dir: string) => readdirSync(dir).filter((f) => f.includes('.tmp-'));

/** Builds `src` over an existing snapshot; the build must fail and leave it byte-identical, with no temporary file. */
export async function refusedBuild(src: string) {
  const out = await snapshotCopy();
  const before = readFileSync(out);
  const result = await buildSnapshot({ source: src, out, log: () => {} });
  assert.equal(result.ok, false, 'the build must fail');
  assert.ok(readFileSync(out).equals(before), 'the existing snapshot must stay byte-identical');
  assert.deepEqual(temps(dirname(out)), [], 'no temporary file is left behind');
  return result.problems;
}

/** Applies `edit` to one file of a fixture copy, builds over an existing snapshot and returns the problems. */
export async function failingBuild(file: string, edit: (lines: string[]) => string[]) {
  const src = copyFixture();
  const p = join(src, file);
  writeFileSync(p, `${edit(readFileSync(p, 'utf8').trimEnd().split('\n')).join('\n')}\n`);
  return refusedBuild(src);
}

/** An edit of line `n` (1-based) as a record. */
export const setLine = (n: number, f: (rec: any) => unknown) => (lines: string[]) =>
  lines.map((l, i) => (i === n - 1 ? JSON.stringify(f(JSON.parse(l))) : l));
