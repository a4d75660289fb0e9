// startService(config): snapshot + key store + access guard + app + listener(s); shared by main.ts and the tests, so both run the same wiring.
import type { Server } from 'node:http';
import { type Admission, localAdmission, sharedAdmission } from '../access/admission.ts';
import { KeyReader } from '../access/key-reader.ts';
import { KeyStoreError } from '../access/key-store.ts';
import { createLimits, RATE_WINDOW_SECONDS, type SharedLimits } from '../access/rate-limit.ts';
import type { RedisLink } from '../access/redis.ts';
import { type Config, cursorSecretOf, isLoopback, redactUrl } from '../config.ts';
import { createApp } from '../http/app.ts';
import { cursorCodec } from '../http/cursor.ts';
import { type DrainResult, drain } from '../http/drain.ts';
import { accessGuard } from '../http/guard.ts';
import { createMetrics, type Metrics } from '../http/metrics.ts';
import type { AppDeps, Lifecycle } from '../http/route.ts';
import type { Log } from '../log.ts';
import { type ServedFile, SnapshotError, SnapshotSource } from '../snapshot/source.ts';
import { followInProcess } from './follow.ts';
import { apiListener, metricsListener, redirectListener, TIMEOUTS } from './listeners.ts';
import { serviceRoutes } from './routes.ts';

export interface Service {
  /** http://… for plain HTTP, https://… when the service terminates TLS itself. */
  url: string;
  /** The HTTP_REDIRECT_PORT listener (http://…), when configured. */
  redirectUrl?: string;
  /** The METRICS_PORT listener (http://…), when configured. */
  metricsUrl?: string;
  snapshots: SnapshotSource;
  /** The key store file's reader; null when keys and limits live in Redis (REDIS_URL). */
  keys: KeyReader | null;
  redis: RedisLink | null;
  servers: Server[];
  metrics: Metrics;
  lifecycle: Lifecycle;
  /** SIGHUP: the owner looks at the path now, and a follower (SNAPSHOT_FOLLOW) checks latest.json now. */
  lookNow(): void;
  /** Graceful stop (SIGTERM): see drain.ts; then the snapshot and key store close. */
  drain(timeoutMs: number): Promise<DrainResult>;
  close(): Promise<void>;
}

export interface ServiceOptions {
  log: Log;
  /** Where the per-request lines go (default: log). */
  requestLog?: Log;
  now?: () => number;
  /** Length of the rate-limit window in seconds. Always 60 in production (the settings are per minute); tests shorten it. */
  rateWindowSeconds?: number;
  /** How often an unreadable key store is retried, in ms (default 1000). */
  keysRetryMs?: number;
  /** Connection time limits (production values: TIMEOUTS in listeners.ts); tests shorten them. */
  timeouts?: Partial<typeof TIMEOUTS>;
  /** Counters kept by another process (a cluster worker asks its primary); default: in this process. Not with REDIS_URL. */
  sharedLimits?: SharedLimits;
  /** A cluster worker: the snapshot file its primary serves (default: this process owns SNAPSHOT_PATH). */
  served?: ServedFile;
}

/**
 * A start-up failure about a file names the setting the file came from (the operator's one line). Other
 * failures (the native addon did not load) are not the setting's fault and stay as they are.
 */
function naming(setting: string, e: unknown): unknown {
  const code = String((e as { code?: unknown })?.code ?? '');
  const aboutFile =
    e instanceof SnapshotError || e instanceof KeyStoreError || code.startsWith('SQLITE_') || /^E[A-Z]+$/.test(code);
  if (aboutFile) (e as Error).message = `${setting}: ${(e as Error).message}`;
  return e;
}

/** What the metrics read at scrape time, once it exists. */
interface Parts {
  snapshots?: SnapshotSource;
  keys: KeyReader | null;
  redis: RedisLink | null;
}

function serviceMetrics(parts: Parts, follows: boolean, now?: () => number): Metrics {
  return createMetrics({
    snapshot: () => parts.snapshots?.peek()?.meta ?? null,
    serving: () => parts.snapshots?.peek() != null && parts.snapshots.damaged === null,
    pathRefused: () => parts.snapshots?.pathRefused === true,
    keyReloads: () => parts.keys?.reloads ?? 0,
    keyStore: () =>
      parts.redis
        ? { store: 'redis', readable: parts.redis.ready() }
        : parts.keys
          ? { store: 'file', readable: parts.keys.probe() }
          : null,
    // The process that follows exports the follow series: a single process (a cluster's primary, not its workers).
    follow: follows ? () => parts.snapshots?.follow ?? null : undefined,
    now,
  });
}

