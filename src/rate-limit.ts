// Per-key request limits and per-address failed-authentication limits (rate-limiter-flexible, in memory), with truthful Retry-After.
import { isIP } from 'node:net';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** A request the limits refused: answer 429 with these headers. */
export interface Refusal { retryAfter: number; headers: Record<string, string> }
/** A request the per-key limit let through: send these headers with the response. */
export interface Allowance { headers: Record<string, string> }

export interface Limits {
  /** Counts one request for the key; a Refusal when its allowance for the window is used up. */
  consumeKey(keyId: string): Promise<Allowance | Refusal>;
  /** A Refusal when this address already failed authentication too often in the window. */
  checkAddress(address: string): Promise<Refusal | null>;
  /** Records one failed authentication from this address. */
  recordFailure(address: string): Promise<void>;
  /** Entries currently held (keys + addresses): for tests and diagnostics. */
  size(): number;
}

export const POLICY = 'per-key';

/**
 * Whole seconds until the window resets, rounded up, at least 1: a client that waits this long is let
 * through, because a fixed window's counter is gone once its expiry has passed.
 */
const secondsUntil = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Fixed windows of `windowSeconds` (60 in production: the settings are per minute; tests shorten it).
 *
 * Memory stays bounded: RateLimiterMemory keeps one entry per key or address seen in the current
 * window and deletes it with an unref'd timer when the window ends, so entries never outlive their
 * window. Per-key entries are bounded by the number of keys in the store (only authenticated
 * requests reach it); per-address entries are made only by failed authentications, and IPv6
 * addresses are grouped by /64 (what one host usually holds), so one client cannot mint entries
 * by rotating the low 64 bits.
 */
export function createLimits(opts: { perKey: number; authFailures: number; windowSeconds?: number }): Limits {
  const duration = opts.windowSeconds ?? 60;
  const perKey = new RateLimiterMemory({ points: opts.perKey, duration, keyPrefix: 'key' });
  const failures = new RateLimiterMemory({ points: opts.authFailures, duration, keyPrefix: 'addr' });
  const policy = `"${POLICY}";q=${opts.perKey};w=${duration}`;
  const state = (remaining: number, ms: number) => ({
    'RateLimit-Policy': policy,
    RateLimit: `"${POLICY}";r=${remaining};t=${secondsUntil(ms)}`,
  });

  return {
    async consumeKey(keyId) {
      try {
        const r = await perKey.consume(keyId);
        return { headers: state(r.remainingPoints, r.msBeforeNext) };
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        const retryAfter = secondsUntil(e.msBeforeNext);
        return { retryAfter, headers: { ...state(0, e.msBeforeNext), 'Retry-After': String(retryAfter) } };
      }
    },
    async checkAddress(address) {
      const r = await failures.get(addressBucket(address));
      if (r === null || r.consumedPoints < opts.authFailures || r.msBeforeNext <= 0) return null;
      const retryAfter = secondsUntil(r.msBeforeNext);
      return { retryAfter, headers: { 'Retry-After': String(retryAfter) } };
    },
    async recordFailure(address) {
      await failures.penalty(addressBucket(address));
    },
    size: () => perKey.dump().storage.length + failures.dump().storage.length,
  };
}

/** The unit an address limit applies to: the IPv4 address, or the /64 network of an IPv6 address. */
export function addressBucket(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (isIP(address) !== 6) return address;
  const [head, tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const width = (gs: string[]) => gs.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0); // a trailing dotted IPv4 is two groups
  const groups = address.includes('::') ? [...h, ...Array(8 - width(h) - width(t)).fill('0'), ...t] : h;
  return groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':') + '::/64';
}

export const isRefusal = (x: Allowance | Refusal): x is Refusal => 'retryAfter' in x;
