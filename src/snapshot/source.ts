// The snapshot being served: opened read-only and verified; a replacement file is verified before it is swapped in.
import { type FSWatcher, statSync, watch } from 'node:fs';
import Database from 'better-sqlite3';
import { commandLine } from '../../snapshot-format/commands.ts';
import { aboutTheFile, SCHEMA_VERSION } from '../../snapshot-format/schema.ts';
import { SnapshotUnavailable } from '../errors.ts';
import { fileProblem, readHead, walModeProblem } from './file.ts';
import { quickCheck } from './quick-check.ts';

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

/** What became of the last replacement file that was looked at (for /readyz and the logs). */
export interface CandidateState {
  state: 'checking' | 'refused' | 'missing';
  reason?: string;
  at: string;
}

export interface SnapshotEvents {
  swapped?: (meta: SnapshotMeta) => void;
  refused?: (reason: string) => void;
}

/** Whether two identities are of one file (device and inode), whatever its size and modification time. */
const sameFile = (a: string | null, b: string | null) =>
  a !== null && b !== null && a.split(':', 2).join(':') === b.split(':', 2).join(':');

function identity(path: string): string | null {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return null;
  }
}

/** An identity no file has: the next look at the path tries whatever is there, even a file refused before. */
const LOOK_AGAIN = '(look again)';

/** The size in an identity (device:inode:size:mtime). */
const sizeOf = (id: string) => id.split(':')[2];

/** The first 100 bytes of the file (SQLite's database header), or null when they cannot be read whole. */
function headerOf(path: string): Buffer | null {
  try {
    return readHead(path, 100);
  } catch {
    return null;
  }
}

/** Refuses a file in WAL mode from its header, before anything opens it (SQLite would add -wal and -shm files). */
function refuseWal(path: string): void {
  const wal = walModeProblem(path);
  if (wal !== null) throw new SnapshotError(wal);
}

