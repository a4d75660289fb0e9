// The key store (its own SQLite file): schema, the operator's read-write functions, and the server's read-only, fail-closed reader.
import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { digestKey, generateKey, randomBase62, type KeyRecord } from './auth.ts';
import { ApiError } from './errors.ts';

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
export interface KeyInfo { id: string; name: string; created: string; expires: string | null; status: KeyStatus }
interface Row { id: string; name: string; created_at: string; expires_at: string | null; disabled_at: string | null; revoked_at: string | null }

function checkSchema(db: Database.Database, path: string): void {
  const app = db.pragma('application_id', { simple: true }) as number;
  const version = db.pragma('user_version', { simple: true }) as number;
  if (app !== APPLICATION_ID || version !== SCHEMA_VERSION) {
    throw new KeyStoreError(`${path} is not a key store of this service (application_id ${app}, version ${version})`);
  }
}

/**
 * The operator's read-write connection. Rollback journal (no -wal/-shm files; a copy of the one file
 * is a backup) and a 5 s busy timeout; each change is one short IMMEDIATE transaction, so the
 * server's readers wait at most a few milliseconds.
 */
export function openKeyStore(path: string, opts: { create: boolean }): Database.Database {
  if (!existsSync(path)) {
    if (!opts.create) throw new KeyStoreError(`no key store at ${path} (create a key first: npm run keys -- create --name NAME)`);
    // Readable by its owner only (the folder too, when it is made here): key names, ids and digests are
    // nobody else's business on a shared host. SQLite gives its journal the same mode.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try { closeSync(openSync(path, 'wx', 0o600)); } catch (e) { if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; }
  }
  const db = new Database(path, { timeout: 5000 });
  try {
    db.pragma('journal_mode = DELETE');
    db.transaction(() => {
      const empty = db.pragma('application_id', { simple: true }) === 0 && (db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get() as number) === 0;
      if (empty) db.exec(SCHEMA);
      checkSchema(db, path);
    }).immediate();
    return db;
  } catch (e) {
    db.close();
    if (e instanceof KeyStoreError) throw e;
    throw new KeyStoreError(`cannot open key store ${path}: ${(e as Error).message}`);
  }
}

function statusOf(r: Row, now: number): KeyStatus {
  if (r.revoked_at !== null) return 'revoked';
  if (r.disabled_at !== null) return 'disabled';
  if (r.expires_at !== null && !(Date.parse(r.expires_at) > now)) return 'expired';
  return 'active';
}
const info = (r: Row, now: number): KeyInfo => ({ id: r.id, name: r.name, created: r.created_at, expires: r.expires_at, status: statusOf(r, now) });
const COLUMNS = 'id, name, created_at, expires_at, disabled_at, revoked_at';

/** Issues a key; the returned `key` exists only in this return value (the store keeps its digest). */
export function createKey(db: Database.Database, opts: { name: string; expiresAt?: string | null; now?: number }): KeyInfo & { key: string } {
  const now = opts.now ?? Date.now();
  const key = generateKey();
  const row: Row = { id: `key_${randomBase62(16)}`, name: opts.name, created_at: new Date(now).toISOString(), expires_at: opts.expiresAt ?? null, disabled_at: null, revoked_at: null };
  db.prepare('INSERT INTO api_keys (id, name, digest, created_at, expires_at) VALUES (@id, @name, @digest, @created_at, @expires_at)')
    .run({ id: row.id, name: row.name, digest: digestKey(key), created_at: row.created_at, expires_at: row.expires_at });
  return { ...info(row, now), key };
}

