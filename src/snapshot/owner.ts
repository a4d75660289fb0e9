// The one owner of a service's snapshot: watches SNAPSHOT_PATH, checks each candidate once, and has every serving
// process (its members) prepare it and then switch to it at one instant, or drop it.
import { type FSWatcher, watch } from 'node:fs';
import { checkedCandidate } from './candidate.ts';
import { SnapshotError } from './file.ts';
import { commitAll, dropAll, Laggards, type Member, type MemberBehind, prepareAll, SWITCH_LEAD_MS } from './members.ts';
import { headerOf, identity, type ServedFile, sameFile, sizeOf, unlinkServed } from './served-file.ts';
import { servedLine, switchingLine } from './switching.ts';

/** What became of the last replacement file that was looked at (for /readyz and the logs). */
export interface CandidateState {
  state: 'checking' | 'refused' | 'missing';
  reason?: string;
  at: string;
}

/** What every member mirrors for /readyz and /metrics. */
export interface OwnerState {
  /** The last file at the path that is not served (being checked, refused or missing), or null. */
  candidate: CandidateState | null;
  /** Why the served file no longer holds the snapshot opened (written in place), or null. */
  damaged: string | null;
  /** Members not yet serving the snapshot every member was told to switch to (asked again, or being replaced). */
  behind: MemberBehind[];
}

type Log = (line: Record<string, unknown>) => void;

export interface OwnerOptions {
  checkIntervalMs?: number;
  log?: Log;
  now?: () => number;
  nativeBinding?: string;
  /** The members serving now (a starting one is not: it starts on the file served when it was started). */
  members(): Member[];
  /** Resolves once no member is starting; a prepare waits for it. */
  settled?(): Promise<void>;
  /** The state changed; `refused` when a candidate was just refused. */
  changed?(state: OwnerState, refused: boolean): void;
  /** Said once per member switch round (for the single process: nothing). */
  cluster?: boolean;
}

const LOOK_AGAIN = '(look again)';

export class SnapshotOwner {
  private served: ServedFile;
  private servedId: string | null;
  private servedHeader: Buffer | null;
  private snapshotId: string | null;
  private seenId: string | null;
  private gen = 0;
  private lastCheck = 0;
  private checking: Promise<boolean> | null = null;
  private swapping: Promise<void> | null = null;
  candidate: CandidateState | null = null;
  damaged: string | null = null;
  private readonly timer: NodeJS.Timeout;
  private watcher: FSWatcher | null = null;
  private closed = false;
  private readonly laggards: Laggards;

  constructor(
    readonly path: string,
    first: ServedFile,
    snapshotId: string | null,
    private readonly opts: OwnerOptions,
  ) {
    this.served = first;
    this.servedId = identity(first.file);
    this.servedHeader = headerOf(first.file);
    this.snapshotId = snapshotId;
    this.seenId = this.servedId;
    this.laggards = new Laggards(opts.log, () => opts.changed?.(this.state, false));
    if (!first.linked && first.inode !== '') this.degraded(first);
    this.watchPath();
    this.lastCheck = this.now();
    this.timer = setInterval(() => void this.refresh(), opts.checkIntervalMs ?? 1000).unref();
  }

  /** The snapshot id served (a cluster learns it from its first worker). */
  started(snapshotId: string): void {
    this.snapshotId ??= snapshotId;
  }

  /** What a member starting now opens: the file served. */
  get file(): ServedFile {
    return this.served;
  }

  get state(): OwnerState {
    return { candidate: this.candidate, damaged: this.damaged, behind: this.laggards.list };
  }

  /** Resolves once no switch is under way (a worker is started after it, on the file it switched to). */
  idle(): Promise<void> {
    return this.swapping ?? Promise.resolve();
  }
  get busy(): boolean {
    return this.swapping !== null;
  }

  private now() {
    return (this.opts.now ?? Date.now)();
  }

  private degraded(s: ServedFile & { why?: string }) {
    this.opts.log?.({
      level: 'warn',
      msg: 'cannot keep a link to the served snapshot beside SNAPSHOT_PATH: a process started later opens the path and refuses any other file there',
      reason: s.why,
    });
  }

