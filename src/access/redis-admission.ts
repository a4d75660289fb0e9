// The admission of a request in Redis mode: one Lua script (EVALSHA) looks the key's digest up, checks its
// status and expiry and counts the request (or the address's failed authentication), in one round trip.

import { KeyStoreUnavailable } from '../errors.ts';
import type { Admission, Verdict } from './admission.ts';
import { addressBucket, isOverLimit, limitAnswers } from './rate-limit.ts';
import type { RedisLink } from './redis.ts';

/**
 * ARGV: prefix, digest (base64 SHA-256; '' for a key that is not well formed), address bucket, now (ms),
 * per-key limit, failure limit, window (ms). Keys: <prefix>digests (digest → id), <prefix>key:<id> (the key's
 * hash), <prefix>rl:key:<id> and <prefix>rl:addr:<bucket> (fixed windows: INCR, PEXPIRE on the first hit).
 * Returns {0, id, hits, ms left} for a usable key, {1} for a failure counted, {2, ms left} for an address over
 * its limit (not counted then). Standalone Redis: the script derives key names, which Redis Cluster refuses.
 */
export const ADMIT_LUA = `
local p = ARGV[1]
local id = false
if ARGV[2] ~= '' then id = redis.call('HGET', p .. 'digests', ARGV[2]) end
if id then
  local f = redis.call('HMGET', p .. 'key:' .. id, 'digest', 'disabled', 'revoked', 'expires_ms')
  if f[1] ~= ARGV[2] or f[2] or f[3] or (f[4] and tonumber(f[4]) <= tonumber(ARGV[4])) then id = false end
end
if not id then
  local k = p .. 'rl:addr:' .. ARGV[3]
  local hits = tonumber(redis.call('GET', k) or '0')
  if hits >= tonumber(ARGV[6]) then
    local ttl = redis.call('PTTL', k)
    if ttl < 0 then redis.call('PEXPIRE', k, ARGV[7]); ttl = tonumber(ARGV[7]) end
    return {2, ttl}
  end
  if redis.call('INCR', k) == 1 then redis.call('PEXPIRE', k, ARGV[7]) end
  return {1}
end
local k = p .. 'rl:key:' .. id
local hits = redis.call('INCR', k)
if hits == 1 then redis.call('PEXPIRE', k, ARGV[7]) end
local ttl = redis.call('PTTL', k)
if ttl < 0 then redis.call('PEXPIRE', k, ARGV[7]); ttl = tonumber(ARGV[7]) end
return {0, id, hits, ttl}
`;

type Reply = [0, string, number, number] | [1] | [2, number];
interface WithAdmit {
  nlrAdmit(...args: (string | number)[]): Promise<Reply>;
}

const unavailable = () => new KeyStoreUnavailable('redis did not answer');

export interface RedisAdmissionOptions {
  prefix: string;
  perKey: number;
  authFailures: number;
  windowSeconds: number;
}

/**
 * Keys and counters in Redis, shared by every replica: a revocation applies to the next request on each,
 * and the limits count in total. Redis unreachable or slower than the command timeout: a 503 at once.
 */
export function redisAdmission(link: RedisLink, o: RedisAdmissionOptions): Admission {
  // ioredis sends EVALSHA, and EVAL once when Redis answers NOSCRIPT (after a restart or SCRIPT FLUSH).
  link.redis.defineCommand('nlrAdmit', { numberOfKeys: 0, lua: ADMIT_LUA });
  const redis = link.redis as unknown as WithAdmit;
  const answers = limitAnswers(o.perKey, o.windowSeconds);
  const windowMs = o.windowSeconds * 1000;
  const verdict = (r: Reply): Verdict => {
    link.succeeded();
    if (r[0] === 0) {
      const a = answers.key(r[2], r[3]);
      return isOverLimit(a) ? { keyId: r[1], overLimit: a } : { keyId: r[1], headers: a.headers };
    }
    return r[0] === 2 ? { keyId: null, overLimit: answers.address(r[1]) } : { keyId: null };
  };
  const failed = (e: unknown): never => {
    link.failed(e);
    throw unavailable();
  };
  return (digest, address, now) => {
    let p: Promise<Reply>;
    try {
      p = redis.nlrAdmit(o.prefix, digest ?? '', addressBucket(address()), now, o.perKey, o.authFailures, windowMs);
    } catch (e) {
      return failed(e);
    }
    return p.then(verdict, failed);
  };
}
