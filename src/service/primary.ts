// The cluster's primary (WORKERS > 1): starts the workers on one listening port (node:cluster), starts another
// when one dies (exponential backoff), owns the snapshot (every worker serves the file it checked), holds the limit
// counters, serves the merged /metrics, and on SIGTERM or SIGINT has every worker drain, then exits.
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { limitCounters } from '../access/limits-ipc.ts';
import { type Config, CURSOR_SECRET_WARNING } from '../config.ts';
import { serveMetrics } from '../http/metrics.ts';
import type { Log } from '../log.ts';
import { MemberGone } from '../snapshot/members.ts';
import type { SnapshotOwner } from '../snapshot/owner.ts';
import { removeStaleLinks, servedAtStart } from '../snapshot/served-file.ts';
import { clusterMetrics } from './cluster-metrics.ts';
import { isMessage, SERVED_ENV, SLOT_ENV, type ToPrimary, type ToWorker } from './protocol.ts';
import { workerMember } from './snapshot.ts';

/** Restart delays: 100 ms, doubled for each death within STABLE_MS of its start, at most 30 s. */
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 30_000;
/** A worker that lived this long is healthy: the next death starts the backoff over. */
const STABLE_MS = 30_000;
/** After DRAIN_TIMEOUT_MS plus this, workers still running are killed. */
const STOP_GRACE_MS = 5_000;