function open(path: string, preparers: Set<Preparer<unknown>>, nativeBinding?: string): Snapshot {
  const problem = fileProblem(path);
  if (problem !== null) throw new SnapshotError(`cannot open snapshot ${path}: ${problem}`);
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
        `${path} has schema version ${m.schema_version ?? 'none'}; this server reads version ${SCHEMA_VERSION}. Rebuild it with ${commandLine('build-snapshot')}.`,
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
 * The current snapshot. Every `checkIntervalMs` (on a timer, and on a data request when the timer is late) the
 * file's identity (device, inode, size, mtime) is compared;
 * a changed file is a candidate: checked with quick_check off the event loop, then opened and its
 * statements prepared, and only then swapped in. A candidate that fails any step is refused: the previous
 * snapshot goes on serving (its open file stays readable after a rename over it or a delete), and the same
 * file is not tried again. `get()` answers 503 only when there is no valid snapshot at all: none was ever opened,
 * or the served file itself was changed in place into one that is refused (`damaged`).
 */
export class SnapshotSource {
  private current: Snapshot | null = null;
  private currentId: string | null = null;
  /** The identity of the file last looked at (served, refused or missing), so that each is tried once. */
  private seenId: string | null = null;
  private lastCheck = 0;
  private checking: Promise<boolean> | null = null;
  private readonly preparers = new Set<Preparer<unknown>>();
  /** The last candidate that is not being served, or null when the served file is the file at the path. */
  candidate: CandidateState | null = null;
  /**
   * Why the open snapshot is no longer served, or null: its own file (same device and inode) was changed in place
   * and the result is not a valid snapshot, so the pages the open connection reads are no longer the snapshot it
   * opened. Data requests get 503 and /readyz says so until a valid file is at the path again.
   */
  damaged: string | null = null;
  /** Looks at the file every checkIntervalMs without traffic too (unref'd: it never keeps the process up). */
  private readonly timer: NodeJS.Timeout;
  /** The served file's header as opened: a write in place that changes it is seen without a quick_check. */
  private servedHeader: Buffer | null = null;
  /**
   * Told by the kernel (inotify) of any change to the served file, so that a write in place or a rename over it
   * is looked at within an event-loop turn instead of at the next interval; null where watching is not available
   * (the interval still looks).
   */
  private watcher: FSWatcher | null = null;

  constructor(
    readonly path: string,
    private readonly opts: {
      checkIntervalMs?: number;
      log?: (l: Record<string, unknown>) => void;
      now?: () => number;
      nativeBinding?: string;
      events?: SnapshotEvents;
    } = {},
  ) {
    this.currentId = identity(path);
    this.seenId = this.currentId;
    refuseWal(path);
    this.current = open(path, this.preparers, opts.nativeBinding); // start-up: a bad file stops the process
    this.servedHeader = headerOf(path);
    this.watchServed();
    this.lastCheck = this.now();
    this.timer = setInterval(() => void this.refresh(), opts.checkIntervalMs ?? 1000).unref();
  }

  /** Watches the file just opened (the inode at the path now); a watch that cannot be made leaves the interval. */
  private watchServed(): void {
    this.watcher?.close();
    this.watcher = null;
    try {
      const w = watch(this.path, { persistent: false }, () => void this.refresh());
      w.on('error', () => {
        w.close();
        if (this.watcher === w) this.watcher = null;
      });
      this.watcher = w;
    } catch {
      // e.g. the inotify watch limit: the interval still looks
    }
  }

  /**
   * The served file (same device and inode) is being written in place when its size or its header changed: the
   * open connection would read pages of the new content beside pages it holds of the old, and answer from a mix
   * (another listing than the one asked for, under the old snapshot's id). Data requests get 503 from now until a
   * valid snapshot is swapped in; a change of the modification time alone (touch) is only checked.
   */
  private markIfWrittenInPlace(id: string | null): void {
    if (this.damaged !== null || this.current === null || id === null || id === this.currentId) return;
    if (!sameFile(id, this.currentId) || this.isServedBuild(id)) return;
    this.setDamaged('is being changed in place');
  }

  private setDamaged(what: string): void {
    this.damaged = `the served snapshot file ${this.path} ${what}; data requests get 503 until a valid snapshot is at the path (rename one into place)`;
    this.opts.log?.({ level: 'error', msg: 'snapshot file changed in place; data requests get 503', reason: what });
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

  /** The snapshot being served, or null (between a failed start and a good file: never after a good start). */
  peek(): Snapshot | null {
    return this.current;
  }

  get(): Snapshot {
    if (this.now() - this.lastCheck >= (this.opts.checkIntervalMs ?? 1000)) void this.refresh();
    if (!this.current || this.damaged !== null) throw new SnapshotUnavailable(this.damaged ?? 'no snapshot was opened');
    return this.current;
  }

  /**
   * Looks at the file now (SIGHUP, the interval). Resolves true when a new snapshot was swapped in; a check
   * already under way is joined rather than started twice.
   */
  refresh(): Promise<boolean> {
    this.lastCheck = this.now();
    const id = identity(this.path);
    this.markIfWrittenInPlace(id);
    if (this.checking) return this.checking;
    if (id === this.seenId) return Promise.resolve(false);
    this.seenId = id;
    if (id === null) {
      this.note({ state: 'missing', reason: `snapshot file ${this.path} is missing` });
      return Promise.resolve(false);
    }
    this.note({ state: 'checking' });
    this.checking = this.verifyAndSwap(id).finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  /**
   * refresh() for an operator's signal (SIGHUP): also says so when the file at the path is the one served, and looks
   * again at a file that was refused or missing (its permissions fixed, say), which the interval does not retry.
   */
  async lookNow(): Promise<boolean> {
    if (this.checking === null && this.candidate !== null) this.seenId = LOOK_AGAIN;
    const swapped = await this.refresh();
    if (!swapped && this.upToDate)
      this.opts.log?.({
        level: 'info',
        msg: 'SIGHUP: the snapshot file is the one being served; nothing to swap',
        snapshot_id: this.current?.meta.snapshot_id,
      });
    return swapped;
  }

  private async verifyAndSwap(id: string): Promise<boolean> {
    try {
      // What the file is before what SQLite makes of it: a copy cut short or a file this process may not read is
      // named as such, not as "malformed" or "unable to open" from quick_check.
      const problem = fileProblem(this.path);
      if (problem !== null) throw new SnapshotError(`cannot open snapshot ${this.path}: ${problem}`);
      refuseWal(this.path); // before quick_check opens it; open() below runs only if the file did not change since
      const damage = await quickCheck(this.path, this.opts.nativeBinding);
      if (damage !== null) throw new SnapshotError(`${this.path} fails quick_check: ${damage}`);
      if (identity(this.path) !== id) throw new SnapshotError(`${this.path} changed while it was checked`);
      if (this.isServedBuild(id)) {
        // A touch (or the same build copied over itself): the served snapshot is what the file holds; nothing is swapped.
        this.currentId = id;
        this.candidate = null;
        this.opts.log?.({
          level: 'info',
          msg: 'snapshot file checked: it holds the snapshot being served (only its time changed); nothing to swap',
          snapshot_id: this.current!.meta.snapshot_id,
        });
        return false;
      }
      const next = open(this.path, this.preparers, this.opts.nativeBinding);
      const prev = this.current;
      this.current = next;
      this.currentId = id;
      this.candidate = null;
      this.damaged = null;
      this.servedHeader = headerOf(this.path);
      this.watchServed();
      prev?.db.close();
      this.opts.log?.({
        level: 'info',
        msg: 'snapshot swapped in',
        snapshot_id: next.meta.snapshot_id,
        previous_snapshot_id: prev?.meta.snapshot_id ?? null,
      });
      this.opts.events?.swapped?.(next.meta);
      return true;
    } catch (e) {
      const reason = (e as Error).message;
      // The served file itself was written to: what the open connection reads is no longer what it opened.
      if (this.current !== null && this.damaged === null && sameFile(id, this.currentId))
        this.setDamaged(`was changed in place and is not a valid snapshot (${reason})`);
      this.note({ state: 'refused', reason });
      this.opts.events?.refused?.(reason);
      if (identity(this.path) !== id) this.seenId = null; // replaced again meanwhile: look at the newer file
      return false;
    }
  }

  /**
   * Whether the file with this identity is the served one, unchanged but for its time: the same device and inode,
   * size and SQLite header (which carries a stamp of the build's identity) as when it was opened, and not damaged.
   */
  private isServedBuild(id: string): boolean {
    if (this.current === null || this.damaged !== null || !sameFile(id, this.currentId)) return false;
    if (sizeOf(id) !== sizeOf(this.currentId!)) return false;
    const header = headerOf(this.path);
    return header !== null && this.servedHeader !== null && header.equals(this.servedHeader);
  }

  private note(c: Omit<CandidateState, 'at'>): void {
    this.candidate = { ...c, at: new Date(this.now()).toISOString() };
    if (c.state === 'checking') return;
    const serving =
      this.current === null
        ? '; no snapshot to serve'
        : this.damaged !== null
          ? '; data requests get 503 (the served file was changed in place)'
          : `; still serving ${this.current.meta.snapshot_id}`;
    this.opts.log?.({
      level: this.current ? 'warn' : 'error',
      msg: c.state === 'missing' ? `snapshot file is missing${serving}` : `snapshot candidate refused${serving}`,
      reason: c.reason,
    });
  }

  /** Whether the file at the path is the one being served (false while a candidate is checked or refused). */
  get upToDate(): boolean {
    return this.current !== null && this.candidate === null && identity(this.path) === this.currentId;
  }

  close() {
    clearInterval(this.timer);
    this.watcher?.close();
    this.watcher = null;
    this.current?.db.close();
    this.current = null;
  }
}