export function listKeys(db: Database.Database, now = Date.now()): KeyInfo[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`).all() as Row[]).map((r) => info(r, now));
}

export const countKeys = (db: Database.Database): number => db.prepare('SELECT count(*) FROM api_keys').pluck().get() as number;

/** disable / enable / revoke one key. Revocation is final; repeating a change is harmless. */
export function changeKey(db: Database.Database, id: string, action: 'disable' | 'enable' | 'revoke', now = Date.now()): KeyInfo {
  const at = new Date(now).toISOString();
  return db.transaction(() => {
    const r = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`).get(id) as Row | undefined;
    if (!r) throw new KeyStoreError(`no key with id ${JSON.stringify(id)} (see npm run keys -- list)`);
    if (r.revoked_at !== null && action !== 'revoke') throw new KeyStoreError(`key ${id} is revoked; revocation is final (create a new key instead)`);
    if (action === 'disable' && r.disabled_at === null) r.disabled_at = at;
    if (action === 'enable') r.disabled_at = null;
    if (action === 'revoke' && r.revoked_at === null) r.revoked_at = at;
    db.prepare('UPDATE api_keys SET disabled_at = @disabled_at, revoked_at = @revoked_at WHERE id = @id').run({ id, disabled_at: r.disabled_at, revoked_at: r.revoked_at });
    return info(r, now);
  }).immediate();
}

const unavailable = () => new ApiError('service_unavailable', 'The key store is unavailable; try again shortly.', { 'Retry-After': '1' });
const isBusy = (e: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((e as { code?: unknown })?.code ?? ''));

/** The longest the key store's stat is reused within one event-loop turn (see KeyReader.lookup). */
const REUSE_STAT_MS = 1;

/** Which file is at `path` now (device and inode), or null when there is none. */
function fileIdentity(path: string): string | null {
  try { const s = statSync(path); return `${s.dev}:${s.ino}`; } catch { return null; }
}

/**
 * The server's view of the key store: every key's digest and status, held in memory and re-read
 * whenever the file changes. A change written in place (the keys command) applies to every request
 * read after its commit; another file renamed into place (a restored backup) to every request read in
 * a later event-loop turn or at least REUSE_STAT_MS later (see lookup).
 *
 * "Changed" is decided with two cheap system calls instead of an SQLite read transaction (about
 * eight: locks, hot-journal checks, header read): `stat` tells whether another file was renamed into
 * place (new inode), and a 4-byte read of the SQLite header's file change counter (offset 24) tells
 * whether the file was written. SQLite increments that counter in every write transaction in rollback
 * journal mode, which is the mode `openKeyStore` sets; unlike mtime it cannot miss two writes within
 * one clock tick. The counter is read before the rows, so a write that lands in between only causes
 * one more reload.
 *
 * Fails closed: a missing, unreadable or locked store throws a 503 ApiError. After a failure the file is
 * re-read at most once per `retryMs`.
 */
export class KeyReader {
  private keys: Map<string, KeyRecord> | null = null;
  private fd: number | null = null;
  private ident: string | null = null;
  private counter = -1;
  private readonly header = Buffer.alloc(4);
  private lastAttempt = 0;
  private failure: string | null = null;

  constructor(readonly path: string, private readonly opts: { retryMs?: number; log?: (l: Record<string, unknown>) => void; now?: () => number } = {}) {
    if (!existsSync(path)) {
      openKeyStore(path, { create: true }).close();
      opts.log?.({ level: 'info', msg: 'created an empty key store', path });
    }
    try {
      this.load(); // start-up: a file that is not a key store stops the process
    } catch (e) {
      if (e instanceof ApiError) throw new KeyStoreError(`key store ${path} is locked by a writer; try again`);
      throw e;
    }
  }

  private now() { return (this.opts.now ?? Date.now)(); }

  /** The file change counter in the SQLite header, or -1 when it cannot be read (then the store is re-read). */
  private readCounter(fd: number | null): number {
    try {
      return fd !== null && readSync(fd, this.header, 0, 4, 24) === 4 ? this.header.readUInt32BE(0) : -1;
    } catch { return -1; }
  }

