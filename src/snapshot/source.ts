// Opens the snapshot read-only, checks its schema version, prepares statements; swaps to a new file by identity.
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { aboutTheFile, SCHEMA_VERSION } from '../../snapshot-format/schema.ts';
import { ApiError } from '../http/errors.ts';

export class SnapshotError extends Error {}

export interface SnapshotMeta {
  snapshot_id: string;
  schema_version: number;
  built_at: string;
  counts: Record<string, number>;
}
type Preparer<T> = (db: Database.Database) => T;

export interface Snapshot {
  readonly db: Database.Database;
  readonly meta: SnapshotMeta;
  /** The statements a route prepared for this snapshot (prepared at open time, never in a request). */
  use<T>(prepare: Preparer<T>): T;
}

function identity(path: string): string | null {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return null;
  }
}

function open(path: string, preparers: Set<Preparer<unknown>>, nativeBinding?: string): Snapshot {
  let db: Database.Database;
  try {
    db = new Database(path, {
      readonly: true,
      fileMustExist: true,
      timeout: 100,
      ...(nativeBinding ? { nativeBinding } : {}),
    });
  } catch (e) {
    if (!aboutTheFile(e)) throw e;
    throw new SnapshotError(`cannot open snapshot ${path}: ${(e as Error).message}`);
  }
  try {
    db.pragma('query_only = 1');
    db.pragma('mmap_size = 0'); // an in-place overwrite must not become SIGBUS; snapshots are swapped by rename
    // The file never changes under an open connection (a new snapshot is a new file, renamed into place), so
    // the connection takes its shared lock once and keeps it: no lock/unlock, hot-journal check and header
    // read per statement (8 system calls), and the page cache stays valid between statements.
    db.pragma('locking_mode = EXCLUSIVE');
    let rows: { key: string; value: string }[];
    try {
      rows = db.prepare('SELECT key, value FROM snapshot_meta').all() as typeof rows;
    } catch (e) {
      throw new SnapshotError(`${path} is not a snapshot (no snapshot_meta table: ${(e as Error).message})`);
    }
    const m = Object.fromEntries(rows.map((r) => [r.key, r.value]));
    if (Number(m.schema_version) !== SCHEMA_VERSION) {
      throw new SnapshotError(
        `${path} has schema version ${m.schema_version ?? 'none'}; this server reads version ${SCHEMA_VERSION}. Rebuild it with npm run build-snapshot.`,
      );
    }
    const meta: SnapshotMeta = {
      snapshot_id: m.snapshot_id,
      schema_version: SCHEMA_VERSION,
      built_at: m.built_at,
      counts: JSON.parse(m.counts ?? '{}'),
    };
    const prepared = new Map<Preparer<unknown>, unknown>();
    const snap: Snapshot = {
      db,
      meta,
      use<T>(prepare: Preparer<T>): T {
        if (!prepared.has(prepare)) prepared.set(prepare, prepare(db));
        return prepared.get(prepare) as T;
      },
    };
    for (const p of preparers) snap.use(p);
    return snap;
  } catch (e) {
    db.close();
    if (e instanceof SnapshotError) throw e;
    throw new SnapshotError(`${path} does not match this server's queries: ${(e as Error).message}`);
  }
}

/**
 * The current snapshot. Every `checkIntervalMs` the file's identity (device, inode, size, mtime) is
 * compared; a changed file is opened and swapped in. A missing or unreadable file makes `get()` throw
 * a 503 until a good file is back; the process keeps running.
 */
export class SnapshotSource {
  private current: Snapshot | null = null;
  private currentId: string | null = null;
  private lastCheck = 0;
  private failure: string | null = null;
  private readonly preparers = new Set<Preparer<unknown>>();

  constructor(
    readonly path: string,
    private readonly opts: {
      checkIntervalMs?: number;
      log?: (l: Record<string, unknown>) => void;
      now?: () => number;
      nativeBinding?: string;
    } = {},
  ) {
    this.currentId = identity(path);
    this.current = open(path, this.preparers, opts.nativeBinding); // start-up: a bad file stops the process
    this.lastCheck = this.now();
  }

  private now() {
    return (this.opts.now ?? Date.now)();
  }

  /** Registers a route's statements: prepared now on the open snapshot and on every future swap. */
  prepare<T>(p: Preparer<T>): Preparer<T> {
    this.preparers.add(p as Preparer<unknown>);
    this.current?.use(p);
    return p;
  }

  get(): Snapshot {
    const interval = this.opts.checkIntervalMs ?? 1000;
    if (this.now() - this.lastCheck >= interval) this.refresh();
    if (!this.current)
      throw new ApiError('service_unavailable', 'The data snapshot is unavailable; try again shortly.', {
        'Retry-After': '5',
      });
    return this.current;
  }

  /** Re-checks the file now. Returns true when a new snapshot was swapped in. */
  refresh(): boolean {
    this.lastCheck = this.now();
    const id = identity(this.path);
    if (id !== null && id === this.currentId && this.current) return false;
    if (id === null) return this.fail(`snapshot file ${this.path} is missing`);
    try {
      const next = open(this.path, this.preparers, this.opts.nativeBinding);
      const prev = this.current;
      this.current = next;
      this.currentId = id;
      this.failure = null;
      prev?.db.close();
      this.opts.log?.({ level: 'info', msg: 'snapshot swapped in', snapshot_id: next.meta.snapshot_id });
      return true;
    } catch (e) {
      return this.fail((e as Error).message);
    }
  }

  private fail(reason: string): false {
    if (this.failure !== reason)
      this.opts.log?.({ level: 'error', msg: 'snapshot unavailable; failing closed', reason });
    this.failure = reason;
    this.current?.db.close();
    this.current = null;
    this.currentId = null;
    return false;
  }

  close() {
    this.current?.db.close();
    this.current = null;
  }
}
