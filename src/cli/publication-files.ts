// The files of a publication folder: a snapshot copied into place (never replaced) and older publications pruned.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { digestFile } from '../minisign/index.ts';

/** A publication refused before latest.json changes: one sentence, exit status 1. */
export class PublishError extends Error {}

/** A hidden temporary name beside DIR/`name`, unique to this process and call. */
const temporaryName = (dir: string, name: string) =>
  join(dir, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);

/** A file system without hard links (some network and object-store mounts). */
const NO_LINKS = ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'ENOSYS'];

/**
 * Moves `temporary` to `target` unless something is there: a link fails with EEXIST rather than replace a file
 * published meanwhile; where the file system has no links, a rename after checking that `target` is absent.
 */
function placeNew(temporary: string, target: string): void {
  try {
    linkSync(temporary, target);
  } catch (e) {
    if (!NO_LINKS.includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
    if (statSync(target, { throwIfNoEntry: false })) throw e;
    renameSync(temporary, target);
  }
}

/**
 * The snapshot at DIR/`name` and its BLAKE2b-512 digest: copied from `file` (a copy-on-write clone where the file
 * system makes one; never a hard link, which a later write to `file` would change), flushed to disk, hashed as
 * published, and put in place without replacing anything. A file already at DIR/`name` is kept when it has the
 * same bytes, and refused otherwise: a published file is never changed.
 */
export async function placeSnapshot(file: string, dir: string, name: string) {
  const target = join(dir, name);
  if (statSync(target, { throwIfNoEntry: false })) {
    const [theirs, ours] = await Promise.all([digestFile(target), digestFile(file)]);
    if (!theirs.digest.equals(ours.digest))
      throw new PublishError(
        `${target} holds another build of this snapshot, and a published file is never changed: remove that publication first`,
      );
    return { digest: ours.digest, placed: 'already published' as const };
  }
  const temporary = temporaryName(dir, name);
  try {
    await copyFile(file, temporary, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    const fd = openSync(temporary, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const { digest } = await digestFile(temporary);
    placeNew(temporary, target);
    return { digest, placed: 'copied' as const };
  } finally {
    rmSync(temporary, { force: true });
  }
}

const PUBLISHED = /^([A-Za-z0-9][A-Za-z0-9_-]*)\.db$/;

/**
 * Removes all but the `keep` newest publications in `dir` (by their signature's time, else the file's), never
 * `current`; a signature goes before its file, so no signature names a missing file. Other files are left alone.
 * Returns the snapshot files removed.
 */
export function prunePublications(dir: string, keep: number, current: string): string[] {
  const time = (name: string) =>
    (statSync(join(dir, `${name}.minisig`), { throwIfNoEntry: false }) ?? statSync(join(dir, name))).mtimeMs;
  const older = readdirSync(dir)
    .filter((name) => PUBLISHED.test(name) && name !== current)
    .map((name) => ({ name, at: time(name) }))
    .sort((a, b) => b.at - a.at)
    .slice(Math.max(keep - 1, 0));
  for (const { name } of older) {
    rmSync(join(dir, `${name}.minisig`), { force: true });
    rmSync(join(dir, name), { force: true });
  }
  return older.map(({ name }) => name);
}
