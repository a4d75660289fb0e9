// One publication taken: checked against the disk, downloaded beside SNAPSHOT_PATH while hashed, its signature
// verified before anything opens it, then judged read-only (schema version, rollback, the id latest.json names) and
// renamed over SNAPSHOT_PATH, where the owner's candidate checks and swap take it; and the follower's files at the
// path (the part files, a refused file removed, the served snapshot put back, an unusable file at start).
import { linkSync, readdirSync, renameSync } from 'node:fs';
import type { OutgoingHttpHeaders } from 'node:http';
import { basename, dirname, join } from 'node:path';
import { SCHEMA_VERSION } from '../../snapshot-format/schema.ts';
import { openSnapshotFile, SnapshotError } from './file.ts';
import { download, removeFile, spaceProblem } from './follow-fetch.ts';
import { FollowRefusal, type FollowTarget, type ServedMeta } from './follow-state.ts';
import { type Latest, newHasher, type PublicKey, type Vouched, verifyPublication } from './follow-verify.ts';
import { inodeOf } from './served-file.ts';

export interface Take {
  latest: Latest;
  fileUrl: URL;
  signature: string;
  key: PublicKey;
  /** The temporary file beside SNAPSHOT_PATH. */
  part: string;
  path: string;
  extra: OutgoingHttpHeaders;
  served: ServedMeta | null;
  /** The served publication's signed expiry (null: none, or not a followed one). */
  servedExpiresAt: string | null;
  cut(bytes: number, e: Error): void;
  stopped(): boolean;
}

/**
 * Downloads, verifies and judges the publication, then renames it over SNAPSHOT_PATH. Resolves the expiry its signed
 * trusted comment names (or null), the download's duration and the file's device:inode. Throws FollowRefusal (the part file removed), or a
 * network error (the part file kept, to resume from).
 */
export async function takePublication(
  t: Take,
): Promise<{ expiresAt: string | null; seconds: number; inode: string | null }> {
  const space = spaceProblem(t.part, t.latest.size);
  if (space !== null) throw new FollowRefusal('no_space', `not enough free disk for the download: ${space}`, false);
  const began = performance.now();
  let digest: Buffer;
  try {
    const hash = await download({
      url: t.fileUrl,
      part: t.part,
      size: t.latest.size,
      extra: t.extra,
      hasher: newHasher,
      cut: t.cut,
      stopped: t.stopped,
    });
    digest = (hash as ReturnType<typeof newHasher>).digest();
  } catch (e) {
    if (e instanceof FollowRefusal) removeFile(t.part);
    throw e;
  }
  const seconds = (performance.now() - began) / 1000;
  try {
    const vouched = verifyPublication(digest, t.signature, t.key); // before anything opens the file
    judge(t, vouched);
    const inode = inodeOf(t.part);
    renameSync(t.part, t.path);
    return { expiresAt: vouched.expiresAt, seconds, inode };
  } catch (e) {
    removeFile(t.part);
    throw e;
  }
}

/**
 * The verified file read (read-only): refused when its schema, its id or its age is not one to serve: built before
 * the snapshot served (or no build time to tell), or its signed expiry passed while an unexpired snapshot is served
 * (with nothing served, or only an expired one, it is taken: old data beats none, and /readyz says stale).
 */
function judge(t: Take, vouched: Vouched): void {
  const { latest, served } = t;
  let meta: ReturnType<typeof openSnapshotFile>['meta'];
  try {
    const opened = openSnapshotFile(t.part);
    opened.db.close();
    meta = opened.meta;
  } catch (e) {
    throw new FollowRefusal('candidate', `the signed file is not a snapshot: ${(e as Error).message}`);
  }
  if (meta.schema_version !== SCHEMA_VERSION)
    throw new FollowRefusal(
      'schema',
      `the publication has schema version ${meta.schema_version}; this server reads version ${SCHEMA_VERSION}`,
    );
  for (const [who, id] of [
    ['latest.json names', latest.snapshot_id],
    ['the signature names', vouched.snapshotId ?? meta.snapshot_id],
  ])
    if (meta.snapshot_id !== id)
      throw new FollowRefusal('mismatch', `${who} snapshot ${id} but the signed file holds ${meta.snapshot_id}`);
  if (meta.built_at === null || Number.isNaN(Date.parse(meta.built_at)))
    throw new FollowRefusal('rollback', 'the signed file has no build time (built_at): its age cannot be checked');
  if (served !== null && Date.parse(meta.built_at) < Date.parse(served.built_at))
    throw new FollowRefusal(
      'rollback',
      `rollback: the publication was built at ${meta.built_at}, before the snapshot served (${served.snapshot_id}, built at ${served.built_at})`,
    );
  const expired = (at: string | null) => at !== null && Date.parse(at) <= Date.now();
  if (served !== null && expired(vouched.expiresAt) && !expired(t.servedExpiresAt))
    throw new FollowRefusal('expired', `the publication expired at ${vouched.expiresAt}; the snapshot served has not`);
}

