// The server's side of the key store: every key's digest and status in memory, re-read when the file changes; fails closed.
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { KeyStoreUnavailable } from '../errors.ts';
import type { KeyRecord } from './key-format.ts';
import { checkSchema, KeyStoreError, openKeyStore, refuseFolder } from './key-store.ts';

export { KeyStoreUnavailable };

const unavailable = () => new KeyStoreUnavailable('the key store is unavailable');
const isBusy = (e: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((e as { code?: unknown })?.code ?? ''));

/** The longest the key store's stat is reused within one event-loop turn (see KeyReader.lookup). */
const REUSE_STAT_MS = 1;
/** How often a store that a writer holds locked is tried again, off the request path (a commit takes a few ms). */
const BUSY_RETRY_MS = 5;
/** How long start-up waits for a writer's lock on the key store. */
const START_WAIT_MS = 3000;
/** The longest a lookup waits for the re-read of a store that changed under a writer's lock (then 503). */
const REREAD_WAIT_MS = 1000;

/** Which file is at `path` now (device and inode), or null when there is none. */
function fileIdentity(path: string): string | null {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return null;
  }
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
 * Fails closed: a missing, unreadable or locked store throws KeyStoreUnavailable. A store that changed while
 * a writer holds its lock is never waited for on the event loop: a timer reads it again every BUSY_RETRY_MS
 * until it can (the table in memory is only trusted while the file has not changed), and meanwhile every
 * lookup (a key just created, re-enabled or revoked, or one unchanged) waits for that re-read, asynchronously
 * and at most REREAD_WAIT_MS (lookupOrWait), and gets its answer from the new table. After any other failure
 * the file is re-read at most once per `retryMs`, and every lookup fails at once.
 */
export class KeyReader {
  private keys: Map<string, KeyRecord> | null = null;
  private fd: number | null = null;
  private ident: string | null = null;
  private counter = -1;
  private readonly header = Buffer.alloc(4);
  private lastAttempt = 0;
  private failure: string | null = null;
  private busyRetry: NodeJS.Timeout | null = null;
  /** Called when the re-read under way (busyRetry) ends, read or failed, or the reader closes (lookupOrWait). */
  private readonly rereadWaiters = new Set<() => void>();
  /** Reloads, counted for the metrics. */
  reloads = 0;

