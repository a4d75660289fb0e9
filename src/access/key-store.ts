// The key store (its own SQLite file): its schema and the operator's read-write functions (the keys command).
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { commandLine } from '../../snapshot-format/commands.ts';
import { digestKey, generateKey, randomBase62 } from './key-format.ts';

const APPLICATION_ID = 0x6e6c726b; // 'nlrk': marks the file as a key store, so a snapshot passed as KEYS_PATH is refused
const SCHEMA_VERSION = 1;
const SCHEMA = `
  CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    digest      BLOB NOT NULL UNIQUE CHECK (length(digest) = 32), -- SHA-256 of the key; the key itself is never stored
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    disabled_at TEXT,
    revoked_at  TEXT
  ) STRICT;
  PRAGMA application_id = ${APPLICATION_ID};
  PRAGMA user_version = ${SCHEMA_VERSION};
`;

/** A problem the operator must fix (unknown id, revoked key, not a key store); the CLI exits 1 with its message. */
export class KeyStoreError extends Error {}

export type KeyStatus = 'active' | 'expired' | 'disabled' | 'revoked';
/** What `keys list` shows: never the key or its digest. */
export interface KeyInfo {
  id: string;
  name: string;
  created: string;
  expires: string | null;
  status: KeyStatus;
}
/** A key's row (the key store's columns, its digest aside). */
export interface KeyRow {
  id: string;
  name: string;
  created_at: string;
  expires_at: string | null;
  disabled_at: string | null;
  revoked_at: string | null;
}

export function checkSchema(db: Database.Database, path: string): void {
  const app = db.pragma('application_id', { simple: true }) as number;
  const version = db.pragma('user_version', { simple: true }) as number;
  if (app === APPLICATION_ID && version === SCHEMA_VERSION) return;
  if (app === APPLICATION_ID)
    throw new KeyStoreError(
      `${path} is a key store of schema version ${version}; this release reads ${SCHEMA_VERSION}`,
    );
  const isSnapshot = db
    .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'snapshot_meta'")
    .pluck()
    .get();
  throw new KeyStoreError(
    isSnapshot
      ? `${path} is a snapshot, not a key store: KEYS_PATH names a file of its own`
      : `${path} is an SQLite file but not a key store of this service`,
  );
}

/** A folder where the key store's file is expected, in the operator's words (SQLite would say "disk I/O error"). */
export function refuseFolder(path: string): void {
  let folder = false;
  try {
    folder = statSync(path).isDirectory();
  } catch {
    return; // missing or unreadable: the caller's own checks name it
  }
  if (folder)
    throw new KeyStoreError(
      `${path} is a folder; KEYS_PATH names the key store's file (e.g. ${join(path, 'keys.db')})`,
    );
}

/**
 * The operator's read-write connection. Rollback journal (no -wal/-shm files; a copy of the one file
 * is a backup) and a 5 s busy timeout; each change is one short IMMEDIATE transaction, so the
 * server's readers wait at most a few milliseconds.
 */
export function openKeyStore(path: string, opts: { create: boolean }): Database.Database {
  refuseFolder(path);
  if (!existsSync(path)) {
    if (!opts.create)
      throw new KeyStoreError(
        `no key store at ${path} (create a key first: ${commandLine('keys', 'create --name NAME', { quiet: true })})`,
      );
    // Readable by its owner only (the folder too, when it is made here): key names, ids and digests are
    // nobody else's business on a shared host. SQLite gives its journal the same mode.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      closeSync(openSync(path, 'wx', 0o600));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  // A file that is not a key store is refused before anything is written to it (its journal mode included);
  // only create makes an empty file a key store.
  if (statSync(path).size > 0) checkReadOnly(path);
  else if (!opts.create)
    throw new KeyStoreError(
      `${path} is empty, not a key store (create a key first: ${commandLine('keys', 'create --name NAME', { quiet: true })})`,
    );
  const db = new Database(path, { timeout: 5000 });
  try {
    db.transaction(() => {
      const empty =
        db.pragma('application_id', { simple: true }) === 0 &&
        (db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get() as number) === 0;
      if (empty) {
        if (!opts.create) throw new KeyStoreError(`${path} is empty, not a key store`);
        db.exec(SCHEMA);
        try {
          chmodSync(path, 0o600); // an empty file given to create: readable by its owner only, as a new store
        } catch {}
      }
      checkSchema(db, path);
    }).immediate();
    // A key store, and only a key store, is set back to the rollback journal the server needs (see ./key-reader.ts).
    db.pragma('journal_mode = DELETE');
    return db;
  } catch (e) {
    db.close();
    if (e instanceof KeyStoreError) throw e;
    throw new KeyStoreError(`cannot open key store ${path}: ${(e as Error).message}`);
  }
}

/** Refuses (KeyStoreError) an existing file that is not a key store, read-only: nothing is written to it. */
function checkReadOnly(path: string): void {
  let db: Database.Database | null = null;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: 5000 });
    checkSchema(db, path);
  } catch (e) {
    if (e instanceof KeyStoreError) throw e;
    throw new KeyStoreError(`cannot open key store ${path}: ${(e as Error).message}`);
  } finally {
    db?.close();
  }
}

