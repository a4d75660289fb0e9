// `snapshot publish`: a snapshot, its minisign signature and DIR/latest.json naming them, written in that order.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectSnapshot } from '../inspect/inspect.ts';
import {
  formatTrustedComment,
  LATEST_FILE,
  type Latest,
  parseLatest,
  parseSecretKey,
  parseSignature,
  type SecretKey,
  signDigest,
  verifyDigest,
  writeLatest,
  writeWhole,
} from '../minisign/index.ts';
import { PublishError, placeSnapshot, prunePublications } from './publication-files.ts';

export { PublishError };

export interface PublishOptions {
  file: string;
  /** The secret key's text (a minisign .key file's content). */
  secretKey: string;
  out: string;
  /** Publications kept in `out`, the new one included (null: all). */
  keep: number | null;
  /** How long the publication stays fresh (null: it does not expire). */
  validForMs: number | null;
  password?: string;
  now?: Date;
}

export interface Published {
  latest: Latest;
  keyId: string;
  /** How the snapshot got into `out`: copied, or already there with the same bytes (published again). */
  placed: 'copied' | 'already published';
  pruned: string[];
}

/** The snapshot's identity when it passes `snapshot inspect`'s checks; PublishError otherwise. */
function checkedSnapshot(file: string) {
  const report = inspectSnapshot(file);
  // SQLite's answers may span lines: the refusal stays one line.
  const problems = report.problems.join('; ').replace(/\s*\n\s*/g, '; ');
  if (!report.ok) throw new PublishError(`${file} is not published: it fails ${problems}`);
  const { snapshot_id: id, built_at: builtAt, schema_version: schema } = report;
  if (id === null || builtAt === null || schema === null)
    throw new PublishError(`${file} is not published: its snapshot_meta lacks the id, build time or schema version`);
  return { id, builtAt, schema, size: report.file_bytes };
}

/** A later build already named by latest.json would make this one a rollback, which followers refuse: refused here. */
function refuseRollback(out: string, id: string, builtAt: string): void {
  let current: Latest;
  try {
    current = parseLatest(readFileSync(join(out, LATEST_FILE), 'utf8'));
  } catch {
    return; // none yet, or unreadable: the new one replaces it
  }
  if (Date.parse(current.built_at) <= Date.parse(builtAt)) return;
  throw new PublishError(
    `${join(out, LATEST_FILE)} names ${current.snapshot_id} built ${current.built_at}, later than this snapshot (${id}, built ${builtAt}): followers refuse an older build`,
  );
}

/** The .minisig text for the snapshot's digest, checked against the key's own public half before it is written. */
function signature(digest: Buffer, key: SecretKey, trustedComment: string): string {
  const text = signDigest(digest, key, trustedComment, `signature from snapshot publish, key ${key.keyId}`);
  verifyDigest(digest, parseSignature(text), { ...key, key: key.publicKey, line: '' });
  return text;
}

/**
 * Publishes the snapshot `opts.file` into `opts.out`: DIR/<id>.db (a copy, never changed once there),
 * DIR/<id>.db.minisig, then DIR/latest.json, each whole (a temporary file renamed), then prunes to `keep`.
 * Throws PublishError (or the key's SecretKeyError, an I/O error) before latest.json changes.
 */
export async function publish(opts: PublishOptions): Promise<Published> {
  const snapshot = checkedSnapshot(opts.file);
  const key = await parseSecretKey(opts.secretKey, opts.password);
  mkdirSync(opts.out, { recursive: true });
  refuseRollback(opts.out, snapshot.id, snapshot.builtAt);
  const file = `${snapshot.id}.db`;
  const { digest, placed } = await placeSnapshot(opts.file, opts.out, file);
  const now = opts.now ?? new Date();
  const expiresAt = opts.validForMs === null ? null : new Date(now.getTime() + opts.validForMs);
  const comment = formatTrustedComment({ timestamp: now, file, snapshotId: snapshot.id, expiresAt });
  writeWhole(opts.out, `${file}.minisig`, signature(digest, key, comment));
  const latest: Latest = {
    format: 1,
    snapshot_id: snapshot.id,
    schema_version: snapshot.schema,
    built_at: snapshot.builtAt,
    published_at: now.toISOString(),
    file,
    signature: `${file}.minisig`,
    size: snapshot.size,
    expires_at: expiresAt?.toISOString() ?? null,
  };
  writeLatest(opts.out, latest);
  const pruned = opts.keep === null ? [] : prunePublications(opts.out, opts.keep, file);
  return { latest, keyId: key.keyId, placed, pruned };
}