let known: { inode: string; meta: ServedMeta & { file: string } } | null = null;
/**
 * The id and build time of the snapshot served from `file` (device:inode `inode`), read once per inode (a served inode never changes;
 * the path itself, served when the folder refuses hard links, names a new inode after each swap).
 */
export function servedMeta(file: string, inode = inodeOf(file)): (ServedMeta & { file: string }) | null {
  if (inode === null) return null;
  if (known?.inode === inode) return known.meta;
  if (inodeOf(file) !== inode) return null; // the path names another file by now
  try {
    const { db, meta } = openSnapshotFile(file);
    db.close();
    if (meta.snapshot_id === null || meta.built_at === null) return null;
    known = { inode, meta: { snapshot_id: meta.snapshot_id, built_at: meta.built_at, file } };
    return known.meta;
  } catch {
    return null;
  }
}

/**
 * Whether the owner's reason for refusing a candidate is the file's own (the same at every try): quick_check, another
 * schema version, statements that do not prepare, not a snapshot, WAL mode. Else it may pass: a worker too slow to
 * prepare, the file changed while checked, a file it could not open or link.
 */
export const inherentRefusal = (why: string) =>
  /fails quick_check|has schema version|does not match this server's queries|is not a snapshot|not an SQLite database|is damaged|is in WAL mode/.test(
    why,
  );

/**
 * Whether the file renamed over the path (device:inode) is served once the owner looked at it: a look already under
 * way (of an earlier file) is waited for, then the path is looked at again.
 */
export async function installed(target: FollowTarget, inode: string | null): Promise<boolean> {
  const serving = () => {
    const file = target.served()?.file;
    return file !== undefined && inode !== null && inodeOf(file) === inode;
  };
  if ((await target.install()) && serving()) return true;
  await target.install();
  return serving();
}

/**
 * After the owner refused the file renamed over the path (device:inode `refused`), the served snapshot is put back
 * there (a new link `tmp` to its inode, renamed over the path; the owner sees the file it serves), so that a restart
 * opens it, not the refused one. Nothing served: the refused file is removed (a restart starts empty, not on it). No
 * link kept (the path itself is served): left as it is.
 */
export async function putBackServed(
  target: FollowTarget,
  tmp: string,
  refused: string | null,
  log: (l: Record<string, unknown>) => void,
) {
  const file = target.served()?.file;
  if (file === undefined) {
    if (refused !== null && inodeOf(target.path) === refused) removeFile(target.path);
    await target.install();
    return;
  }
  if (file === target.path) return;
  try {
    removeFile(tmp);
    linkSync(file, tmp);
    renameSync(tmp, target.path);
    await target.install();
  } catch (e) {
    removeFile(tmp);
    log({
      level: 'warn',
      msg: 'following: could not put the served snapshot back at SNAPSHOT_PATH',
      error: (e as Error).message,
    });
  }
}

/**
 * Following, at start: a file at SNAPSHOT_PATH that cannot be served (not a snapshot, damaged, another schema
 * version: a first publication refused, a stop between the rename and the put-back, an upgrade) is removed and
 * logged, so the service starts as with nothing there (/readyz 503) and the follower replaces it.
 */
export function clearUnusable(path: string, log?: (l: Record<string, unknown>) => void): void {
  if (inodeOf(path) === null) return;
  let problem: string | null = null;
  try {
    const { db, meta } = openSnapshotFile(path);
    db.close();
    if (meta.schema_version !== SCHEMA_VERSION)
      problem = `${path} has schema version ${meta.schema_version}; this server reads version ${SCHEMA_VERSION}`;
  } catch (e) {
    if (!(e instanceof SnapshotError)) throw e;
    problem = e.message;
  }
  if (problem === null) return;
  removeFile(path);
  log?.({
    level: 'warn',
    msg: 'following: the file at SNAPSHOT_PATH cannot be served; removed it, not ready until a publication is in',
    error: problem,
  });
}

/** The prefix of the follower's files beside `path`: `.<name>.follow-`. */
export const PART = (path: string) => `.${basename(path)}.follow-`;

/** Removes the follower's files beside `path` (parts of other publications, a link put back half-way) but `keep`. */
export function removeParts(path: string, keep: string | null): void {
  for (const name of readdirSync(dirname(path))) {
    const file = join(dirname(path), name);
    if (name.startsWith(PART(path)) && file !== keep) removeFile(file);
  }
}
