// Admission: a request's key checked and counted against the limits, in each mode (this process, a cluster's
// primary); the verdict in its own terms, which the HTTP guard turns into an answer. Redis: redis-admission.ts.
import { authenticate, type KeyLookup } from './key-format.ts';
import { isOverLimit, type Limits, type OverLimit, type SharedLimits } from './rate-limit.ts';

/** What the key check and the limits decided for a request that needs a key. */
export interface Verdict {
  /** The key's id; null when the request carries no usable key (401, or 429 for its address). */
  keyId: string | null;
  /** A request let in: its remaining allowance (RateLimit headers). */
  headers?: Record<string, string>;
  /** Over a limit: the key's (keyId set) or its address's failed authentications (keyId null). */
  overLimit?: OverLimit;
}

/**
 * Checks a request's key (its digest: presentedDigest; null when it has none that is well formed) and counts it
 * against the limits. Synchronous when both live in this process;
 * a promise when the counters live elsewhere (the cluster's primary, Redis), or when the key's lookup waits for
 * the key store to be read again. An unavailable key store or counter store throws (or rejects with) a
 * DependencyUnavailable (src/errors.ts).
 */
export type Admission = (digest: string | null, address: () => string, now: number) => Verdict | Promise<Verdict>;

/**
 * Keys from the key reader, counters from `limits`. Failed authentications are limited per client address
 * (SPEC: "repeated failed authentication attempts may themselves be rate limited"); a valid key is served
 * from any address, so nobody can lock a key's owner out by failing from the same address (a shared NAT, a
 * proxy without TRUST_PROXY). Keys carry ~238 random bits: what the limit slows down is noise, not guessing.
 */
export function localAdmission(lookup: KeyLookup, limits: Limits): Admission {
  return (digest, address, now) => {
    // An unavailable key store (KeyStoreUnavailable) propagates as is; a lookup waiting for a re-read is a promise.
    const keyId = authenticate(digest, lookup, now);
    return keyId instanceof Promise ? keyId.then((id) => decide(id, address)) : decide(keyId, address);
  };
  function decide(keyId: string | null, address: () => string): Verdict {
    if (keyId === null) {
      const a = address();
      const blocked = limits.checkAddress(a);
      if (blocked) return { keyId: null, overLimit: blocked };
      limits.recordFailure(a);
      return { keyId: null };
    }
    const r = limits.consumeKey(keyId);
    return isOverLimit(r) ? { keyId, overLimit: r } : { keyId, headers: r.headers };
  }
}

/** Keys from this process's key reader, counters in another process (a cluster's primary): one message per request. */
export function sharedAdmission(lookup: KeyLookup, limits: SharedLimits): Admission {
  const decide = (keyId: string | null, address: () => string): Promise<Verdict> => {
    if (keyId === null)
      return limits.failure(address()).then((overLimit) => (overLimit ? { keyId, overLimit } : { keyId }));
    return limits
      .consumeKey(keyId)
      .then((r) => (isOverLimit(r) ? { keyId, overLimit: r } : { keyId, headers: r.headers }));
  };
  return (digest, address, now) => {
    const keyId = authenticate(digest, lookup, now);
    return keyId instanceof Promise ? keyId.then((id) => decide(id, address)) : decide(keyId, address);
  };
}