export interface PrimaryIo {
  log: Log;
  /** Every worker listens: the "listening" line, then the development key (once, here, not per worker). */
  listening(info: { url: string; metricsUrl?: string; snapshotId: string }): void;
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

export async function runPrimary(config: Config, io: PrimaryIo): Promise<void> {
  const counters = config.REDIS_URL
    ? null
    : limitCounters({
        perKey: config.RATE_LIMIT_PER_MINUTE,
        authFailures: config.AUTH_FAILURES_PER_MINUTE,
        windowSeconds: 60,
      });
  const slots: Slot[] = Array.from({ length: config.WORKERS }, () => ({
    worker: null,
    member: null,
    ready: false,
    startedAt: 0,
    quickDeaths: 0,
    restart: null,
  }));
  const readyWorkers = () => slots.filter((s) => s.ready && s.worker !== null).map((s) => s.worker!);
  const metrics = clusterMetrics(readyWorkers);
  let metricsServer: Server | null = null;
  let metricsUrl: string | undefined;
  if (config.METRICS_PORT !== undefined) {
    metricsServer = serveMetrics(metrics.source);
    const port = await new Promise<number>((resolve) => {
      metricsServer!.once('error', (e) =>
        io.fail(`METRICS_HOST / METRICS_PORT (${config.METRICS_HOST}:${config.METRICS_PORT}): ${e.message}`),
      );
      metricsServer!.listen(config.METRICS_PORT, config.METRICS_HOST, () =>
        resolve((metricsServer!.address() as AddressInfo).port),
      );
    });
    const host = config.METRICS_HOST.includes(':') ? `[${config.METRICS_HOST}]` : config.METRICS_HOST;
    metricsUrl = `http://${host}:${port}`;
  }

  // Unset, one random secret for every worker (a cursor from one must work on the others), warned about once.
  const env: Record<string, string> = {};
  if (config.CURSOR_SECRET === undefined) {
    env.CURSOR_SECRET = randomBytes(32).toString('base64url');
    io.log({ level: 'warn', msg: CURSOR_SECRET_WARNING });
  }

  let started = false;
  let stopping = false;
  let failed = false;
  const exitCodes: (number | null)[] = [];

  // The first start is the one time the path is read: a link to the file there now is what every worker opens,
  // whatever the path names later. From then on the owner (loaded once worker 0 is forked) decides what is served.
  removeStaleLinks(config.SNAPSHOT_PATH);
  const first = servedAtStart(config.SNAPSHOT_PATH);
  let owner: SnapshotOwner | null = null;
  let firstSnapshotId: string | null = null;

  const fork = (i: number) => {
    const slot = slots[i];
    slot.restart = null;
    // Never while the workers switch: a worker started now would open the file they are leaving.
    if (owner?.busy) return void owner.idle().then(() => !stopping && fork(i));
    const served = owner?.file ?? first;
    const w = cluster.fork({ ...env, [SLOT_ENV]: String(i), [SERVED_ENV]: JSON.stringify(served) });
    const member = workerMember(w, () => new MemberGone(`worker ${i} exited`));
    Object.assign(slot, { worker: w, member, ready: false, startedAt: Date.now() });
    w.on('message', (m: ToPrimary) => {
      if (!isMessage(m)) return;
      switch (m.nlr) {
        case 'snapshot-prepared':
        case 'snapshot-serving':
          return member.answer(m);
        case 'limits':
          if (counters) w.send({ nlr: 'limits', answers: counters(m.ops) } satisfies ToWorker);
          return;
        case 'metrics':
          return metrics.answer(m);
        case 'failed':
          if (!started && !failed) {
            failed = true;
            for (const s of slots) s.worker?.process.kill('SIGKILL');
            io.fail(m.message);
          }
          io.log({
            level: 'error',
            msg: 'a new worker failed to start',
            worker: String(i),
            pid: w.process.pid,
            error: m.message,
          });
          return;
        case 'ready':
          slot.ready = true;
          firstSnapshotId ??= m.snapshotId;
          owner?.started(m.snapshotId);
          if (owner) w.send({ nlr: 'snapshot-state', state: owner.state, refused: false } satisfies ToWorker);
          if (i === 0 && !othersForked) {
            othersForked = true;
            for (let j = 1; j < slots.length; j++) fork(j);
          }
          if (!started && slots.every((s) => s.ready)) {
            started = true;
            io.listening({ url: m.url, metricsUrl, snapshotId: m.snapshotId });
          }
          return;
      }
    });
    w.on('exit', (code, signal) => {
      slot.worker = null;
      slot.ready = false;
      member.gone();
      if (stopping) {
        exitCodes.push(signal ? null : code);
        return finishIfDone();
      }
      if (!started) {
        if (!failed) io.fail(`a worker exited during start-up (${signal ?? `exit code ${code}`})`);
        return;
      }
      slot.quickDeaths = Date.now() - slot.startedAt < STABLE_MS ? slot.quickDeaths + 1 : 1;
      const delay = Math.min(BACKOFF_MIN_MS * 2 ** (slot.quickDeaths - 1), BACKOFF_MAX_MS);
      io.log({
        level: 'error',
        msg: 'worker died; starting another',
        worker: String(i),
        pid: w.process.pid,
        code,
        signal,
        restart_in_ms: delay,
      });
      slot.restart = setTimeout(() => {
        metrics.restarts.inc();
        fork(i);
      }, delay);
    });
  };

  const finishIfDone = () => {
    if (slots.some((s) => s.worker !== null)) return;
    const code = exitCodes.every((c) => c === 0) ? 0 : 1;
    io.log({ level: code === 0 ? 'info' : 'warn', msg: 'stopped: every worker has exited', exit_codes: exitCodes });
    metricsServer?.close();
    process.exit(code);
  };

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    owner?.close();
    io.log({
      level: 'info',
      msg: `${signal}: stopping`,
      workers: slots.filter((s) => s.worker).length,
      drain_timeout_ms: config.DRAIN_TIMEOUT_MS,
    });
    for (const s of slots) {
      if (s.restart) clearTimeout(s.restart);
      if (s.worker === null) continue;
      if (s.ready) s.worker.send({ nlr: 'drain' } satisfies ToWorker);
      else s.worker.process.kill('SIGTERM'); // still starting: nothing to drain
    }
    setTimeout(() => {
      io.log({ level: 'warn', msg: 'workers still running after the drain timeout: killed' });
      for (const s of slots) s.worker?.process.kill('SIGKILL');
      process.exit(1);
    }, config.DRAIN_TIMEOUT_MS + STOP_GRACE_MS).unref();
    finishIfDone();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGHUP: the owner looks at the snapshot file now.
  process.on('SIGHUP', () => void owner?.lookNow());

  // The first worker starts alone: it serves sooner with the cores to itself, and a snapshot or key store it cannot
  // open stops the start-up before the others load it too. The rest start once it is listening.
  let othersForked = false;
  fork(0);

  const { SnapshotOwner } = await import('../snapshot/owner.ts');
  if (stopping || failed) return;
  const starting = () => slots.some((s) => s.worker !== null && !s.ready);
  owner = new SnapshotOwner(config.SNAPSHOT_PATH, first, firstSnapshotId, {
    checkIntervalMs: config.SNAPSHOT_CHECK_MS,
    log: io.log,
    cluster: true,
    members: () => slots.filter((s) => s.ready && s.member !== null).map((s) => s.member!),
    // A worker that is starting opens the file served when it was forked; a switch waits until it serves.
    settled: () =>
      new Promise<void>((resolve) => {
        const check = () => (starting() ? setTimeout(check, 20) : resolve());
        check();
      }),
    changed: (state, refused) => {
      for (const w of readyWorkers()) {
        try {
          w.send({ nlr: 'snapshot-state', state, refused } satisfies ToWorker);
        } catch {
          /* its channel just closed */
        }
      }
    },
  });
  // Whatever happened to the path while the module loaded is looked at now.
  void owner.refresh();
}