  constructor(
    readonly path: string,
    private readonly opts: { retryMs?: number; log?: (l: Record<string, unknown>) => void; now?: () => number } = {},
  ) {
    if (!existsSync(path)) {
      openKeyStore(path, { create: true }).close();
      opts.log?.({ level: 'info', msg: 'created an empty key store', path });
    }
    // Start-up: a file that is not a key store stops the process. A writer's lock (another worker creating
    // the store, the keys command) is waited out here, for up to START_WAIT_MS: no request is waiting yet.
    const waitUntil = Date.now() + START_WAIT_MS;
    for (;;) {
      try {
        this.load();
        return;
      } catch (e) {
        if (!(e instanceof KeyStoreUnavailable)) throw e;
        if (Date.now() >= waitUntil) throw new KeyStoreError(`key store ${path} is locked by a writer; try again`);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, BUSY_RETRY_MS);
      }
    }
  }

  private now() {
    return (this.opts.now ?? Date.now)();
  }

  /** The file change counter in the SQLite header, or -1 when it cannot be read (then the store is re-read). */
  private readCounter(fd: number | null): number {
    try {
      return fd !== null && readSync(fd, this.header, 0, 4, 24) === 4 ? this.header.readUInt32BE(0) : -1;
    } catch {
      return -1;
    }
  }

  private load(): void {
    this.lastAttempt = this.now();
    const ident = fileIdentity(this.path);
    let fd: number | null = null;
    let db: Database.Database | null = null;
    try {
      refuseFolder(this.path);
      fd = openSync(this.path, 'r');
      db = new Database(this.path, { readonly: true, fileMustExist: true, timeout: 0 });
      db.pragma('query_only = 1');
      db.pragma('mmap_size = 0');
      // One read transaction: one shared lock for every read below (each statement would take its own, and each
      // could meet a writer's commit), and the change counter read under it matches the rows.
      db.exec('BEGIN');
      checkSchema(db, this.path);
      // The change counter is only bumped per transaction in rollback-journal mode; in WAL mode a revoke
      // would go unseen. openKeyStore never sets WAL, but a store switched by hand is refused (fail closed).
      const mode = String(db.pragma('journal_mode', { simple: true })).toLowerCase();
      if (mode === 'wal')
        throw new KeyStoreError(
          `key store ${this.path} is in WAL mode; switch it back with: sqlite3 ${this.path} 'PRAGMA journal_mode=DELETE'`,
        );
      const counter = this.readCounter(fd);
      const keys = new Map<string, KeyRecord>();
      for (const r of db
        .prepare('SELECT id, digest, expires_at, disabled_at, revoked_at FROM api_keys')
        .all() as (KeyRecord & { digest: Buffer })[]) {
        keys.set(r.digest.toString('base64'), {
          id: r.id,
          expires_at: r.expires_at,
          disabled_at: r.disabled_at,
          revoked_at: r.revoked_at,
        });
      }
      db.close();
      if (this.fd !== null) closeSync(this.fd);
      this.fd = fd;
      this.keys = keys;
      this.ident = ident;
      this.counter = counter;
      this.reloads++;
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
    if (this.failure !== reason)
      this.opts.log?.({ level: 'error', msg: 'key store unavailable; failing closed', reason });
    this.failure = reason;
    this.keys = null;
    this.statted = false;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    throw unavailable();
  }

  /** The key's record by digest, or undefined; throws KeyStoreUnavailable when the store cannot be read. */
  lookup = (digestBase64: string): KeyRecord | undefined => {
    if (
      this.keys === null ||
      !this.statted ||
      performance.now() - this.stattedAt >= REUSE_STAT_MS ||
      this.readCounter(this.fd) !== this.counter
    )
      this.check();
    return this.keys!.get(digestBase64);
  };

  /**
   * lookup, except that a key asked while the store is being re-read after a change (a writer's lock:
   * busyRetry) waits for that re-read instead of failing: the promise settles with the key's record from the
   * new table (a revoke or a re-enable applies), or rejects with KeyStoreUnavailable when the re-read fails or
   * has not succeeded within REREAD_WAIT_MS. Nothing waits on the event loop. Every key fails at once when
   * the store cannot be read at all (no re-read under way).
   */
  lookupOrWait = (digestBase64: string): KeyRecord | undefined | Promise<KeyRecord | undefined> => {
    try {
      return this.lookup(digestBase64);
    } catch (e) {
      if (!(e instanceof KeyStoreUnavailable) || this.busyRetry === null) throw e;
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          this.rereadWaiters.delete(done);
          if (this.busyRetry === null && this.keys !== null) resolve(this.keys.get(digestBase64));
          else reject(unavailable());
        };
        const timer = setTimeout(done, REREAD_WAIT_MS);
        this.rereadWaiters.add(done);
      });
    }
  };

  /** Settles the lookups waiting for the re-read that just ended (or for a reader that closed). */
  private rereadEnded(): void {
    for (const done of this.rereadWaiters) done();
  }

  /**
   * The two questions cost differently, so they are asked at different rates. "Was the file written?" (the
   * 4-byte read of the change counter) is asked on every request: the keys command changes the store in
   * place, so a disable or revoke applies to every request read after its commit, pipelined ones too.
   * "Was another file renamed into place?" (a stat of the path: a restored backup) is asked once per
   * event-loop turn that has a request, and at least every REUSE_STAT_MS: under load a turn carries
   * several requests, and a stat per request was a tenth of a listing detail's CPU (docs/performance.md).
   */
  private statted = false;
  private stattedAt = 0;
  private readonly nextTurn = () => {
    this.statted = false;
  };

  private check(): void {
    const ident = fileIdentity(this.path);
    if (ident === null) this.fail(`key store file ${this.path} is missing`);
    if (!this.keys || ident !== this.ident || this.readCounter(this.fd) !== this.counter) {
      if (this.busyRetry !== null) throw unavailable(); // locked by a writer: the timer reads it, not requests
      if (!this.keys && this.now() - this.lastAttempt < (this.opts.retryMs ?? 1000)) throw unavailable();
      try {
        this.load();
      } catch (e) {
        if (e instanceof KeyStoreUnavailable) {
          this.retryWhileBusy();
          throw e; // busy: neither a failure nor a success
        }
        this.lastAttempt = this.now();
        this.fail((e as Error).message);
      }
    }
    if (!this.statted) setImmediate(this.nextTurn);
    this.statted = true;
    this.stattedAt = performance.now();
  }

  /** Reads the store again every BUSY_RETRY_MS until the writer's lock is gone (or it fails for another reason). */
  private retryWhileBusy(): void {
    if (this.busyRetry !== null) return;
    const attempt = () => {
      try {
        this.load();
        this.busyRetry = null;
      } catch (e) {
        if (e instanceof KeyStoreUnavailable) {
          this.busyRetry = setTimeout(attempt, BUSY_RETRY_MS).unref();
          return;
        }
        this.busyRetry = null;
        this.lastAttempt = this.now();
        try {
          this.fail((e as Error).message);
        } catch {
          /* requests see the failure from now on */
        }
      }
      this.rereadEnded();
    };
    this.busyRetry = setTimeout(attempt, BUSY_RETRY_MS).unref();
  }

  /** Whether keys can be checked now (for /readyz): the store is read as a request would read it. */
  probe(): boolean {
    try {
      this.check();
      return true;
    } catch {
      return false;
    }
  }

  close() {
    if (this.busyRetry !== null) clearTimeout(this.busyRetry);
    this.busyRetry = null;
    this.keys = null;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.rereadEnded();
  }
}
