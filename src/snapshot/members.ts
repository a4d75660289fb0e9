// The processes that serve a snapshot, as its owner sees them: each prepares a candidate, then all switch to it at
// one instant (or all drop it).
import type { ServedFile } from './served-file.ts';

/** A process that serves the snapshot: a cluster worker, or the single process itself. */
export interface Member {
  /** Opens the file and prepares every route's statements; resolves the snapshot id read, or rejects with why not. */
  prepare(gen: number, served: ServedFile): Promise<string>;
  /** Serve the prepared snapshot from `at` (Date.now() ms) on; resolves how late (ms) it switched, or null if gone. */
  commit(gen: number, at: number): Promise<number | null>;
  drop(gen: number): void;
}

/** Rejects a member's prepare when it exits meanwhile: it is left out, not a refusal. */
export class MemberGone extends Error {}

/**
 * With several members, the switch instant is this long after the last one prepared: each gets the word before it,
 * then each answers a request it begins at or after that instant from the new snapshot, so no two answer under two
 * ids at once. A member told later than that (a stalled process) switches on receipt and says how late it was.
 */
export const SWITCH_LEAD_MS = 200;
/** A member that has not prepared a candidate by then refuses it; one that has not switched by then is left out. */
const TIMEOUT_MS = 30_000;

function within<T>(p: Promise<T>, late: () => T | Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => Promise.resolve().then(late).then(resolve, reject), TIMEOUT_MS);
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
    members.map((m) =>
      within(m.prepare(gen, served), () => {
        throw new Error(`a worker did not prepare the snapshot within ${TIMEOUT_MS / 1000} s`);
      }),
    ),
  );
  const failed = answers.find(
    (a): a is PromiseRejectedResult => a.status === 'rejected' && !(a.reason instanceof MemberGone),
  );
  const ids = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  if (failed || ids.length === 0) for (const m of members) m.drop(gen);
  return { ids, refusal: failed ? (failed.reason as Error).message : null };
}

/** Every member switches at `at`; resolves once each has (how late each was; null for one gone or not answering). */
export function commitAll(members: Member[], gen: number, at: number): Promise<(number | null)[]> {
  return Promise.all(members.map((m) => within(m.commit(gen, at), () => null)));
}

export function dropAll(members: Member[], gen: number): void {
  for (const m of members) m.drop(gen);
}
