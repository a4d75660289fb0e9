// The publication manifest, DIR/latest.json: the one file a follower polls, naming the current snapshot and signature.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** latest.json's content (format 1), as written; see docs/snapshot-format.md, "A publication". */
export interface Latest {
  readonly format: 1;
  readonly snapshot_id: string;
  readonly schema_version: number;
  /** The snapshot's build time (ISO 8601), from its snapshot_meta. */
  readonly built_at: string;
  readonly published_at: string;
  /** The snapshot's file name, in the same folder as latest.json. */
  readonly file: string;
  /** Its minisign signature's file name, in the same folder. */
  readonly signature: string;
  /** The snapshot file's size in bytes. */
  readonly size: number;
  /** When the publication goes stale (ISO 8601), or null when it does not expire. */
  readonly expires_at: string | null;
}

/** A latest.json that a follower must not act on: its message names the field and why, in one sentence. */
export class LatestError extends Error {
  override name = 'LatestError';
}

export const LATEST_FILE = 'latest.json';

/**
 * A plain file name in latest.json's own folder: letters, digits, '.', '_' and '-', starting with a letter or digit,
 * not "..": no '/', no '%' (so no "%2f"), no ':' (so no absolute URL), nothing a URL resolves elsewhere.
 */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const SNAPSHOT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)$/;

function field<T>(object: Record<string, unknown>, name: string, valid: (v: unknown) => v is T, what: string): T {
  const value = object[name];
  if (!valid(value))
    throw new LatestError(
      `latest.json's ${name} must be ${what} (got ${value === undefined ? 'nothing' : JSON.stringify(value)})`,
    );
  return value;
}

const matching =
  (pattern: RegExp) =>
  (v: unknown): v is string =>
    typeof v === 'string' && pattern.test(v) && !v.includes('..');
const isTime = (v: unknown): v is string => typeof v === 'string' && ISO_TIME.test(v) && !Number.isNaN(Date.parse(v));
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

/**
 * latest.json's text, validated: format 1, every field of its type, file and signature plain names in the same
 * folder, size a positive safe integer. Fields it does not know are ignored (a later format that a follower must
 * understand changes `format`). Throws LatestError with one sentence.
 */
export function parseLatest(text: string): Latest {
  let object: unknown;
  try {
    object = JSON.parse(text);
  } catch (e) {
    throw new LatestError(`latest.json is not JSON (${(e as Error).message})`);
  }
  if (typeof object !== 'object' || object === null || Array.isArray(object))
    throw new LatestError('latest.json is not a JSON object');
  const o = object as Record<string, unknown>;
  const name = 'a plain file name in the same folder (letters, digits, ".", "_", "-"; no "/", "%" or "..")';
  return {
    format: field(o, 'format', (v): v is 1 => v === 1, '1 (the format this server reads)'),
    snapshot_id: field(o, 'snapshot_id', matching(SNAPSHOT_ID), 'a snapshot id (letters, digits, "_", "-")'),
    schema_version: field(o, 'schema_version', isCount, 'a positive whole number'),
    built_at: field(o, 'built_at', isTime, 'an ISO 8601 time'),
    published_at: field(o, 'published_at', isTime, 'an ISO 8601 time'),
    file: field(o, 'file', matching(PLAIN_NAME), name),
    signature: field(o, 'signature', matching(PLAIN_NAME), name),
    size: field(o, 'size', isCount, 'the file size, a positive whole number of bytes'),
    expires_at:
      field(
        o,
        'expires_at',
        (v): v is string | null => v === null || v === undefined || isTime(v),
        'an ISO 8601 time or null',
      ) ?? null,
  };
}

/** latest.json's text: the fields in their documented order, two-space indented, with a final newline. */
export function formatLatest(latest: Latest): string {
  return `${JSON.stringify(latest, null, 2)}\n`;
}

/**
 * Writes DIR/`name` whole or not at all: to a temporary file in DIR, flushed to disk, then renamed over the old one,
 * so a reader (a web server, a sync tool, a follower) sees the old file or the new, never part of one.
 */
export function writeWhole(dir: string, name: string, text: string): void {
  const temporary = join(dir, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fd = openSync(temporary, 'wx', 0o644);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, join(dir, name));
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Writes DIR/latest.json whole or not at all (writeWhole): a follower never reads half a manifest. */
export function writeLatest(dir: string, latest: Latest): void {
  writeWhole(dir, LATEST_FILE, formatLatest(latest));
}
