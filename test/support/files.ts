// The repository's folders as the tests see them, and temporary folders removed when the test process exits.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'test', 'fixtures');
/** The hand-written fixture source: a few records of every resource. */
export const BASIC = join(FIXTURES, 'basic');
/**
 * What the tests keep between processes and runs: compiled fixtures, generated sources, the files' last times.
 * TEST_CACHE_DIR names another folder (a new empty one: a run as on a fresh machine).
 */
export const CACHE = process.env.TEST_CACHE_DIR || join(tmpdir(), 'nl-rental-api-test-cache');

const tempDirs: string[] = [];
process.on('exit', () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temporary folder, removed when the process exits. */
export function tempDir(prefix = 'rental-api-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** Copies a fixture source folder so a test may modify it. */
export function copyFixture(name = 'basic'): string {
  const dir = join(tempDir(), name);
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  return dir;
}
