// The cluster's workers, one per slot: each forked on the snapshot served, another started when one dies (exponential
// backoff), one that did not follow a snapshot switch replaced, and on stop every worker drained.
import cluster, { type Worker } from 'node:cluster';
import type { limitCounters } from '../access/limits-ipc.ts';
import type { Config } from '../config.ts';
import type { Log } from '../log.ts';
import { type Member, MemberGone } from '../snapshot/members.ts';
import type { SnapshotOwner } from '../snapshot/owner.ts';
import type { ServedFile } from '../snapshot/served-file.ts';
import type { clusterMetrics } from './cluster-metrics.ts';
import type { followInPrimary } from './follow.ts';
import { isMessage, SERVED_ENV, SLOT_ENV, type ToPrimary, type ToWorker } from './protocol.ts';
import { workerMember } from './snapshot.ts';

/** Restart delays: 100 ms, doubled for each death within STABLE_MS of its start, at most 30 s. */
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 30_000;
/** A worker that lived this long is healthy: the next death starts the backoff over. */
const STABLE_MS = 30_000;
/** After DRAIN_TIMEOUT_MS plus this, a worker still running (stopping, or replaced) is killed. */
export const STOP_GRACE_MS = 5_000;

export interface PrimaryIo {
  log: Log;
  /** Every worker listens: the "listening" line, then the development key (once, here, not per worker). */
  /** snapshotId null: following a publication, none served yet. */
  listening(info: { url: string; metricsUrl?: string; snapshotId: string | null }): void;
  /** A start-up failure: one line on stderr and exit 1, as a single process does. */
  fail(message: string): never;
}

interface Slot {
  worker: Worker | null;
  member: ReturnType<typeof workerMember> | null;
  ready: boolean;
  startedAt: number;
  quickDeaths: number;
  restart: NodeJS.Timeout | null;
}

export interface WorkersOptions {
  config: Config;
  io: PrimaryIo;
  /** Set in every worker's environment (the cursor secret drawn once). */
  env: Record<string, string>;
  counters: ReturnType<typeof limitCounters> | null;
  metrics: ReturnType<typeof clusterMetrics>;
  /** The file served at the first start (before the owner is loaded). */
  first: ServedFile;
  metricsUrl?: string;
  /** Every worker has exited after a stop, with this status. */
  stopped(code: number): void;
}

export class Workers {
  private readonly slots: Slot[];
  owner: SnapshotOwner | null = null;
  /** Following a publication (SNAPSHOT_FOLLOW): the primary's follower, and how a worker that is ready learns its state. */
  following: ReturnType<typeof followInPrimary> | null = null;
  started = false;
  stopping = false;
  failed = false;
  firstSnapshotId: string | null = null;
  private othersForked = false;
  private readonly exitCodes: (number | null)[] = [];

  constructor(private readonly o: WorkersOptions) {
    this.slots = Array.from({ length: o.config.WORKERS }, () => ({
      worker: null,
      member: null,
      ready: false,
      startedAt: 0,
      quickDeaths: 0,
      restart: null,
    }));
  }

  ready(): Worker[] {
    return this.slots.filter((s) => s.ready && s.worker !== null).map((s) => s.worker!);
  }

  members(): Member[] {
    return this.slots.filter((s) => s.ready && s.member !== null).map((s) => s.member!);
  }

  starting(): boolean {
    return this.slots.some((s) => s.worker !== null && !s.ready);
  }

  /** Sends to every ready worker (one whose channel just closed is skipped). */
  broadcast(m: ToWorker): void {
    for (const w of this.ready()) {
      try {
        w.send(m);
      } catch {
        /* its channel just closed */
      }
    }
  }

  fork(i: number): void {
    const slot = this.slots[i];
    slot.restart = null;
    // Never while the workers switch: a worker started now would open the file they are leaving.
    if (this.owner?.busy) return void this.owner.idle().then(() => !this.stopping && this.fork(i));
    const served = this.owner?.file ?? this.o.first;
    const w = cluster.fork({ ...this.o.env, [SLOT_ENV]: String(i), [SERVED_ENV]: JSON.stringify(served) });
    const member = workerMember(
      w,
      String(i),
      () => new MemberGone(`worker ${i} exited`),
      (why) => this.replace(i, w, why),
    );
    Object.assign(slot, { worker: w, member, ready: false, startedAt: Date.now() });
    w.on('message', (m: ToPrimary) => this.onMessage(i, w, member, m));
    w.on('exit', (code, signal) => this.onExit(i, w, member, code, signal));
  }

  private onMessage(i: number, w: Worker, member: ReturnType<typeof workerMember>, m: ToPrimary) {
    if (!isMessage(m)) return;
    switch (m.nlr) {
      case 'snapshot-prepared':
      case 'snapshot-serving':
        return member.answer(m);
      case 'limits':
        if (this.o.counters) w.send({ nlr: 'limits', answers: this.o.counters(m.ops) } satisfies ToWorker);
        return;
      case 'metrics':
        return this.o.metrics.answer(m);
      case 'failed':
        return this.onFailed(i, w, m.message);
      case 'ready':
        return this.onReady(i, w, m);
    }
  }

