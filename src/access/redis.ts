// One ioredis connection (REDIS_URL) for a server or the key command: commands fail fast instead of waiting
// (no offline queue, a 500 ms command timeout), it reconnects by itself, and its password is never logged.
import { Redis } from 'ioredis';
import { redactUrl } from '../config.ts';
import type { Log } from '../log.ts';

/** The longest a request waits for Redis before it fails closed (503). */
export const COMMAND_TIMEOUT_MS = 500;
/** While connected, a PING this often keeps `ready()` true to what Redis does, with or without traffic. */
const PING_MS = 1000;

export interface RedisLink {
  redis: Redis;
  /** Connected, and the last command or PING did not fail (for /readyz). */
  ready(): boolean;
  /** Resolves true once connected, false after `ms` (the caller goes on and fails closed meanwhile). */
  waitReady(ms: number): Promise<boolean>;
  /** A command failed (a timeout while connected: Redis is stuck); `ready()` is false until one succeeds. */
  failed(e: unknown): void;
  succeeded(): void;
  close(): Promise<void>;
}

export function connectRedis(url: string, opts: { log?: Log; name: string; commandTimeoutMs?: number }): RedisLink {
  const where = redactUrl(url);
  const redis = new Redis(url, {
    connectionName: opts.name,
    enableAutoPipelining: true, // the commands of one event-loop turn go out as one write
    enableOfflineQueue: false, // disconnected: a command fails at once, nothing piles up
    maxRetriesPerRequest: 0, // a command in flight when the connection drops fails, not retried later
    commandTimeout: opts.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(50 * times, 500), // reconnect every 50 … 500 ms, for ever
  });
  let stuck = false;
  let closing = false;
  let down: string | null = null;
  const unavailable = (reason: string) => {
    if (down === null && !closing)
      opts.log?.({ level: 'error', msg: 'redis unavailable; failing closed', redis: where, reason });
    down = reason;
  };
  // Without an 'error' listener ioredis would throw its connection errors at the process.
  redis.on('error', (e: Error) => unavailable(e.message));
  redis.on('close', () => unavailable('connection closed'));
  redis.on('ready', () => {
    stuck = false;
    if (down !== null) opts.log?.({ level: 'info', msg: 'redis available again', redis: where });
    down = null;
  });
  const ping = setInterval(() => {
    if (redis.status === 'ready')
      redis.ping().then(
        () => link.succeeded(),
        (e) => link.failed(e),
      );
  }, PING_MS);
  ping.unref();

  const link: RedisLink = {
    redis,
    ready: () => redis.status === 'ready' && !stuck,
    waitReady: (ms) =>
      redis.status === 'ready'
        ? Promise.resolve(true)
        : new Promise((resolve) => {
            const t = setTimeout(() => resolve(false), ms);
            redis.once('ready', () => {
              clearTimeout(t);
              resolve(true);
            });
          }),
    failed(e) {
      stuck = true;
      unavailable((e as Error)?.message ?? String(e));
    },
    succeeded() {
      stuck = false;
      if (down !== null && redis.status === 'ready') {
        opts.log?.({ level: 'info', msg: 'redis available again', redis: where });
        down = null;
      }
    },
    async close() {
      closing = true;
      clearInterval(ping);
      try {
        await redis.quit();
      } catch {
        redis.disconnect();
      }
    },
  };
  return link;
}

/** What Redis keeps across its restart: an append-only file, snapshots (save points) only, nothing, or unknown. */
export type Persistence = 'aof' | 'rdb' | 'none' | 'unknown';

const PERSISTENCE_WARNINGS: Record<Persistence, string | null> = {
  aof: null,
  rdb: 'redis keeps snapshots only (appendonly no): keys issued since its last save are lost if it stops unexpectedly; set appendonly yes',
  none: 'redis persists nothing (appendonly no, no save points): every API key is lost when it restarts (clients then get 401); set appendonly yes',
  unknown:
    'redis has appendonly off and refuses CONFIG GET save: whether it keeps the API keys across a restart is unknown; set appendonly yes',
};

/** What the log, /readyz and the keys command say of a Redis that may lose the keys, or null (aof). */
export const persistenceWarning = (p: Persistence): string | null => PERSISTENCE_WARNINGS[p];

/** Asks Redis what it persists: INFO persistence (aof_enabled), then CONFIG GET save where that is allowed. */
export async function redisPersistence(redis: Redis): Promise<Persistence> {
  const info = await redis.info('persistence');
  if (/^aof_enabled:1\r?$/m.test(info)) return 'aof';
  try {
    const [, save] = (await redis.config('GET', 'save')) as string[];
    if (save === undefined) return 'unknown'; // a managed Redis that hides the setting
    return save.trim() === '' ? 'none' : 'rdb';
  } catch {
    return 'unknown'; // CONFIG refused by an ACL, or renamed away
  }
}

/**
 * Checks what Redis persists on every (re)connection, warns in the log when it is not an append-only file (once per
 * change), and keeps the answer for /readyz. A check that fails (Redis went away again) keeps the last answer.
 */
export function watchPersistence(
  link: RedisLink,
  log?: Log,
): () => { persistence: Persistence | null; warning: string | null } {
  let persistence: Persistence | null = null;
  const check = () =>
    redisPersistence(link.redis).then(
      (p) => {
        const warning = persistenceWarning(p);
        if (p !== persistence && warning !== null) log?.({ level: 'warn', msg: warning, persistence: p });
        persistence = p;
      },
      () => {},
    );
  link.redis.on('ready', check);
  if (link.redis.status === 'ready') void check();
  return () => ({ persistence, warning: persistence === null ? null : persistenceWarning(persistence) });
}
