// The cluster's primary (WORKERS > 1): starts the workers on one listening port (node:cluster, see workers.ts), owns
// the snapshot (every worker serves the file it checked), holds the limit counters, serves the merged /metrics, and
// on SIGTERM or SIGINT has every worker drain, then exits.
import type { AddressInfo } from 'node:net';
import { limitCounters } from '../access/limits-ipc.ts';
import { RATE_WINDOW_SECONDS } from '../access/rate-limit.ts';
import { type Config, cursorSecretOf } from '../config.ts';
import { serveMetrics } from '../http/metrics.ts';
import type { FollowSettings } from '../snapshot/follow.ts';
import { removeStaleLinks, servedAtStart } from '../snapshot/served-file.ts';
import { clusterMetrics } from './cluster-metrics.ts';
import { followInPrimary, followSettings } from './follow.ts';
import { type PrimaryIo, Workers } from './workers.ts';

export type { PrimaryIo } from './workers.ts';

/** The merged /metrics on METRICS_PORT, when set: its URL, and how to close it. */
async function metricsListener(config: Config, io: PrimaryIo, source: Parameters<typeof serveMetrics>[0]) {
  if (config.METRICS_PORT === undefined) return { url: undefined, close() {} };
  const server = serveMetrics(source);
  const port = await new Promise<number>((resolve) => {
    server.once('error', (e) =>
      io.fail(`METRICS_HOST / METRICS_PORT (${config.METRICS_HOST}:${config.METRICS_PORT}): ${e.message}`),
    );
    server.listen(config.METRICS_PORT, config.METRICS_HOST, () => resolve((server.address() as AddressInfo).port));
  });
  const host = config.METRICS_HOST.includes(':') ? `[${config.METRICS_HOST}]` : config.METRICS_HOST;
  return { url: `http://${host}:${port}`, close: () => void server.close() };
}

/** What every worker's environment gets: unset, one random cursor secret for all (a cursor from one must work on the others), warned about once. */
function workerEnv(config: Config, io: PrimaryIo): Record<string, string> {
  return config.CURSOR_SECRET !== undefined ? {} : { CURSOR_SECRET: cursorSecretOf(config, io.log) };
}

export async function runPrimary(config: Config, io: PrimaryIo): Promise<void> {
  const counters = config.REDIS_URL
    ? null
    : limitCounters({
        perKey: config.RATE_LIMIT_PER_MINUTE,
        authFailures: config.AUTH_FAILURES_PER_MINUTE,
        windowSeconds: RATE_WINDOW_SECONDS,
      });
  // Checked before any worker starts: a bad key or folder stops the start-up here, in one line.
  let follow: FollowSettings | null;
  try {
    follow = followSettings(config);
  } catch (e) {
    return io.fail((e as Error).message);
  }
  let workers!: Workers;
  const metrics = clusterMetrics(
    () => workers.ready(),
    () => workers.owner?.state.behind.length ?? 0,
    () => workers.following?.state() ?? null,
  );
  const listener = await metricsListener(config, io, metrics.source);
  // The first start is the one time the path is read: a link to the file there now is what every worker opens,
  // whatever the path names later. From then on the owner (loaded once worker 0 is forked) decides what is served.
  removeStaleLinks(config.SNAPSHOT_PATH);
  // Following: a file there that cannot be served is removed (the follower replaces it), as a single process does.
  if (follow !== null) (await import('../snapshot/follow-install.ts')).clearUnusable(config.SNAPSHOT_PATH, io.log);
  const first = servedAtStart(config.SNAPSHOT_PATH);
  workers = new Workers({
    config,
    io,
    env: workerEnv(config, io),
    counters,
    metrics,
    first,
    metricsUrl: listener.url,
    stopped: (code) => {
      listener.close();
      process.exit(code);
    },
  });
  process.on('SIGTERM', () => workers.stop('SIGTERM'));
  process.on('SIGINT', () => workers.stop('SIGINT'));
  // SIGHUP: the owner looks at the snapshot file now, and the follower at latest.json.
  process.on('SIGHUP', () => {
    void workers.owner?.lookNow();
    void workers.following?.follower.lookAgain();
  });
  workers.fork(0);
  await startOwner(config, io, workers, first);
  // The primary follows (SNAPSHOT_FOLLOW) into its owner; every worker mirrors the state for /readyz.
  if (follow !== null && workers.owner !== null)
    workers.following = followInPrimary(follow, config.SNAPSHOT_PATH, workers.owner, io.log, () => workers.ready());
}

/** The snapshot's owner, loaded while the first worker starts: watches the path and has every worker follow it. */
async function startOwner(config: Config, io: PrimaryIo, workers: Workers, first: ReturnType<typeof servedAtStart>) {
  const { SnapshotOwner } = await import('../snapshot/owner.ts');
  if (workers.stopping || workers.failed) return;
  const owner = new SnapshotOwner(config.SNAPSHOT_PATH, first, workers.firstSnapshotId, {
    checkIntervalMs: config.SNAPSHOT_CHECK_MS,
    log: io.log,
    cluster: true,
    members: () => workers.members(),
    // A worker that is starting opens the file served when it was forked; a switch waits until it serves.
    settled: () =>
      new Promise<void>((resolve) => {
        const check = () => (workers.starting() ? setTimeout(check, 20) : resolve());
        check();
      }),
    changed: (state, refused) => workers.broadcast({ nlr: 'snapshot-state', state, refused }),
  });
  workers.owner = owner;
  // Whatever happened to the path while the module loaded is looked at now.
  void owner.refresh();
}