  private load(): void {
    this.lastAttempt = this.now();
    const ident = fileIdentity(this.path);
    let fd: number | null = null;
    let db: Database.Database | null = null;
    try {
      fd = openSync(this.path, 'r');
      db = new Database(this.path, { readonly: true, fileMustExist: true, timeout: 50 });
      db.pragma('query_only = 1');
      db.pragma('mmap_size = 0');
      checkSchema(db, this.path);
      // The change counter is only bumped per transaction in rollback-journal mode; in WAL mode a revoke
      // would go unseen. openKeyStore never sets WAL, but a store switched by hand is refused (fail closed).
      const mode = String(db.pragma('journal_mode', { simple: true })).toLowerCase();
      if (mode === 'wal') throw new KeyStoreError(`key store ${this.path} is in WAL mode; switch it back with: sqlite3 ${this.path} 'PRAGMA journal_mode=DELETE'`);
      const counter = this.readCounter(fd);
      const keys = new Map<string, KeyRecord>();
      for (const r of db.prepare('SELECT id, digest, expires_at, disabled_at, revoked_at FROM api_keys').all() as (KeyRecord & { digest: Buffer })[]) {
        keys.set(r.digest.toString('base64'), { id: r.id, expires_at: r.expires_at, disabled_at: r.disabled_at, revoked_at: r.revoked_at });
      }
      db.close();
      if (this.fd !== null) closeSync(this.fd);
      this.fd = fd;
      this.keys = keys;
      this.ident = ident;
      this.counter = counter;
    } catch (e) {
      db?.close();
      if (fd !== null) closeSync(fd);
      if (isBusy(e)) throw unavailable(); // a writer holds the lock: answer fast, keep what we had for the next try
      if (e instanceof KeyStoreError) throw e;
      throw new KeyStoreError(`cannot read key store ${this.path}: ${(e as Error).message}`);
    }
    if (this.failure !== null) this.opts.log?.({ level: 'info', msg: 'key store readable again', path: this.path });
    this.failure = null;
  }

  private fail(reason: string): never {
    if (this.failure !== reason) this.opts.log?.({ level: 'error', msg: 'key store unavailable; failing closed', reason });
    this.failure = reason;
    this.keys = null;
    this.statted = false;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    throw unavailable();
  }

  /** The key's record by digest, or undefined; throws a 503 ApiError when the store cannot be read. */
  lookup = (digestBase64: string): KeyRecord | undefined => {
    if (this.keys === null || !this.statted || performance.now() - this.stattedAt >= REUSE_STAT_MS || this.readCounter(this.fd) !== this.counter) this.check();
    return this.keys!.get(digestBase64);
  };

  /**
   * The two questions cost differently, so they are asked at different rates. "Was the file written?" (the
   * 4-byte read of the change counter) is asked on every request: the keys command changes the store in
   * place, so a disable or revoke applies to every request read after its commit, pipelined ones too.
   * "Was another file renamed into place?" (a stat of the path: a restored backup) is asked once per
   * event-loop turn that has a request, and at least every REUSE_STAT_MS: under load a turn carries
   * several requests, and the stat cost ~10-20 µs of a listing detail's ~170 µs of CPU on this VM.
   */
  private statted = false;
  private stattedAt = 0;
  private readonly nextTurn = () => { this.statted = false; };

  private check(): void {
    const ident = fileIdentity(this.path);
    if (ident === null) this.fail(`key store file ${this.path} is missing`);
    if (!this.keys || ident !== this.ident || this.readCounter(this.fd) !== this.counter) {
      if (!this.keys && this.now() - this.lastAttempt < (this.opts.retryMs ?? 1000)) throw unavailable();
      try { this.load(); } catch (e) {
        if (e instanceof ApiError) throw e; // busy: neither a failure nor a success
        this.lastAttempt = this.now();
        this.fail((e as Error).message);
      }
    }
    if (!this.statted) setImmediate(this.nextTurn);
    this.statted = true;
    this.stattedAt = performance.now();
  }

  close() {
    this.keys = null;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
