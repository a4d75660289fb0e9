// The build's files: the temporary file beside the target, checks on the target, stale leftovers, the final rename.
import {
  accessSync,
  closeSync,
  constants,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { snapshotSchemaVersion } from '../snapshot-format/schema.ts';

/** The start of the temporary file names of builds of `out` (its folder, then `.NAME.tmp-`), before the pid. */
const tempPrefix = (out: string) => join(dirname(resolve(out)), `.${basename(out)}.tmp-`);
/** The temporary file a build of `out` writes (beside it, so the final rename stays on one file system). */
export const tempPathFor = (out: string, pid = process.pid) => tempPrefix(out) + pid;

/** The full-text worker's file beside a build's temporary file (see fts-worker.ts). */
export const fullTextPathFor = (tmp: string) => `${tmp}-fts`;

/** Removes a build's temporary files and their journals (after an interruption or a failure). */
export function removeTemp(tmp: string): void {
  for (const f of [tmp, fullTextPathFor(tmp)])
    for (const g of [f, `${f}-journal`, `${f}-wal`, `${f}-shm`]) {
      try {
        rmSync(g, { force: true });
      } catch {
        /* best effort */
      }
    }
}

/**
 * Removes the temporary files of earlier builds of `out` whose process is gone (killed, or the machine
 * restarted): each can be as large as the snapshot. A build still running keeps its file.
 */
export function removeStaleTemps(out: string): void {
  const dir = dirname(resolve(out));
  const prefix = basename(tempPrefix(out));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)(?:-fts)?(?:-journal|-wal|-shm)?$/.exec(name.slice(prefix.length))?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
      continue;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPERM') continue;
    }
    try {
      rmSync(join(dir, name), { force: true });
    } catch {
      /* not ours to remove */
    }
  }
}

/** Why `out` cannot be written or replaced, or null. An existing file must be a snapshot (of any schema version). */
export function outProblem(out: string, tmp: string): string | null {
  let parent;
  try {
    parent = statSync(dirname(out));
  } catch {
    return 'output folder does not exist';
  }
  if (!parent.isDirectory()) return `${dirname(out)} is not a folder`;
  const reason = (e: unknown) => (e as Error).message.replace(/,.*$/, ''); // "EROFS: read-only file system", without the path
  try {
    accessSync(dirname(out), constants.W_OK);
  } catch (e) {
    return `the folder ${dirname(out)} is not writable (${reason(e)}; the new snapshot is written beside the target, then renamed)`;
  }
  // access() says yes to root whatever the mode, and knows nothing of a read-only mount: create the
  // temporary file itself, so the reason is the system's (SQLite's own error is only "unable to open
  // database file"). Any failure removes it; the build starts it afresh.
  try {
    closeSync(openSync(tmp, 'w'));
  } catch (e) {
    return `cannot create a file in the folder ${dirname(out)} (${reason(e)}; the new snapshot is written beside the target, then renamed)`;
  }
  let st;
  try {
    st = statSync(out);
  } catch {
    return null;
  }
  if (st.isDirectory()) return 'is a folder; give the path of the snapshot file';
  if (!st.isFile()) return 'exists and is not a regular file';
  if (snapshotSchemaVersion(out) === null)
    return 'exists and is not a snapshot of this service (a key store, or another file?); refusing to replace it: remove it first or choose another --out';
  return null;
}

/** Builds in progress, each with its stop flag (set by stopBuilds). */
export const running = new Set<{ stopped: boolean }>();
/** Targets this process has replaced (resolved paths). */
const replaced = new Set<string>();

/**
 * Called first by a signal handler: every running build ends without replacing its target. A signal
 * that arrives during a synchronous stretch of a build (the indexes, ANALYZE, this thread's checks: up to
 * ~10 s each at 1M listings) is only handled when that stretch ends; the build looks at this flag right
 * before the rename, so an interrupted build never replaces its target afterwards.
 */
export function stopBuilds(): void {
  for (const b of running) b.stopped = true;
}
/** Whether this process has already replaced `out` (the interrupted build had finished). */
export const hasReplaced = (out: string): boolean => replaced.has(resolve(out));

/**
 * The last step: the finished file is flushed to disk and renamed over the target, unless a signal stopped
 * the build meanwhile. A reader that has the old file open keeps reading it; a new open sees the new one.
 */
export async function publish(tmp: string, out: string, state: { stopped: boolean }): Promise<boolean> {
  const fd = openSync(tmp, 'r');
  fsyncSync(fd);
  closeSync(fd);
  // A signal that came during the synchronous work before has its handler run by the event loop's next
  // poll phase, and that handler stops this build. Two immediates: resumed from an I/O callback (in the
  // poll phase), one immediate alone would run before the next poll.
  for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
  if (state.stopped) return false;
  renameSync(tmp, out);
  replaced.add(out);
  return true;
}
