// A cluster worker: startService as a single process runs it, with its limits counted by the primary (or in
// Redis), no metrics listener (the primary serves /metrics), the snapshot the primary serves (never the path's current
// file), switched when the primary says so, and a drain when the primary says so.
import { limitsOverIpc } from '../access/limits-ipc.ts';
import { RATE_WINDOW_SECONDS } from '../access/rate-limit.ts';
import type { Config } from '../config.ts';
import type { Log } from '../log.ts';
import type { ServedFile } from '../snapshot/served-file.ts';
import { answerMetrics } from './cluster-metrics.ts';
import { isMessage, type ToPrimary, type ToWorker } from './protocol.ts';
import { type Service, startService } from './server.ts';
import { followOwner } from './snapshot.ts';

export interface WorkerIo {
  /** This worker's place in the cluster (0 … WORKERS-1, kept by its replacement): the metrics' `worker` label. */
  slot: string;
  log: Log;
  requestLog: Log;
  /** The one-line message of a start-up failure, as a single process would print it. */
  startupMessage(e: unknown): string;
  /** The snapshot file the primary serves: what this worker opens. */
  served: ServedFile;
}

const send = (m: ToPrimary, done?: () => void) => {
  if (process.connected) process.send!(m, undefined, undefined, done);
  else done?.();
};

export async function runWorker(config: Config, io: WorkerIo): Promise<void> {
  // With Redis the counters are there, shared by every replica; otherwise the primary holds them.
  const ipc = config.REDIS_URL
    ? null
    : limitsOverIpc(
        {
          perKey: config.RATE_LIMIT_PER_MINUTE,
          authFailures: config.AUTH_FAILURES_PER_MINUTE,
          windowSeconds: RATE_WINDOW_SECONDS,
        },
        (ops) => {
          if (!process.connected) return false;
          process.send!({ nlr: 'limits', ops } satisfies ToPrimary);
          return true;
        },
      );
  let service: Service | null = null;
  process.on('message', (m: ToWorker) => {
    if (!isMessage(m) || followOwner(m, service?.snapshots, send)) return;
    switch (m.nlr) {
      case 'limits':
        return ipc?.answer(m.answers);
      case 'metrics':
        if (service) answerMetrics(service.metrics.registry, m, send);
        else send({ nlr: 'metrics', id: m.id, metrics: null });
        return;
      case 'drain':
        return stop('the primary asked for a drain');
    }
  });

  let stopping = false;
  function stop(why: string) {
    if (stopping || service === null) return;
    stopping = true;
    io.log({ level: 'info', msg: `stopping: ${why}`, drain_timeout_ms: config.DRAIN_TIMEOUT_MS });
    service.drain(config.DRAIN_TIMEOUT_MS).then((r) => {
      ipc?.close();
      process.exit(r.timedOut ? 1 : 0);
    });
  }

  try {
    service = await startService(
      { ...config, METRICS_PORT: undefined },
      {
        log: io.log,
        requestLog: io.requestLog,
        sharedLimits: ipc?.limits,
        served: io.served,
      },
    );
  } catch (e) {
    send({ nlr: 'failed', message: io.startupMessage(e) }, () => process.exit(1));
    return;
  }
  service.metrics.registry.setDefaultLabels({ worker: io.slot });
  // A terminal's Ctrl-C reaches every process of the group: a worker drains on its own signal too.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The primary owns the snapshot and looks at the path on its own SIGHUP (systemctl kill signals every process).
  process.on('SIGHUP', () => {});
  const snapshotId = service.snapshots.peek()?.meta.snapshot_id ?? null;
  io.log({ level: 'info', msg: 'worker ready', snapshot_id: snapshotId });
  send({ nlr: 'ready', url: service.url, redirectUrl: service.redirectUrl, snapshotId });
}
