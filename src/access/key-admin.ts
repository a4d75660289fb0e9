// The operator's side of the key store, whichever it is: the SQLite file at KEYS_PATH, or Redis when REDIS_URL
// is set. Used by the keys command and by npm start's development key.
import { redactUrl } from '../config.ts';
import { changeKey, countKeys, createKey, type KeyInfo, KeyStoreError, listKeys, openKeyStore } from './key-store.ts';
import { redisKeyStore } from './redis-keys.ts';

export interface KeyAdmin {
  /** Where the keys are, for messages: the file, or the Redis URL without its password. */
  where: string;
  /** Why the keys may not outlive a restart of the store (a Redis without an append-only file), or null. */
  warning: string | null;
  create(opts: { name: string; expiresAt?: string | null; now?: number }): Promise<KeyInfo & { key: string }>;
  list(now?: number): Promise<KeyInfo[]>;
  change(id: string, action: 'disable' | 'enable' | 'revoke', now?: number): Promise<KeyInfo>;
  count(): Promise<number>;
  close(): Promise<void>;
}

export interface KeyStoreLocation {
  keysPath: string;
  redisUrl?: string;
  redisPrefix: string;
}

/** The operator's commands take longer than a request may: a key command waits up to 5 s for Redis. */
const ADMIN_TIMEOUT_MS = 5000;

/** Opens the key store; a file that is missing (without `create`) or a Redis that does not answer is a KeyStoreError. */
export async function openKeyAdmin(at: KeyStoreLocation, opts: { create: boolean }): Promise<KeyAdmin> {
  if (at.redisUrl !== undefined) {
    const where = redactUrl(at.redisUrl);
    let reason = 'no answer';
    // Loaded only when Redis is used: the Redis client is a sixth of a start-up's module evaluation.
    const { connectRedis, persistenceWarning, redisPersistence } = await import('./redis.ts');
    const link = connectRedis(at.redisUrl, {
      name: 'nlr-keys',
      commandTimeoutMs: ADMIN_TIMEOUT_MS,
      log: (l) => void (reason = String(l.reason ?? reason)),
    });
    if (!(await link.waitReady(ADMIN_TIMEOUT_MS))) {
      await link.close();
      throw new KeyStoreError(`cannot reach Redis at ${where} (REDIS_URL): ${reason}`);
    }
    const store = redisKeyStore(link, at.redisPrefix);
    // CONFIG GET save and INFO persistence, as the service asks them; a failure to ask is no reason to refuse.
    const warning = await redisPersistence(link.redis).then(persistenceWarning, () => null);
    return { where, warning, ...store, close: () => link.close() };
  }
  const db = openKeyStore(at.keysPath, opts);
  return {
    where: at.keysPath,
    warning: null,
    create: async (o) => createKey(db, o),
    list: async (now) => listKeys(db, now),
    change: async (id, action, now) => changeKey(db, id, action, now),
    count: async () => countKeys(db),
    close: async () => {
      db.close();
    },
  };
}
