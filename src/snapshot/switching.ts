// A member's switch to a prepared snapshot at an instant: the staged snapshot, the timer that switches when no request
// looks first, and the confirmation the owner waits for (given again when the owner asks again); and the cluster
// primary's log lines of a switch.

/** What is staged: an open snapshot, closed when dropped. */
interface Closable {
  db: { close(): void };
}

export class PendingSwitch<S extends Closable> {
  private staged: { gen: number; snap: S } | null = null;
  /** The instant (Date.now() ms) the staged snapshot is served from, once committed. */
  private at: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private confirmed: Promise<number | null> | null = null;
  private confirm: ((lateMs: number | null) => void) | null = null;
  /** The generation switched to last, and how late: the answer to the same word given again. */
  private last: { gen: number; lateMs: number } | null = null;

  constructor(private readonly switchTo: (snap: S, lateMs: number) => void) {}

  get snap(): S | null {
    return this.staged?.snap ?? null;
  }

  /** The generation staged, or null. */
  get gen(): number | null {
    return this.staged?.gen ?? null;
  }

  /** Stages `snap` under `gen`; call dropAny() before opening it, so two candidates are never open at once. */
  stage(gen: number, snap: S): void {
    this.dropAny();
    this.staged = { gen, snap };
  }

  /**
   * Serves the staged snapshot from `at` on: a request that begins at or after it gets the new one (every member is
   * given the same instant), and a timer switches at the instant when no request comes. Resolves how late the switch
   * was (0 unless the word came after `at`); the same answer for the same word given again, before or after the
   * switch; null when there is nothing staged under `gen` (or it is dropped first).
   */
  commit(gen: number, at: number): Promise<number | null> {
    if (this.last?.gen === gen) return Promise.resolve(this.last.lateMs);
    if (this.staged?.gen !== gen) return Promise.resolve(null);
    if (this.confirmed !== null) {
      this.due();
      return this.confirmed;
    }
    const wait = at - Date.now();
    if (wait <= 0) return Promise.resolve(this.fire(-wait));
    this.at = at;
    this.confirmed = new Promise((resolve) => {
      this.confirm = resolve;
    });
    this.arm();
    return this.confirmed;
  }

  /** Switches when the instant has come (a request begins, the timer fires). */
  due(): void {
    if (this.at !== null && Date.now() >= this.at) this.fire(0);
  }

  /**
   * A timer counts on the monotonic clock in whole milliseconds, the instant is wall-clock time: about one timer in
   * a hundred fires up to 1 ms before Date.now() reaches its target, and more when the wall clock is stepped back.
   * One that fires early is set again for what is left, so a member with no request still switches at the instant.
   */
  private arm(): void {
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.due();
        if (this.at !== null) this.arm();
      },
      Math.max(1, (this.at ?? 0) - Date.now()),
    );
  }

  private fire(lateMs: number): number {
    const { gen, snap } = this.staged!;
    const confirm = this.confirm;
    this.staged = null;
    this.settle();
    this.last = { gen, lateMs };
    this.switchTo(snap, lateMs);
    confirm?.(lateMs);
    return lateMs;
  }

  private settle(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.at = null;
    this.confirmed = null;
    this.confirm = null;
  }

  /** Closes the staged snapshot of generation `gen` (another member could not prepare it). */
  drop(gen: number): void {
    if (this.staged === null || this.staged.gen !== gen) return;
    this.dropAny();
  }

  dropAny(): void {
    if (this.staged === null) return;
    const confirm = this.confirm;
    this.staged.snap.db.close();
    this.staged = null;
    this.settle();
    confirm?.(null);
  }
}

/** The primary's log line once the workers that prepared `snapshotId` are given the instant `at` to switch at. */
export const switchingLine = (snapshotId: string, previous: string | null, at: number, workers: number) => ({
  level: 'info',
  msg: 'snapshot candidate prepared by every worker; switching',
  snapshot_id: snapshotId,
  previous_snapshot_id: previous,
  switch_at: new Date(at).toISOString(),
  workers,
});

/** The primary's log line once each worker has confirmed the switch (how late each was), or is gone (null). */
export function servedLine(snapshotId: string, late: (number | null)[]) {
  const lates = late.filter((l): l is number => l !== null);
  return {
    level: 'info',
    msg: 'snapshot served by every worker',
    snapshot_id: snapshotId,
    workers: lates.length,
    // 0 when every worker switched at the instant; else the latest one's delay (the skew between them)
    skew_ms: Math.max(0, ...lates),
  };
}