function statusOf(r: KeyRow, now: number): KeyStatus {
  if (r.revoked_at !== null) return 'revoked';
  if (r.disabled_at !== null) return 'disabled';
  if (r.expires_at !== null && !(Date.parse(r.expires_at) > now)) return 'expired';
  return 'active';
}
/** What `keys list` shows of a row. */
export const keyInfo = (r: KeyRow, now: number): KeyInfo => ({
  id: r.id,
  name: r.name,
  created: r.created_at,
  expires: r.expires_at,
  status: statusOf(r, now),
});
const COLUMNS = 'id, name, created_at, expires_at, disabled_at, revoked_at';

/** A new key's record: a fresh id, created now, neither disabled nor revoked (the file store's and Redis's). */
export function newKeyRow(opts: { name: string; expiresAt?: string | null; now?: number }): KeyRow {
  return {
    id: `key_${randomBase62(16)}`,
    name: opts.name,
    created_at: new Date(opts.now ?? Date.now()).toISOString(),
    expires_at: opts.expiresAt ?? null,
    disabled_at: null,
    revoked_at: null,
  };
}

/** Issues a key; the returned `key` exists only in this return value (the store keeps its digest). */
export function createKey(
  db: Database.Database,
  opts: { name: string; expiresAt?: string | null; now?: number },
): KeyInfo & { key: string } {
  const now = opts.now ?? Date.now();
  const key = generateKey();
  const row = newKeyRow({ ...opts, now });
  db.prepare(
    'INSERT INTO api_keys (id, name, digest, created_at, expires_at) VALUES (@id, @name, @digest, @created_at, @expires_at)',
  ).run({ id: row.id, name: row.name, digest: digestKey(key), created_at: row.created_at, expires_at: row.expires_at });
  return { ...keyInfo(row, now), key };
}

export function listKeys(db: Database.Database, now = Date.now()): KeyInfo[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`).all() as KeyRow[]).map((r) =>
    keyInfo(r, now),
  );
}

export const countKeys = (db: Database.Database): number =>
  db.prepare('SELECT count(*) FROM api_keys').pluck().get() as number;

/** disable / enable / revoke one key. Revocation is final; repeating a change is harmless. */
export function changeKey(
  db: Database.Database,
  id: string,
  action: 'disable' | 'enable' | 'revoke',
  now = Date.now(),
): KeyInfo {
  const at = new Date(now).toISOString();
  return db
    .transaction(() => {
      const r = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`).get(id) as KeyRow | undefined;
      if (!r) throw new KeyStoreError(`no key with id ${JSON.stringify(id)} (see ${commandLine('keys', 'list')})`);
      if (r.revoked_at !== null && action !== 'revoke')
        throw new KeyStoreError(`key ${id} is revoked; revocation is final (create a new key instead)`);
      if (action === 'disable' && r.disabled_at === null) r.disabled_at = at;
      if (action === 'enable') r.disabled_at = null;
      if (action === 'revoke' && r.revoked_at === null) r.revoked_at = at;
      db.prepare('UPDATE api_keys SET disabled_at = @disabled_at, revoked_at = @revoked_at WHERE id = @id').run({
        id,
        disabled_at: r.disabled_at,
        revoked_at: r.revoked_at,
      });
      return keyInfo(r, now);
    })
    .immediate();
}