/** Where keys are checked and requests counted: Redis (REDIS_URL, shared by every replica), or the key store file. */
async function keyAccess(config: Config, opts: ServiceOptions, parts: Parts) {
  const limits = {
    perKey: config.RATE_LIMIT_PER_MINUTE,
    authFailures: config.AUTH_FAILURES_PER_MINUTE,
    windowSeconds: opts.rateWindowSeconds ?? RATE_WINDOW_SECONDS,
  };
  if (config.REDIS_URL !== undefined) {
    // Several replicas: keys and counters in Redis. Not reachable yet, the service starts and fails closed (503)
    // until it is, so replicas and Redis may start in any order.
    // Loaded only when Redis is used: the Redis client is a sixth of a start-up's module evaluation.
    const [{ connectRedis, watchPersistence }, { redisAdmission }] = await Promise.all([
      import('../access/redis.ts'),
      import('../access/redis-admission.ts'),
    ]);
    const redis = connectRedis(config.REDIS_URL, { log: opts.log, name: 'nlr-api' });
    parts.redis = redis;
    const keysPersistence = watchPersistence(redis, opts.log);
    const where = redactUrl(config.REDIS_URL);
    opts.log({ level: 'info', msg: 'API keys and rate limits in Redis', redis: where, prefix: config.REDIS_PREFIX });
    if (!(await redis.waitReady(2000)))
      opts.log({ level: 'warn', msg: 'redis is not reachable yet: requests that need a key get 503', redis: where });
    const admission: Admission = redisAdmission(redis, { prefix: config.REDIS_PREFIX, ...limits });
    return { admission, keysPersistence, keysReady: () => redis.ready() };
  }
  let keys: KeyReader;
  try {
    keys = new KeyReader(config.KEYS_PATH, { retryMs: opts.keysRetryMs, log: opts.log, now: opts.now });
  } catch (e) {
    parts.snapshots?.close();
    throw naming('KEYS_PATH', e);
  }
  parts.keys = keys;
  const admission = opts.sharedLimits
    ? sharedAdmission(keys.lookupOrWait, opts.sharedLimits)
    : localAdmission(keys.lookupOrWait, createLimits(limits));
  return { admission, keysPersistence: undefined, keysReady: () => keys.probe() };
}

/** What every route is given: the snapshot, the cursor codec, the access guard, the metrics, the lifecycle. */
function appDeps(
  config: Config,
  opts: ServiceOptions,
  parts: { snapshots: SnapshotSource; metrics: Metrics; lifecycle: Lifecycle },
  access: Awaited<ReturnType<typeof keyAccess>>,
): AppDeps {
  const { metrics, lifecycle } = parts;
  const guard = accessGuard({
    admission: access.admission,
    tls: config.TLS_CERT_PATH !== undefined && config.TLS_KEY_PATH !== undefined,
    trustProxy: config.TRUST_PROXY,
    playgroundOrigin: config.PLAYGROUND_ORIGIN,
    now: opts.now,
    onLimited: (kind) => metrics.limited.labels(kind).inc(),
    // Read when the request began, `draining` may have turned true while its admission was awaited.
    waited: (res) => {
      if (lifecycle.draining) res.shouldKeepAlive = false;
    },
  });
  const cursorSecret = cursorSecretOf(config, opts.log);
  return {
    snapshots: parts.snapshots,
    cursor: cursorCodec(cursorSecret, opts.now),
    log: opts.log,
    requestLog: opts.requestLog,
    logRequests: config.LOG_REQUESTS,
    guard,
    metrics,
    lifecycle,
    keysReady: access.keysReady,
    keysShared: config.REDIS_URL !== undefined,
    keysPersistence: access.keysPersistence,
  };
}

export async function startService(config: Config, opts: ServiceOptions): Promise<Service> {
  const parts: Parts = { keys: null, redis: null };
  const metrics = serviceMetrics(parts, opts.served === undefined, opts.now);
  const lifecycle: Lifecycle = { draining: false, inFlight: 0 };
  let snapshots: SnapshotSource;
  try {
    snapshots = new SnapshotSource(config.SNAPSHOT_PATH, {
      checkIntervalMs: config.SNAPSHOT_CHECK_MS,
      log: opts.log,
      now: opts.now,
      events: { swapped: () => metrics.swaps.inc(), refused: () => metrics.refused.inc() },
      served: opts.served,
      mayStartEmpty: config.SNAPSHOT_FOLLOW !== undefined,
    });
  } catch (e) {
    throw naming('SNAPSHOT_PATH', e);
  }
  parts.snapshots = snapshots;
  // A single process follows the publication itself; a cluster's worker is told by its primary, which follows.
  const follower = opts.served === undefined ? followInProcess(config, snapshots, opts.log) : null;
  const access = await keyAccess(config, opts, parts);
  const deps = appDeps(config, opts, { snapshots, metrics, lifecycle }, access);
  const app = createApp(deps, serviceRoutes(deps));
  const servers: Server[] = [];
  const closeStores = async () => {
    follower?.close();
    snapshots.close();
    parts.keys?.close();
    await parts.redis?.close();
  };
  const close = async () => {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((r) => {
            s.closeAllConnections?.();
            s.close(() => r());
          }),
      ),
    );
    await closeStores();
  };
  try {
    const tls = config.TLS_CERT_PATH !== undefined && config.TLS_KEY_PATH !== undefined;
    const t = { ...TIMEOUTS, ...opts.timeouts };
    const { url, port } = await apiListener(config, tls, t, app, servers);
    const redirectUrl = tls ? await redirectListener(config, port, t, deps, servers) : undefined;
    if (!tls && !config.TRUST_PROXY && !isLoopback(config.HOST)) {
      opts.log({
        level: 'warn',
        msg: 'serving plain HTTP on a non-loopback address: API keys would cross the network in clear text; set TLS_CERT_PATH/TLS_KEY_PATH, or TRUST_PROXY=1 behind a TLS-terminating proxy',
        host: config.HOST,
      });
    }
    const metricsUrl = await metricsListener(config, metrics, servers);
    const drainAll = async (timeoutMs: number) => {
      const result = await drain(servers, lifecycle, timeoutMs, opts.log);
      await closeStores();
      return result;
    };
    const { keys, redis } = parts;
    return {
      url,
      redirectUrl,
      metricsUrl,
      snapshots,
      keys,
      redis,
      servers,
      metrics,
      lifecycle,
      lookNow: () => {
        void snapshots.lookNow();
        void follower?.lookAgain();
      },
      drain: drainAll,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
