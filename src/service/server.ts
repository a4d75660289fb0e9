// startService(config): snapshot + key store + access guard + app + listener(s); shared by main.ts and the tests, so both run the same wiring.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Admission, localAdmission, sharedAdmission } from '../access/admission.ts';
import { KeyReader } from '../access/key-reader.ts';
import { KeyStoreError } from '../access/key-store.ts';
import { createLimits, type SharedLimits } from '../access/rate-limit.ts';
import type { RedisLink } from '../access/redis.ts';
import { type Config, CURSOR_SECRET_WARNING, isLoopback, redactUrl } from '../config.ts';
import { createApp } from '../http/app.ts';
import { cursorCodec } from '../http/cursor.ts';
import { type DrainResult, drain } from '../http/drain.ts';
import { accessGuard, httpsRedirect } from '../http/guard.ts';
import { createMetrics, type Metrics, serveMetrics } from '../http/metrics.ts';
import { clientErrorHandler, connectHandler, trackingResponses } from '../http/raw-answers.ts';
import type { AppDeps, Lifecycle } from '../http/route.ts';
import type { Log } from '../log.ts';
import { type ServedFile, SnapshotError, SnapshotSource } from '../snapshot/source.ts';
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
  /** Connection time limits (production values below); tests shorten them. */
  timeouts?: Partial<typeof TIMEOUTS>;
  /** Counters kept by another process (a cluster worker asks its primary); default: in this process. Not with REDIS_URL. */
  sharedLimits?: SharedLimits;
  /** A cluster worker: the snapshot file its primary serves (default: this process owns SNAPSHOT_PATH). */
  served?: ServedFile;
}

/**
 * Connection limits against slow or idle clients (slowloris): the whole headers within 10 s, the whole
 * request within 30 s, a TLS handshake within 10 s, checked every 2 s (node's default check interval
 * is 30 s, which let a trickling client hold a connection ~60 s). Idle keep-alive connections close
 * after 65 s, longer than the 60 s idle timeout of common load balancers, so the balancer closes first.
 */
const TIMEOUTS = { headersMs: 10_000, requestMs: 30_000, handshakeMs: 10_000, checkMs: 2_000, keepAliveMs: 65_000 };

/** Listens; an error (a host that does not resolve, a port in use) names the settings it came from. */
function listen(server: Server, port: number, host: string, names = 'HOST / PORT'): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new Error(`${names} (${host}:${port}): ${e.message}`)));
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function readPem(path: string, setting: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`${setting}: cannot read ${what} ${path}: ${(e as Error).message}`);
  }
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

