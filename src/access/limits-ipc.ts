// Exact limits across a cluster's workers: the primary holds the counters (the fixed windows of rate-limit.ts)
// and workers ask it over IPC, the requests of one event-loop turn batched into one message each way.
import { LimiterUnavailable } from '../errors.ts';
import {
  type Allowance,
  addressBucket,
  FixedWindows,
  limitAnswers,
  type OverLimit,
  type SharedLimits,
} from './rate-limit.ts';

/** [request id, 'k', key id]: count a request of the key; [request id, 'f', address]: a failed authentication. */
export type LimitOp = [id: number, op: 'k' | 'f', subject: string];
/** 'k': [id, hits so far, ms until the window ends]; 'f': [id, 1 when refused (not recorded) else 0, ms left]. */
export type LimitAnswer = [id: number, a: number, msLeft: number];

export interface LimitSettings {
  perKey: number;
  authFailures: number;
  windowSeconds: number;
}

/** How long a worker waits for the primary's answer before the request gets a 503. */
const ANSWER_TIMEOUT_MS = 1000;

const unavailable = () => new LimiterUnavailable('the primary did not answer in time');

/** The primary's side: answers a batch of operations with the same decisions createLimits makes. */
export function limitCounters(s: LimitSettings, now: () => number = Date.now) {
  const perKey = new FixedWindows(s.windowSeconds * 1000, now);
  const failures = new FixedWindows(s.windowSeconds * 1000, now);
  return (ops: LimitOp[]): LimitAnswer[] =>
    ops.map(([id, op, subject]) => {
      if (op === 'k') {
        const { hits, msLeft } = perKey.hit(subject, 1);
        return [id, hits, msLeft];
      }
      const bucket = addressBucket(subject);
      const seen = failures.hit(bucket, 0);
      if (seen.hits >= s.authFailures) return [id, 1, seen.msLeft];
      return [id, 0, failures.hit(bucket, 1).msLeft];
    });
}

interface Pending {
  resolve(a: LimitAnswer): void;
  reject(e: unknown): void;
  at: number;
}

/**
 * A worker's side: SharedLimits whose answers come from the primary. Operations queued in one event-loop
 * turn leave as one message (setImmediate), so under load a message carries several requests. An answer
 * that does not come within ANSWER_TIMEOUT_MS (the primary is gone or stuck) is a 503, never a wait.
 */
export function limitsOverIpc(s: LimitSettings, send: (ops: LimitOp[]) => boolean) {
  const answers = limitAnswers(s.perKey, s.windowSeconds);
  const pending = new Map<number, Pending>();
  let queue: LimitOp[] = [];
  let nextId = 1;
  const flush = () => {
    const ops = queue;
    queue = [];
    let sent = false;
    try {
      sent = send(ops);
    } catch {
      /* the channel is closed: fail the batch below */
    }
    if (!sent) for (const [id] of ops) settle(id, null);
  };
  const settle = (id: number, a: LimitAnswer | null) => {
    const p = pending.get(id);
    if (p === undefined) return;
    pending.delete(id);
    if (a === null) p.reject(unavailable());
    else p.resolve(a);
  };
  const sweeper = setInterval(() => {
    const old = performance.now() - ANSWER_TIMEOUT_MS;
    for (const [id, p] of pending) if (p.at < old) settle(id, null);
  }, ANSWER_TIMEOUT_MS / 4);
  sweeper.unref();
  const ask = (op: 'k' | 'f', subject: string) =>
    new Promise<LimitAnswer>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject, at: performance.now() });
      if (queue.length === 0) setImmediate(flush);
      queue.push([id, op, subject]);
    });
  const limits: SharedLimits = {
    consumeKey: (keyId): Promise<Allowance | OverLimit> =>
      ask('k', keyId).then(([, hits, ms]) => answers.key(hits, ms)),
    failure: (address): Promise<OverLimit | null> =>
      ask('f', address).then(([, refused, ms]) => (refused === 1 ? answers.address(ms) : null)),
  };
  return {
    limits,
    /** The primary's answers to earlier operations. */
    answer(batch: LimitAnswer[]) {
      for (const a of batch) settle(a[0], a);
    },
    close() {
      clearInterval(sweeper);
      for (const id of [...pending.keys()]) settle(id, null);
    },
  };
}
