// The snapshot a process serves: the file its owner checked, opened read-only with every statement prepared, and
// switched to the next one when the owner says so.
import type Database from 'better-sqlite3';
import { commandLine } from '../../snapshot-format/commands.ts';
import { SCHEMA_VERSION } from '../../snapshot-format/schema.ts';
import { SnapshotUnavailable } from '../errors.ts';
import { openSnapshotFile, SnapshotError } from './file.ts';
import type { FollowState } from './follow.ts';
import { clearUnusable } from './follow-install.ts';
import type { Member } from './members.ts';
import { type CandidateState, type OwnerState, SnapshotOwner } from './owner.ts';
import { inodeOf, removeStaleLinks, type ServedFile, servedAtStart, unlinkServed } from './served-file.ts';
import { PendingSwitch } from './switching.ts';

export { SnapshotError } from './file.ts';
export type { CandidateState, OwnerState } from './owner.ts';
export type { ServedFile } from './served-file.ts';

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

export interface SnapshotEvents {
  swapped?: (meta: SnapshotMeta) => void;
  refused?: (reason: string) => void;
}

/**
 * Opens the served file (the owner's link, or the path: `path` is what messages call it) and prepares every
 * statement. Without a link, the file at the path must still be the inode the owner checked.
 */
function open(served: ServedFile, path: string, preparers: Set<Preparer<unknown>>, nativeBinding?: string): Snapshot {
  const notServed = () => {
    if (!served.linked && served.inode !== '' && inodeOf(served.file) !== served.inode)
      throw new SnapshotError(
        `${path} is not the snapshot being served (another file is at the path, and no link to the served one could be kept beside it)`,
      );
  };
  notServed();
  const { db, meta: m } = openSnapshotFile(served.file, {
    name: path,
    timeout: 100,
    nativeBinding,
    setup: (db) => {
      notServed();
      db.pragma('mmap_size = 0'); // an in-place overwrite must not become SIGBUS; snapshots are swapped by rename
      // The file never changes under an open connection (a new snapshot is a new file, renamed into place), so
      // the connection takes its shared lock once and keeps it: no lock/unlock, hot-journal check and header
      // read per statement (8 system calls), and the page cache stays valid between statements.
      db.pragma('locking_mode = EXCLUSIVE');
    },
  });
  try {
    if (m.schema_version !== SCHEMA_VERSION) {
      throw new SnapshotError(
        `${path} has schema version ${m.schema_version}; this server reads version ${SCHEMA_VERSION}. Rebuild it with ${commandLine('build-snapshot')}.`,
      );
    }
    const meta: SnapshotMeta = {
      snapshot_id: m.snapshot_id!,
      schema_version: SCHEMA_VERSION,
      built_at: m.built_at!,
      counts: m.counts ?? {},
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
 * The snapshot this process serves. With `served` (a cluster worker) it opens that file, the one its owner (the
 * primary) serves, and changes only when the owner says: stage() a candidate (open it, prepare every statement),
 * then commit() to switch at an instant, or drop() it; setState() mirrors the owner's word for /readyz and /metrics.
 * Without (a single process) it is its own owner's only member: it opens the file at the path (the first start, the
 * one time the path is read) and a SnapshotOwner watches the path and checks each replacement (see owner.ts).
 * `get()` answers 503 only when there is no valid snapshot: the served file was changed in place (`damaged`).
 */
export class SnapshotSource {
  private current: Snapshot | null = null;
  /** The candidate staged, and the switch to it once committed. */
  private readonly pending = new PendingSwitch<Snapshot>((next, lateMs) => this.switchNow(next, lateMs));
  private readonly preparers = new Set<Preparer<unknown>>();
  private readonly owner: SnapshotOwner | null = null;
  /** The owner's word: the last file at the path not served (checking, refused, missing), or null. */
  candidate: CandidateState | null = null;
  /**
   * Why the open snapshot is no longer served, or null: its own file (same device and inode) was changed in place, so
   * the pages the open connection reads are no longer the snapshot it opened. Data requests get 503 and /readyz says
   * so until a valid snapshot is switched to.
   */
  damaged: string | null = null;
  /** The owner's word: workers not yet serving the snapshot every worker was told to switch to (a cluster). */
  behind: OwnerState['behind'] = [];
  /** Following a publication (SNAPSHOT_FOLLOW): its state, mirrored from the follower; null when not following. */
  follow: FollowState | null = null;

  constructor(
    readonly path: string,
    private readonly opts: {
      checkIntervalMs?: number;
      log?: (l: Record<string, unknown>) => void;
      now?: () => number;
      nativeBinding?: string;
      events?: SnapshotEvents;
      /** A cluster worker: the file its owner serves (never the path's current file). */
      served?: ServedFile;
      /** Following a publication: nothing at the path is no error; no snapshot is served until one is swapped in. */
      mayStartEmpty?: boolean;
    } = {},
  ) {
    const empty = (f: ServedFile) => opts.mayStartEmpty === true && f.inode === '' && inodeOf(f.file) === null;
    if (opts.served) {
      if (!empty(opts.served)) this.current = open(opts.served, path, this.preparers, opts.nativeBinding);
      return;
    }
    removeStaleLinks(path);
    if (opts.mayStartEmpty === true) clearUnusable(path, opts.log); // the follower replaces it
    const first = servedAtStart(path);
    try {
      // a bad file stops the start-up
      if (!empty(first)) this.current = open(first, path, this.preparers, opts.nativeBinding);
    } catch (e) {
      unlinkServed(first);
      throw e;
    }
    this.owner = new SnapshotOwner(path, first, this.current?.meta.snapshot_id ?? null, {
      checkIntervalMs: opts.checkIntervalMs,
      log: opts.log,
      now: opts.now,
      nativeBinding: opts.nativeBinding,
      members: () => [this.member],
      changed: (state, refused) => this.setState(state, refused),
    });
  }

  /** This process as its own owner's member. */
  private readonly member: Member = {
    prepare: async (gen, served) => this.stage(gen, served),
    commit: (gen, at) => this.commit(gen, at),
    drop: (gen) => this.drop(gen),
  };

  /** Registers a route's statements: prepared now on the open snapshot and on every future one. */
  prepare<T>(p: Preparer<T>): Preparer<T> {
    this.preparers.add(p as Preparer<unknown>);
    this.current?.use(p);
    this.pending.snap?.use(p);
    return p;
  }

  /** The snapshot being served, or null (after close()). */
  peek(): Snapshot | null {
    this.pending.due();
    return this.current;
  }

  get(): Snapshot {
    this.owner?.poke();
    this.pending.due();
    if (!this.current || this.damaged !== null) throw new SnapshotUnavailable(this.damaged ?? 'no snapshot was opened');
    return this.current;
  }

  /**
   * Opens a candidate the owner checked and prepares every statement, once per `gen`; its snapshot id. Throws
   * SnapshotError.
   */
  stage(gen: number, served: ServedFile): string {
    // Asked again (the owner had no answer in time): it is open already.
    if (this.pending.gen === gen) return this.pending.snap!.meta.snapshot_id;
    this.pending.dropAny();
    const snap = open(served, this.path, this.preparers, this.opts.nativeBinding);
    this.pending.stage(gen, snap);
    return snap.meta.snapshot_id;
  }

  /** Serves the staged snapshot from `at` on; resolves how late it switched, or null (see PendingSwitch.commit). */
  commit(gen: number, at: number): Promise<number | null> {
    return this.pending.commit(gen, at);
  }

  drop(gen: number): void {
    this.pending.drop(gen);
  }

  /** The owner's word on the path and the served file; `refused` when a candidate was just refused. */
  setState(state: OwnerState, refused = false): void {
    this.candidate = state.candidate;
    this.behind = state.behind ?? [];
    // Cleared by the switch itself, never before it: until then the damaged connection is what would answer.
    if (state.damaged !== null && this.damaged === null) {
      this.damaged = state.damaged;
    }
    if (refused) this.opts.events?.refused?.(state.candidate?.reason ?? '');
  }

  private switchNow(next: Snapshot, lateMs: number): void {
    const prev = this.current;
    this.current = next;
    this.damaged = null;
    prev?.db.close();
    this.opts.log?.({
      level: 'info',
      msg: 'snapshot swapped in',
      snapshot_id: next.meta.snapshot_id,
      previous_snapshot_id: prev?.meta.snapshot_id ?? null,
      ...(lateMs > 0 ? { late_ms: lateMs } : {}),
    });
    this.opts.events?.swapped?.(next.meta);
  }

  /** The owner looks at the path now (a single process; a worker's owner is the primary). Resolves true on a swap. */
  refresh(): Promise<boolean> {
    return this.owner?.refresh() ?? Promise.resolve(false);
  }

  /** refresh() for SIGHUP: also looks again at a file refused or missing (see SnapshotOwner.lookNow). */
  lookNow(): Promise<boolean> {
    return this.owner?.lookNow() ?? Promise.resolve(false);
  }

  /** The file the served snapshot is read from (a single process; null in a worker, or before the first). */
  get servedFile(): string | null {
    return this.current === null ? null : (this.owner?.file.file ?? null);
  }

  /** Whether the file at the path is the one being served (a single process; a worker cannot tell). */
  get upToDate(): boolean {
    return this.owner?.upToDate ?? false;
  }

  /** Whether the file at SNAPSHOT_PATH is not the one served because it was refused or is missing. */
  get pathRefused(): boolean {
    return this.candidate?.state === 'refused' || this.candidate?.state === 'missing';
  }

  close() {
    this.owner?.close();
    this.pending.dropAny();
    this.current?.db.close();
    this.current = null;
  }
}