export async function startService(config: Config, opts: ServiceOptions): Promise<Service> {
  // Read lazily by the metrics (at scrape time), once both exist.
  let snapshots!: SnapshotSource;
  let keys: KeyReader | null = null;
  let redis: RedisLink | null = null;
  let keysPersistence: AppDeps['keysPersistence'];
  const metrics = createMetrics({
    snapshot: () => snapshots?.peek()?.meta ?? null,
    serving: () => snapshots?.peek() != null && snapshots.damaged === null,
    pathRefused: () => snapshots?.pathRefused === true,
    keyReloads: () => keys?.reloads ?? 0,
    keyStore: () =>
      redis ? { store: 'redis', readable: redis.ready() } : keys ? { store: 'file', readable: keys.probe() } : null,
    now: opts.now,
  });
  const lifecycle: Lifecycle = { draining: false, inFlight: 0 };
  try {
    snapshots = new SnapshotSource(config.SNAPSHOT_PATH, {
      checkIntervalMs: config.SNAPSHOT_CHECK_MS,
      log: opts.log,
      now: opts.now,
      events: { swapped: () => metrics.swaps.inc(), refused: () => metrics.refused.inc() },
      served: opts.served,
    });
  } catch (e) {
    throw naming('SNAPSHOT_PATH', e);
  }
  const windowSeconds = opts.rateWindowSeconds ?? 60;
  let admission: Admission;
  if (config.REDIS_URL !== undefined) {
    // Several replicas: keys and counters in Redis. Not reachable yet, the service starts and fails closed (503)
    // until it is, so replicas and Redis may start in any order.
    // Loaded only when Redis is used: the Redis client is a sixth of a start-up's module evaluation.
    const [{ connectRedis, watchPersistence }, { redisAdmission }] = await Promise.all([
      import('../access/redis.ts'),
      import('../access/redis-admission.ts'),
    ]);
    redis = connectRedis(config.REDIS_URL, { log: opts.log, name: 'nlr-api' });
    keysPersistence = watchPersistence(redis, opts.log);
    const where = redactUrl(config.REDIS_URL);
    opts.log({ level: 'info', msg: 'API keys and rate limits in Redis', redis: where, prefix: config.REDIS_PREFIX });
    if (!(await redis.waitReady(2000)))
      opts.log({ level: 'warn', msg: 'redis is not reachable yet: requests that need a key get 503', redis: where });
    admission = redisAdmission(redis, {
      prefix: config.REDIS_PREFIX,
      perKey: config.RATE_LIMIT_PER_MINUTE,
      authFailures: config.AUTH_FAILURES_PER_MINUTE,
      windowSeconds,
    });
  } else {
    try {
      keys = new KeyReader(config.KEYS_PATH, { retryMs: opts.keysRetryMs, log: opts.log, now: opts.now });
    } catch (e) {
      snapshots.close();
      throw naming('KEYS_PATH', e);
    }
    admission = opts.sharedLimits
      ? sharedAdmission(keys.lookupOrWait, opts.sharedLimits)
      : localAdmission(
          keys.lookupOrWait,
          createLimits({
            perKey: config.RATE_LIMIT_PER_MINUTE,
            authFailures: config.AUTH_FAILURES_PER_MINUTE,
            windowSeconds,
          }),
        );
  }
  const tls = config.TLS_CERT_PATH !== undefined && config.TLS_KEY_PATH !== undefined;
  const guard = accessGuard({
    admission,
    tls,
    trustProxy: config.TRUST_PROXY,
    playgroundOrigin: config.PLAYGROUND_ORIGIN,
    now: opts.now,
    onLimited: (kind) => metrics.limited.labels(kind).inc(),
    // Read when the request began, `draining` may have turned true while its admission was awaited.
    waited: (res) => {
      if (lifecycle.draining) res.shouldKeepAlive = false;
    },
  });
  // No built-in default: a secret written in the source would let anyone forge cursors (any position, no expiry).
  let cursorSecret = config.CURSOR_SECRET;
  if (cursorSecret === undefined) {
    cursorSecret = randomBytes(32).toString('base64url');
    opts.log({ level: 'warn', msg: CURSOR_SECRET_WARNING });
  }
  const deps: AppDeps = {
    snapshots,
    cursor: cursorCodec(cursorSecret, opts.now),
    log: opts.log,
    requestLog: opts.requestLog,
    logRequests: config.LOG_REQUESTS,
    guard,
    metrics,
    lifecycle,
    keysReady: redis ? () => redis!.ready() : () => keys!.probe(),
    keysShared: redis !== null,
    keysPersistence,
  };
  const app = createApp(deps, serviceRoutes(deps));
  const servers: Server[] = [];
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
    snapshots.close();
    keys?.close();
    await redis?.close();
  };

  try {
    const t = { ...TIMEOUTS, ...opts.timeouts };
    // requireHostHeader: the app answers a missing Host itself, with the error envelope (node's answer is a bare 400).
    const httpOptions = {
      headersTimeout: t.headersMs,
      requestTimeout: t.requestMs,
      connectionsCheckingInterval: t.checkMs,
      keepAliveTimeout: t.keepAliveMs,
      requireHostHeader: false,
    };
    let server: Server;
    if (tls) {
      const cert = readPem(config.TLS_CERT_PATH!, 'TLS_CERT_PATH', 'TLS certificate'),
        key = readPem(config.TLS_KEY_PATH!, 'TLS_KEY_PATH', 'TLS key');
      try {
        server = createHttpsServer({ cert, key, handshakeTimeout: t.handshakeMs, ...httpOptions }, app.handler);
      } catch (e) {
        throw new Error(
          `TLS_CERT_PATH / TLS_KEY_PATH: not a usable PEM certificate and matching key (${(e as Error).message})`,
        );
      }
    } else server = createServer(httpOptions, app.handler);
    // Beyond MAX_CONNECTIONS open connections, new ones are closed at once: file descriptors stay for the
    // clients already served, however many connections one client opens.
    server.maxConnections = config.MAX_CONNECTIONS;
    server.on('clientError', app.clientError);
    server.on('connect', app.connect);
    // An Expect other than 100-continue: served as usual (RFC 9110 allows ignoring it) instead of node's bare 417.
    server.on('checkExpectation', app.handler);
    servers.push(server);
    const port = await listen(server, config.PORT, config.HOST);
    const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
    let redirectUrl: string | undefined;
    if (tls && config.HTTP_REDIRECT_PORT !== undefined) {
      const logDeps = { log: opts.log, requestLog: opts.requestLog, logRequests: config.LOG_REQUESTS };
      const { handler: redirect, lastResponse } = trackingResponses(httpsRedirect(port, logDeps));
      const plain = createServer({ ...httpOptions, requestTimeout: Math.min(t.requestMs, 10_000) }, redirect);
      plain.maxConnections = config.MAX_CONNECTIONS;
      plain.on('clientError', clientErrorHandler(logDeps, lastResponse));
      plain.on('connect', connectHandler(logDeps, lastResponse));
      plain.on('checkExpectation', redirect);
      servers.push(plain);
      redirectUrl = `http://${host}:${await listen(plain, config.HTTP_REDIRECT_PORT, config.HOST, 'HOST / HTTP_REDIRECT_PORT')}`;
    }
    if (!tls && !config.TRUST_PROXY && !isLoopback(config.HOST)) {
      opts.log({
        level: 'warn',
        msg: 'serving plain HTTP on a non-loopback address: API keys would cross the network in clear text; set TLS_CERT_PATH/TLS_KEY_PATH, or TRUST_PROXY=1 behind a TLS-terminating proxy',
        host: config.HOST,
      });
    }
    let metricsUrl: string | undefined;
    if (config.METRICS_PORT !== undefined) {
      const m = serveMetrics(metrics.registry);
      servers.push(m);
      const mhost = config.METRICS_HOST.includes(':') ? `[${config.METRICS_HOST}]` : config.METRICS_HOST;
      metricsUrl = `http://${mhost}:${await listen(m, config.METRICS_PORT, config.METRICS_HOST, 'METRICS_HOST / METRICS_PORT')}`;
    }
    const drainAll = async (timeoutMs: number) => {
      const result = await drain(servers, lifecycle, timeoutMs, opts.log);
      snapshots.close();
      keys?.close();
      await redis?.close();
      return result;
    };
    const url = `${tls ? 'https' : 'http'}://${host}:${port}`;
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
      drain: drainAll,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
