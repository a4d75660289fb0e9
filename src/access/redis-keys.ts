// The key store in Redis (REDIS_URL): the operator's create, list, disable, enable, revoke, as the SQLite store
// does them. A hash per key id (digest, name, created, expires, disabled, revoked) and a digest → id index.

import { commandLine } from '../../snapshot-format/commands.ts';
import { digestKeyBase64, generateKey } from './key-format.ts';
import { type KeyInfo, type KeyRow, KeyStoreError, keyInfo, newKeyRow } from './key-store.ts';
import type { RedisLink } from './redis.ts';

/**
 * Layout under the prefix (REDIS_PREFIX, default nlr:):
 *   <prefix>key:<id>   hash: digest (base64 SHA-256 of the key; the key itself is never stored), name, created,
 *                      and when set: expires (ISO-8601) with expires_ms (the same as a Unix time in ms, for
 *                      the admission script), disabled, revoked (ISO-8601 times)
 *   <prefix>digests    hash: digest → id, the index a request is looked up by
 */
const CREATE_LUA = `
local p, id, digest = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', p .. 'key:' .. id) == 1 or redis.call('HEXISTS', p .. 'digests', digest) == 1 then return 0 end
redis.call('HSET', p .. 'key:' .. id, 'digest', digest, 'name', ARGV[4], 'created', ARGV[5])
if ARGV[6] ~= '' then redis.call('HSET', p .. 'key:' .. id, 'expires', ARGV[6], 'expires_ms', ARGV[7]) end
redis.call('HSET', p .. 'digests', digest, id)
return 1
`;

/** disable / enable / revoke in one atomic step; {'missing'}, {'revoked'} or the key's fields after the change. */
const CHANGE_LUA = `
local k, action, at = ARGV[1] .. 'key:' .. ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', k) == 0 then return {'missing'} end
local revoked = redis.call('HGET', k, 'revoked')
if revoked and action ~= 'revoke' then return {'revoked'} end
if action == 'disable' and not redis.call('HGET', k, 'disabled') then redis.call('HSET', k, 'disabled', at) end
if action == 'enable' then redis.call('HDEL', k, 'disabled') end
if action == 'revoke' and not revoked then redis.call('HSET', k, 'revoked', at) end
return redis.call('HGETALL', k)
`;

interface WithScripts {
  nlrCreateKey(...args: string[]): Promise<number>;
  nlrChangeKey(...args: string[]): Promise<string[]>;
}

const rowOf = (id: string, h: Record<string, string>): KeyRow => ({
  id,
  name: h.name ?? '',
  created_at: h.created ?? '',
  expires_at: h.expires ?? null,
  disabled_at: h.disabled ?? null,
  revoked_at: h.revoked ?? null,
});

const pairs = (flat: string[]) => {
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]] = flat[i + 1];
  return h;
};

export function redisKeyStore(link: RedisLink, prefix: string) {
  link.redis.defineCommand('nlrCreateKey', { numberOfKeys: 0, lua: CREATE_LUA });
  link.redis.defineCommand('nlrChangeKey', { numberOfKeys: 0, lua: CHANGE_LUA });
  const redis = link.redis as unknown as WithScripts;
  return {
    async create(opts: { name: string; expiresAt?: string | null; now?: number }): Promise<KeyInfo & { key: string }> {
      const now = opts.now ?? Date.now();
      for (;;) {
        const key = generateKey();
        const row = newKeyRow({ ...opts, now });
        const expiresMs = row.expires_at === null ? '' : String(Date.parse(row.expires_at));
        const args = [prefix, row.id, digestKeyBase64(key), row.name, row.created_at, row.expires_at ?? '', expiresMs];
        if ((await redis.nlrCreateKey(...args)) === 1) return { ...keyInfo(row, now), key };
        // An id or digest already taken (about never with 95 and 238 random bits): draw again.
      }
    },
    async list(now = Date.now()): Promise<KeyInfo[]> {
      const ids = await link.redis.hvals(`${prefix}digests`);
      const hashes = await Promise.all(ids.map((id) => link.redis.hgetall(`${prefix}key:${id}`)));
      return ids
        .map((id, i) => rowOf(id, hashes[i]))
        .filter((r) => r.created_at !== '')
        .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
        .map((r) => keyInfo(r, now));
    },
    async change(id: string, action: 'disable' | 'enable' | 'revoke', now = Date.now()): Promise<KeyInfo> {
      const r = await redis.nlrChangeKey(prefix, id, action, new Date(now).toISOString());
      if (r[0] === 'missing')
        throw new KeyStoreError(`no key with id ${JSON.stringify(id)} (see ${commandLine('keys', 'list')})`);
      if (r[0] === 'revoked')
        throw new KeyStoreError(`key ${id} is revoked; revocation is final (create a new key instead)`);
      return keyInfo(rowOf(id, pairs(r)), now);
    },
    count: () => link.redis.hlen(`${prefix}digests`),
  };
}
