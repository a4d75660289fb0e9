// The processes that serve a snapshot, as its owner sees them: each prepares a candidate, then all switch to it at
// one instant (or all drop it).
import type { ServedFile } from './served-file.ts';

/** A process that serves the snapshot: a cluster worker, or the single process itself. */
export interface Member {
  /** How logs and /readyz name it (a worker's slot); none for the single process. */
  readonly name?: string;
  /** Opens the file and prepares every route's statements; resolves the snapshot id read, or rejects with why not. */
  prepare(gen: number, served: ServedFile): Promise<string>;
  /**
   * Serve the prepared snapshot from `at` (Date.now() ms) on; resolves how late (ms) it switched, or null if gone.
   * Called again for the same `gen` (asked again), it gives the word again and answers with the same promise.
   */
  commit(gen: number, at: number): Promise<number | null>;
  drop(gen: number): void;
  /** Takes a member that never confirmed a switch out of service (another takes its place); resolves once it is gone. */
  replace?(why: string): Promise<void>;
}

/** Rejects a member's prepare when it exits meanwhile: it is left out, not a refusal. */
export class MemberGone extends Error {}

/**
 * With several members, the switch instant is this long after the last one prepared: each gets the word before it,
 * then each answers a request it begins at or after that instant from the new snapshot, so no two answer under two
 * ids at once. A member told later than that (a stalled process) switches on receipt and says how late it was.
 */
export const SWITCH_LEAD_MS = 200;
/** A member that has not confirmed the switch this long after the instant is asked again; after as long again, replaced. */
export const CONFIRM_MS = 1000;
/** A member that has not prepared a candidate by then refuses it (a large file opens and prepares in seconds). */
const PREPARE_TIMEOUT_MS = 30_000;

const TIMED_OUT = Symbol('timed out');
function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
    p.then(resolve, reject).finally(() => clearTimeout(t));
  });
}

/**
 * Every member prepares generation `gen`: the snapshot ids they read, or the first refusal (then every member has
 * dropped it). A member that left meanwhile is not counted either way.
 */
export async function prepareAll(
  members: Member[],
  gen: number,
  served: ServedFile,
): Promise<{ ids: string[]; refusal: string | null }> {
  const answers = await Promise.allSettled(
    members.map(async (m) => {
      const id = await within(m.prepare(gen, served), PREPARE_TIMEOUT_MS);
      if (id === TIMED_OUT)
        throw new Error(`a worker did not prepare the snapshot within ${PREPARE_TIMEOUT_MS / 1000} s`);
      return id;
    }),
  );
  const failed = answers.find(
    (a): a is PromiseRejectedResult => a.status === 'rejected' && !(a.reason instanceof MemberGone),
  );
  const ids = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  if (failed || ids.length === 0) for (const m of members) m.drop(gen);
  return { ids, refusal: failed ? (failed.reason as Error).message : null };
}

/** What commitAll tells its caller of a member that has not confirmed in time. */
export interface Stragglers {
  /** Not confirmed CONFIRM_MS after the instant: asked again now. */
  behind(m: Member): void;
  /** Confirmed after being asked again. */
  caughtUp(m: Member): void;
  /** Gone (exited) after being asked again. */
  left(m: Member): void;
  /** Still not confirmed CONFIRM_MS later: to be replaced (commitAll counts it as gone). */
  silent(m: Member): void;
}

/**
 * Every member switches at `at`; resolves once each has confirmed (how late each was), or is gone or silent (null).
 * Never waits longer than 2 × CONFIRM_MS after the instant.
 */
export function commitAll(members: Member[], gen: number, at: number, s: Stragglers): Promise<(number | null)[]> {
  return Promise.all(
    members.map(async (m) => {
      const first = m.commit(gen, at);
      const answer = await within(first, at - Date.now() + CONFIRM_MS);
      if (answer !== TIMED_OUT) return answer;
      s.behind(m);
      const again = await within(Promise.race([first, m.commit(gen, at)]), CONFIRM_MS);
      if (again === TIMED_OUT) {
        s.silent(m);
        return null;
      }
      if (again === null) s.left(m);
      else s.caughtUp(m);
      return again;
    }),
  );
}

/** A member still serving another snapshot than the one every member was told to switch to (for /readyz). */
export interface MemberBehind {
  worker: string;
  /** The snapshot it still serves. */
  snapshot_id: string | null;
  /** The instant it was to switch at. */
  since: string;
}

/**
 * The members that have not confirmed a switch by CONFIRM_MS after its instant, until they confirm or (replaced) are
 * gone; `changed` is called each time the list changes.
 */
export class Laggards {
  private readonly behind = new Map<Member, MemberBehind>();
  constructor(
    private readonly log: ((line: Record<string, unknown>) => void) | undefined,
    private readonly changed: () => void,
  ) {}

  get list(): MemberBehind[] {
    return [...this.behind.values()];
  }

  /** What commitAll says of the members of one switch (to `snapshotId`, from `previous`, at `at`). */
  of(snapshotId: string, previous: string | null, at: number): Stragglers {
    const since = new Date(at).toISOString();
    const line = (m: Member) => ({ worker: m.name, snapshot_id: snapshotId, switch_at: since });
    const gone = (m: Member) => {
      if (this.behind.delete(m)) this.changed();
    };
    return {
      behind: (m) => {
        this.log?.({ level: 'warn', msg: 'a worker has not confirmed the switch; asking again', ...line(m) });
        this.behind.set(m, { worker: m.name ?? '', snapshot_id: previous, since });
        this.changed();
      },
      caughtUp: (m) => {
        this.log?.({ level: 'info', msg: 'the worker confirmed the switch when asked again', ...line(m) });
        gone(m);
      },
      left: gone,
      silent: (m) => {
        const why = `it did not confirm the switch to ${snapshotId} within ${(2 * CONFIRM_MS) / 1000} s of the instant`;
        this.log?.({ level: 'error', msg: 'a worker did not switch; replacing it', reason: why, ...line(m) });
        if (m.replace) void m.replace(why).finally(() => gone(m));
        else gone(m);
      },
    };
  }
}

export function dropAll(members: Member[], gen: number): void {
  for (const m of members) m.drop(gen);
}
