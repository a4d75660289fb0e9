// A cluster's snapshot over IPC: each worker as a member of the primary's SnapshotOwner (primary side), and the
// worker's answers to the owner's prepare / switch / drop / state messages (worker side).
import type { Worker } from 'node:cluster';
import type { Member } from '../snapshot/members.ts';
import type { SnapshotSource } from '../snapshot/source.ts';
import type { ToPrimary, ToWorker } from './protocol.ts';

type Answer = Extract<ToPrimary, { nlr: 'snapshot-prepared' | 'snapshot-serving' }>;

/**
 * The owner's view of one worker (named by its slot); `answer` takes its replies, `gone` settles what it will never
 * answer, `replace` takes it out of service when it did not confirm a switch.
 */
export function workerMember(
  w: Worker,
  name: string,
  gone: () => Error,
  replace: (why: string) => Promise<void>,
): Member & { answer(m: Answer): void; gone(): void } {
  const prepares = new Map<number, Deferred<string>>();
  const commits = new Map<number, Deferred<number | null>>();
  const send = (m: ToWorker) => {
    try {
      w.send(m);
    } catch {
      /* its channel just closed: the exit settles what it owes */
    }
  };
  return {
    // Asked again (no answer in time), the same word is sent again and the first answer settles both.
    prepare: (gen, served) => {
      let p = prepares.get(gen);
      if (p === undefined) {
        p = deferred<string>();
        prepares.set(gen, p);
      }
      send({ nlr: 'snapshot-prepare', gen, served });
      return p.promise;
    },
    name,
    // Asked again (no confirmation in time), the same word is sent again and the first answer settles both.
    commit: (gen, at) => {
      let c = commits.get(gen);
      if (c === undefined) {
        c = deferred<number | null>();
        commits.set(gen, c);
      }
      send({ nlr: 'snapshot-switch', gen, at });
      return c.promise;
    },
    replace,
    drop: (gen) => send({ nlr: 'snapshot-drop', gen }),
    answer(m) {
      if (m.nlr === 'snapshot-prepared') {
        const p = prepares.get(m.gen);
        prepares.delete(m.gen);
        if (m.error !== undefined) p?.reject(new Error(m.error));
        else p?.resolve(m.snapshotId!);
      } else {
        commits.get(m.gen)?.resolve(m.lateMs);
        commits.delete(m.gen);
      }
    },
    gone() {
      for (const p of prepares.values()) p.reject(gone());
      for (const c of commits.values()) c.resolve(null);
      prepares.clear();
      commits.clear();
    },
  };
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: Error): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A worker's answer to the owner's snapshot messages; false for a message that is not one of them. */
export function followOwner(m: ToWorker, snapshots: SnapshotSource | undefined, send: (m: ToPrimary) => void): boolean {
  switch (m.nlr) {
    case 'snapshot-prepare':
      try {
        if (!snapshots) throw new Error('the worker is not serving yet');
        send({ nlr: 'snapshot-prepared', gen: m.gen, snapshotId: snapshots.stage(m.gen, m.served) });
      } catch (e) {
        send({ nlr: 'snapshot-prepared', gen: m.gen, error: (e as Error).message });
      }
      return true;
    case 'snapshot-switch':
      void snapshots?.commit(m.gen, m.at).then((lateMs) => {
        const id = snapshots.peek()?.meta.snapshot_id;
        if (lateMs !== null && id !== undefined) send({ nlr: 'snapshot-serving', gen: m.gen, snapshotId: id, lateMs });
      });
      return true;
    case 'snapshot-drop':
      snapshots?.drop(m.gen);
      return true;
    case 'snapshot-state':
      snapshots?.setState(m.state, m.refused);
      return true;
    case 'follow-state':
      if (snapshots) snapshots.follow = m.state;
      return true;
    default:
      return false;
  }
}