  private onFailed(i: number, w: Worker, message: string): void {
    if (!this.started && !this.failed) {
      this.failed = true;
      for (const s of this.slots) s.worker?.process.kill('SIGKILL');
      this.o.io.fail(message);
    }
    this.o.io.log({
      level: 'error',
      msg: 'a new worker failed to start',
      worker: String(i),
      pid: w.process.pid,
      error: message,
    });
  }

  private onReady(i: number, w: Worker, m: Extract<ToPrimary, { nlr: 'ready' }>): void {
    if (this.slots[i].worker !== w) return; // replaced meanwhile
    this.slots[i].ready = true;
    this.firstSnapshotId ??= m.snapshotId;
    if (m.snapshotId !== null) this.owner?.started(m.snapshotId);
    if (this.owner) w.send({ nlr: 'snapshot-state', state: this.owner.state, refused: false } satisfies ToWorker);
    this.following?.tell(w);
    // The first worker starts alone: it serves sooner with the cores to itself, and a snapshot or key store it cannot
    // open stops the start-up before the others load it too. The rest start once it is listening.
    if (i === 0 && !this.othersForked) {
      this.othersForked = true;
      for (let j = 1; j < this.slots.length; j++) this.fork(j);
    }
    if (!this.started && this.slots.every((s) => s.ready)) {
      this.started = true;
      this.o.io.listening({ url: m.url, metricsUrl: this.o.metricsUrl, snapshotId: m.snapshotId });
    }
  }

  private onExit(
    i: number,
    w: Worker,
    member: ReturnType<typeof workerMember>,
    code: number | null,
    signal: string | null,
  ) {
    member.gone();
    const slot = this.slots[i];
    if (slot.worker !== w) return; // a replaced worker: its slot has another already
    slot.worker = null;
    slot.ready = false;
    if (this.stopping) {
      this.exitCodes.push(signal ? null : code);
      return this.finishIfDone();
    }
    if (!this.started) {
      if (!this.failed) this.o.io.fail(`a worker exited during start-up (${signal ?? `exit code ${code}`})`);
      return;
    }
    slot.quickDeaths = Date.now() - slot.startedAt < STABLE_MS ? slot.quickDeaths + 1 : 1;
    const delay = Math.min(BACKOFF_MIN_MS * 2 ** (slot.quickDeaths - 1), BACKOFF_MAX_MS);
    this.o.io.log({
      level: 'error',
      msg: 'worker died; starting another',
      worker: String(i),
      pid: w.process.pid,
      code,
      signal,
      restart_in_ms: delay,
    });
    slot.restart = setTimeout(() => {
      this.o.metrics.restarts.inc();
      this.fork(i);
    }, delay);
  }

  /**
   * A worker that did not confirm a switch leaves the cluster at once (no new connection is handed to it), drains
   * what it holds if it still can (SIGTERM), and is killed after the drain timeout; a fresh worker takes its slot
   * on the served snapshot once the switch is over. Resolves once it has exited.
   */
  private replace(i: number, w: Worker, why: string): Promise<void> {
    const slot = this.slots[i];
    if (slot.worker !== w || this.stopping) return Promise.resolve();
    const exited = new Promise<void>((resolve) =>
      w.once('exit', (code) => {
        // Exit 1: its drain timed out and cut what it held; no code: killed after the drain timeout.
        if (code !== 0) this.o.metrics.drainsCut.inc();
        resolve();
      }),
    );
    Object.assign(slot, { worker: null, member: null, ready: false });
    this.o.metrics.replacements.inc();
    this.o.io.log({ level: 'warn', msg: 'replacing a worker', worker: String(i), pid: w.process.pid, reason: why });
    w.process.kill('SIGTERM');
    w.disconnect();
    const kill = setTimeout(() => w.process.kill('SIGKILL'), this.o.config.DRAIN_TIMEOUT_MS + STOP_GRACE_MS);
    void exited.then(() => clearTimeout(kill));
    this.fork(i);
    return exited;
  }

  stop(signal: string): void {
    if (this.stopping) return;
    this.stopping = true;
    this.following?.follower.close();
    this.owner?.close();
    const { config, io } = this.o;
    io.log({
      level: 'info',
      msg: `${signal}: stopping`,
      workers: this.slots.filter((s) => s.worker).length,
      drain_timeout_ms: config.DRAIN_TIMEOUT_MS,
    });
    for (const s of this.slots) {
      if (s.restart) clearTimeout(s.restart);
      if (s.worker === null) continue;
      if (s.ready) s.worker.send({ nlr: 'drain' } satisfies ToWorker);
      else s.worker.process.kill('SIGTERM'); // still starting: nothing to drain
    }
    setTimeout(() => {
      io.log({ level: 'warn', msg: 'workers still running after the drain timeout: killed' });
      for (const s of this.slots) s.worker?.process.kill('SIGKILL');
      process.exit(1);
    }, config.DRAIN_TIMEOUT_MS + STOP_GRACE_MS).unref();
    this.finishIfDone();
  }

  private finishIfDone(): void {
    if (this.slots.some((s) => s.worker !== null)) return;
    const code = this.exitCodes.every((c) => c === 0) ? 0 : 1;
    this.o.io.log({
      level: code === 0 ? 'info' : 'warn',
      msg: 'stopped: every worker has exited',
      exit_codes: this.exitCodes,
    });
    this.o.stopped(code);
  }
}
