// The repository's folders as the tests see them, and temporary folders removed when the test process exits.
import { cpSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
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

/** Marks a cache entry as used now: pruneUnused keeps it. */
export function markUsed(path: string): void {
  const now = new Date();
  utimesSync(path, now, now);
}

/** Removes the entries of a cache folder last used (by `lastUsed`: their time) more than `keepMs` ago. */
export function pruneUnused(dir: string, keepMs: number, lastUsed = (path: string) => statSync(path).mtimeMs): void {
  const cutoff = Date.now() - keepMs;
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    const path = join(dir, name);
    try {
      if (lastUsed(path) < cutoff) rmSync(path, { recursive: true, force: true });
    } catch {
      /* another process removed it */
    }
  }
}

/** Puts the folder `own`, made whole by this process, in place at `dir`; where another process was first, drops it. */
export function moveIntoPlace(own: string, dir: string): void {
  try {
    renameSync(own, dir);
  } catch {
    rmSync(own, { recursive: true, force: true });
  }
}
