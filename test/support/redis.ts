// Debian's redis-server for the replica tests: one of a suite's own on a free port, its REDIS_URL, a link to it, and
// the settings of a replica that uses it.
import assert from 'node:assert/strict';
import { connectRedis, type RedisLink } from '../../src/access/redis.ts';
import { redisKeyStore } from '../../src/access/redis-keys.ts';
import { freePort } from './nginx.ts';
import { type Reply, startRedis } from './processes.ts';
import { fixtureSnapshot } from './snapshots.ts';

/** The replicas' shared cursor secret. */
export const SECRET = 'redis-test-cursor-secret-0123456789';
/** Redis's password: in REDIS_URL, and never in a log line. */
export const PASSWORD = 'redis-pw-7f3a9c';

/** REDIS_URL for the redis-server on `port`, as `user` (the default user unless given). */
export const urlOf = (port: number, user = '') => `redis://${user}:${PASSWORD}@127.0.0.1:${port}`;

/** A redis-server of the suite's own on a free port (with this persistence), and its REDIS_URL. */
export async function ownRedis(persistence?: 'none' | 'aof' | 'rdb') {
  const daemon = await startRedis(await freePort(), PASSWORD, undefined, persistence);
  return { daemon, url: urlOf(daemon.port) };
}

/** A link to Redis at `url`, once it answers. */
export async function linkTo(url: string): Promise<RedisLink> {
  const link = connectRedis(url, { name: 'test' });
  assert.ok(await link.waitReady(5000));
  return link;
}

/** Creates a key in Redis at `url` over a link of its own; with `save`, Redis writes it to its file (SAVE). */
export async function createKeyIn(url: string, name: string, save = false): Promise<string> {
  const link = await linkTo(url);
  try {
    const { key } = await redisKeyStore(link, 'nlr:').create({ name });
    if (save) await link.redis.save();
    return key;
  } finally {
    await link.close();
  }
}

/** A replica's settings on Redis at `url`: the shared cursor secret, behind a proxy, on the fixture's snapshot. */
export const replicaEnv = async (url: string, env: Record<string, string> = {}) => ({
  SNAPSHOT_PATH: (await fixtureSnapshot()).path,
  REDIS_URL: url,
  CURSOR_SECRET: SECRET,
  TRUST_PROXY: '1',
  ...env,
});

/** A keyed request's answer while Redis is unreachable: the API's 503 envelope, to retry in a second. */
export function assertRedisDown(r: Reply) {
  assert.equal(r.status, 503);
  assert.deepEqual(Object.keys(r.body.error), ['code', 'message', 'request_id']);
  assert.equal(r.body.error.code, 'service_unavailable');
  assert.equal(r.headers['retry-after'], '1');
}