  /** Watches the file at the path now: a write in place or a rename over it is looked at within an event-loop turn. */
  private watchPath(): void {
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

  /** A data request when the interval is late (a busy event loop): look now. */
  poke(): void {
    if (this.now() - this.lastCheck >= (this.opts.checkIntervalMs ?? 1000)) void this.refresh();
  }

  /** Looks at the path now. Resolves true once a new snapshot is served by every member. */
  refresh(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
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

  /** refresh() for SIGHUP: also looks again at a file refused or missing, and says when there is nothing new. */
  async lookNow(): Promise<boolean> {
    if (this.checking === null && this.candidate !== null) this.seenId = LOOK_AGAIN;
    const swapped = await this.refresh();
    if (!swapped && this.upToDate)
      this.opts.log?.({
        level: 'info',
        msg: 'SIGHUP: the snapshot file is the one being served; nothing to swap',
        snapshot_id: this.snapshotId,
      });
    return swapped;
  }

  /** Whether the file at the path is the one being served. */
  get upToDate(): boolean {
    return this.candidate === null && this.damaged === null && identity(this.path) === this.servedId;
  }

  private markIfWrittenInPlace(id: string | null): void {
    if (this.damaged !== null || id === null || id === this.servedId) return;
    if (!sameFile(id, this.servedId) || this.isServedBuild(id)) return;
    this.setDamaged('is being changed in place');
  }

  private setDamaged(what: string): void {
    this.damaged = `the served snapshot file ${this.path} ${what}; data requests get 503 until a valid snapshot is at the path (rename one into place)`;
    this.opts.log?.({ level: 'error', msg: 'snapshot file changed in place; data requests get 503', reason: what });
    this.opts.changed?.(this.state, false);
  }

  /** The served inode, unchanged but for its time (a touch): same size and SQLite header, not damaged. */
  private isServedBuild(id: string): boolean {
    if (this.damaged !== null || !sameFile(id, this.servedId)) return false;
    if (sizeOf(id) !== sizeOf(this.servedId!)) return false;
    const header = headerOf(this.path);
    return header !== null && this.servedHeader !== null && header.equals(this.servedHeader);
  }

  private async verifyAndSwap(id: string): Promise<boolean> {
    let cand: (ServedFile & { why?: string }) | null = null;
    try {
      cand = await checkedCandidate(this.path, id, this.opts.nativeBinding, (c) => this.degraded(c));
      if (this.isServedBuild(id)) {
        unlinkServed(cand);
        this.servedId = id;
        this.candidate = null;
        this.opts.changed?.(this.state, false);
        this.opts.log?.({
          level: 'info',
          msg: 'snapshot file checked: it holds the snapshot being served (only its time changed); nothing to swap',
          snapshot_id: this.snapshotId,
        });
        return false;
      }
      const swapped = await this.switchTo(cand, id);
      cand = null;
      return swapped;
    } catch (e) {
      unlinkServed(cand);
      if (this.closed) return false;
      const reason = (e as Error).message;
      // A file that changed again while it was checked is looked at again as it is now, not judged: a touch
      // repeated (its content the served one's), or a copy still being written, whose size or header
      // markIfWrittenInPlace judges at the next look.
      const movedOn = identity(this.path) !== id;
      if (this.damaged === null && sameFile(id, this.servedId) && !movedOn)
        this.setDamaged(`was changed in place and is not a valid snapshot (${reason})`);
      this.note({ state: 'refused', reason });
      if (movedOn) this.seenId = null; // replaced again meanwhile: look at the newer file
      return false;
    }
  }

  /** Every member prepares the candidate; all did, each switches at one instant; one failed, all drop it. */
  private async switchTo(cand: ServedFile, id: string): Promise<boolean> {
    await this.opts.settled?.();
    let done!: () => void;
    this.swapping = new Promise((r) => (done = r));
    try {
      const members = this.opts.members();
      if (members.length === 0) {
        this.seenId = null; // nobody to prepare it: look again at the next interval
        unlinkServed(cand);
        return false;
      }
      const gen = ++this.gen;
      // A member silent on it is replaced (its successor starts once this is over, on the file served then): the
      // others go on, and it is behind from the instant until it is gone.
      const { ids, prepared, replaced, refusal } = await prepareAll(members, gen, cand, this.opts.log);
      const changed = identity(cand.file) !== id;
      if (refusal !== null || ids.length === 0 || changed || this.closed) {
        dropAll(members, gen);
        if (this.closed) throw new SnapshotError('closed');
        if (changed) throw new SnapshotError(`${this.path} changed while it was checked`);
        if (refusal !== null) throw new SnapshotError(refusal);
        this.seenId = null; // every member left meanwhile: look again at the next interval
        unlinkServed(cand);
        return false;
      }
      const at = Date.now() + (prepared.length > 1 ? SWITCH_LEAD_MS : 0);
      const previous = this.snapshotId;
      if (this.opts.cluster) this.opts.log?.(switchingLine(ids[0], previous, at, ids.length));
      for (const [m, exited] of replaced) this.laggards.replaced(m, previous, at, exited);
      const late = await commitAll(prepared, gen, at, this.laggards.of(ids[0], previous, at));
      const old = this.served;
      this.served = cand;
      this.servedId = id;
      this.servedHeader = headerOf(cand.file);
      this.snapshotId = ids[0];
      unlinkServed(old); // every member has switched (or is gone): a worker started from now on opens `cand`
      this.candidate = null;
      this.damaged = null;
      this.watchPath();
      this.opts.changed?.(this.state, false);
      if (this.opts.cluster) this.opts.log?.(servedLine(ids[0], late));
      return true;
    } finally {
      this.swapping = null;
      done();
    }
  }

  private note(c: Omit<CandidateState, 'at'>): void {
    this.candidate = { ...c, at: new Date(this.now()).toISOString() };
    if (c.state === 'checking') return;
    const serving =
      this.damaged !== null
        ? '; data requests get 503 (the served file was changed in place)'
        : `; still serving ${this.snapshotId}`;
    this.opts.log?.({
      level: 'warn',
      msg: c.state === 'missing' ? `snapshot file is missing${serving}` : `snapshot candidate refused${serving}`,
      reason: c.reason,
    });
    this.opts.changed?.(this.state, c.state === 'refused');
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.watcher?.close();
    this.watcher = null;
    unlinkServed(this.served);
  }
}
