// The served snapshot's own name: a hard link the owner keeps beside SNAPSHOT_PATH, so that every process opens the
// inode the owner checked, whatever the path names by then (SQLite resolves /proc/<pid>/fd/<n> to its link text).
import { closeSync, linkSync, openSync, readdirSync, readSync, realpathSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** What a process opens to serve a snapshot: a file (the owner's link, or the path itself) and the inode it must be. */
export interface ServedFile {
  /** The owner's hard link to the checked inode; the path itself when no link could be made (see `linked`). */
  file: string;
  /** device:inode of the file the owner checked. */
  inode: string;
  /** False when the folder refused the link: the path is opened and must still be that inode. */
  linked: boolean;
}

const prefixOf = (path: string) => `.${basename(path)}.served-`;

/** `.<name>.served-<pid>-<n>` beside `path` (same folder: same file system, so a hard link can be made). */
const linkPath = (path: string, n: number) => join(dirname(path), `${prefixOf(path)}${process.pid}-${n}`);

/** device:inode of a file, or null when it cannot be stat'ed. */
export function inodeOf(file: string): string | null {
  try {
    const s = statSync(file);
    return `${s.dev}:${s.ino}`;
  } catch {
    return null;
  }
}

/** device:inode:size:mtime of the file a path names, or null when there is none. */
export function identity(path: string): string | null {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return null;
  }
}
/** Whether two identities are of one file (device and inode), whatever its size and modification time. */
export const sameFile = (a: string | null, b: string | null) =>
  a !== null && b !== null && a.split(':', 2).join(':') === b.split(':', 2).join(':');
/** The size in an identity. */
export const sizeOf = (id: string) => id.split(':')[2];
/** The first 100 bytes of the file (SQLite's header, with the compiler's stamp of the build), or null. */
export function headerOf(path: string): Buffer | null {
  // Not file.ts's readHead: this module is loaded by a cluster's primary before it forks, without better-sqlite3.
  try {
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(100);
      return readSync(fd, head, 0, 100, 0) === 100 ? head : null;
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

let counter = 0;
/** The links this process made and has not removed: removed when it exits (a SIGKILL leaves them to the next start). */
const made = new Set<string>();
let exitHook = false;

/**
 * A new hard link to the file `path` names now (the file a symbolic link there points to). Throws the link's error when there is no file at the path (ENOENT);
 * any other refusal (a read-only folder, EPERM, EMLINK) gives the path itself, not linked, with the reason.
 */
export function linkServed(path: string): ServedFile & { why?: string } {
  const file = linkPath(path, counter++);
  try {
    // link(2) does not follow a symbolic link: a link to the symlink would name whatever it points to later.
    linkSync(realpathSync(path), file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') throw e;
    const inode = inodeOf(path);
    if (inode === null) throw e;
    return { file: path, inode, linked: false, why: (e as Error).message };
  }
  made.add(file);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const f of made) unlinkServed({ file: f, inode: '', linked: true });
    });
  }
  const inode = inodeOf(file);
  if (inode === null) throw new Error(`${file} vanished as it was made`);
  return { file, inode, linked: true };
}

/** Removes a link this module made (never the path itself). */
export function unlinkServed(s: ServedFile | null | undefined): void {
  if (!s?.linked) return;
  made.delete(s.file);
  try {
    unlinkSync(s.file);
  } catch {
    /* already gone */
  }
}

/** Removes the links beside `path` left by owners that are gone (killed: no exit handler ran). */
export function removeStaleLinks(path: string): void {
  const prefix = prefixOf(path);
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-\d+$/.exec(name.slice(prefix.length))?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
      continue; // alive (or another user's): not ours to remove
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPERM') continue;
    }
    try {
      unlinkSync(join(dirname(path), name));
    } catch {
      /* removed meanwhile */
    }
  }
}

/**
 * What the first start of a service opens: a link to the file at the path now; the path itself when there is no
 * regular file there (the open then refuses it with the usual message) or no link can be made (`why`).
 */
export function servedAtStart(path: string): ServedFile & { why?: string } {
  try {
    if (!statSync(path).isFile()) return { file: path, inode: '', linked: false };
    return linkServed(path);
  } catch {
    return { file: path, inode: '', linked: false };
  }
}
