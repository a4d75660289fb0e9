// The processes that serve a snapshot, as its owner sees them: each prepares a candidate, then all switch to it at
// one instant (or all drop it).
import type { ServedFile } from './served-file.ts';

/** A process that serves the snapshot: a cluster worker, or the single process itself. */
export interface Member {
  /** How logs and /readyz name it (a worker's slot); none for the single process. */
  readonly name?: string;
  /**
   * Opens the file and prepares every route's statements; resolves the snapshot id read, or rejects with why not.
   * Called again for the same `gen` (asked again), it asks again and answers with the same promise.
   */
  prepare(gen: number, served: ServedFile): Promise<string>;
  /**
   * Serve the prepared snapshot from `at` (Date.now() ms) on; resolves how late (ms) it switched, or null if gone.
   * Called again for the same `gen` (asked again), it gives the word again and answers with the same promise.
   */
  commit(gen: number, at: number): Promise<number | null>;
  drop(gen: number): void;
  /**
   * Takes a member that never prepared a candidate or never confirmed a switch out of service (another takes its
   * place, on the snapshot served once no switch is under way); resolves once it is gone.
   */
  replace?(why: string): Promise<void>;
}

/** Rejects a member's prepare when it exits meanwhile, or is replaced (`exited`): it is left out, not a refusal. */
export class MemberGone extends Error {
  constructor(
    message: string,
    readonly exited?: Promise<void>,
  ) {
    super(message);
  }
}

/**
 * With several members, the switch instant is this long after the last one prepared: each gets the word before it,
 * then each answers a request it begins at or after that instant from the new snapshot, so no two answer under two
 * ids at once. A member told later than that (a stalled process) switches on receipt and says how late it was.
 */
export const SWITCH_LEAD_MS = 200;
/** A member that has not confirmed the switch this long after the instant is asked again; after as long again, replaced. */
export const CONFIRM_MS = 1000;
/**
 * A member that has neither prepared nor refused a candidate this long after the word is asked again; after as long
 * again, it is replaced and the others go on. Preparing is opening the file and preparing every statement (the
 * owner checked the file before), with the listing scan's and the near filter's columns and cells built in it:
 * about half a second for the snapshot of 1M listings, several times that under heavy load (npm run bench:prepare;
 * the figures are in docs/performance.md): this bound is ten times the quiet figure, and twice as long again is past
 * the slowest prepare seen, yet far inside the 30 s a silent member once held a swap for.
 */
export const PREPARE_MS = 5000;

const TIMED_OUT = Symbol('timed out');
function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
    p.then(resolve, reject).finally(() => clearTimeout(t));
  });
}

type Log = (line: Record<string, unknown>) => void;

/**
 * Every member prepares generation `gen`: the snapshot ids they read and the members that read them, or the first
 * refusal (then every member has dropped it). A member that left meanwhile, or was silent and is being replaced, is
 * not counted either way: the candidate goes on with the others. Never waits longer than 2 × PREPARE_MS.
 */
export async function prepareAll(
  members: Member[],
  gen: number,
  served: ServedFile,
  log: Log | undefined,
): Promise<{ ids: string[]; prepared: Member[]; replaced: Map<Member, Promise<void>>; refusal: string | null }> {
  const answers = await Promise.allSettled(members.map((m) => prepareOne(m, gen, served, log)));
  const failed = answers.find(
    (a): a is PromiseRejectedResult => a.status === 'rejected' && !(a.reason instanceof MemberGone),
  );
  const ids = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  const prepared = members.filter((_, i) => answers[i].status === 'fulfilled');
  const replaced = new Map<Member, Promise<void>>();
  answers.forEach((a, i) => {
    if (a.status === 'rejected' && a.reason instanceof MemberGone && a.reason.exited)
      replaced.set(members[i], a.reason.exited);
  });
  if (failed || ids.length === 0) for (const m of members) m.drop(gen);
  return { ids, prepared, replaced, refusal: failed ? (failed.reason as Error).message : null };
}

/** One member's prepare: asked again after PREPARE_MS without an answer, replaced after as long again. */
async function prepareOne(m: Member, gen: number, served: ServedFile, log: Log | undefined): Promise<string> {
  const first = m.prepare(gen, served);
  const id = await within(first, PREPARE_MS);
  if (id !== TIMED_OUT) return id;
  log?.({ level: 'warn', msg: 'a worker has not prepared the snapshot candidate; asking again', worker: m.name });
  const again = await within(Promise.race([first, m.prepare(gen, served)]), PREPARE_MS);
  if (again !== TIMED_OUT) return again;
  const why = `it did not prepare the snapshot within ${(2 * PREPARE_MS) / 1000} s`;
  if (!m.replace) throw new Error(`a worker did not prepare the snapshot: ${why}`);
  const msg = 'a worker did not prepare the snapshot candidate; replacing it, the others go on';
  log?.({ level: 'error', msg, reason: why, worker: m.name });
  throw new MemberGone(why, m.replace(why));
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
    private readonly log: Log | undefined,
    private readonly changed: () => void,
  ) {}

  get list(): MemberBehind[] {
    return [...this.behind.values()];
  }

  /** A member replaced while the others prepared the snapshot they switch to at `at`: behind until it is gone. */
  replaced(m: Member, previous: string | null, at: number, exited: Promise<void>): void {
    this.behind.set(m, { worker: m.name ?? '', snapshot_id: previous, since: new Date(at).toISOString() });
    this.changed();
    void exited.finally(() => {
      if (this.behind.delete(m)) this.changed();
    });
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
