// Per-key request limits and per-address failed-authentication limits (fixed windows, in memory, synchronous), with truthful Retry-After.
import { isIP } from 'node:net';

/** A request over a limit (the key's allowance, or its address's failed authentications): answer 429 with these headers. */
export interface OverLimit {
  retryAfter: number;
  headers: Record<string, string>;
}
/** A request the per-key limit let through: send these headers with the response. */
export interface Allowance {
  headers: Record<string, string>;
}

export interface Limits {
  /** Counts one request for the key; an OverLimit when its allowance for the window is used up. */
  consumeKey(keyId: string): Allowance | OverLimit;
  /** An OverLimit when this address already failed authentication too often in the window. */
  checkAddress(address: string): OverLimit | null;
  /** Records one failed authentication from this address. */
  recordFailure(address: string): void;
  /** Entries currently held (keys + addresses) whose window has not ended: for tests and diagnostics. */
  size(): number;
}

/**
 * Limits whose counters live in another process (the cluster's primary): the same decisions as Limits,
 * answered later. `failure` is checkAddress and recordFailure in one step.
 */
export interface SharedLimits {
  consumeKey(keyId: string): Promise<Allowance | OverLimit>;
  /** An OverLimit when the address already failed too often in the window (not recorded then); else records one failure. */
  failure(address: string): Promise<OverLimit | null>;
}

export const POLICY = 'per-key';

/**
 * Whole seconds until the window resets, rounded up, at least 1: a client that waits this long is let
 * through, because a window's counter is gone once its end has passed.
 */
const secondsUntil = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Counters in fixed windows: an entry's window starts with its first hit and lasts `windowMs`; a hit
 * after the end starts a new window. Synchronous on purpose: this runs on every request, and a
 * promise-based limiter (rate-limiter-flexible, used before) put two extra promise hops on each.
 * Memory stays bounded: an unref'd sweep every window deletes ended windows, so no entry outlives
 * two windows.
 */
export class FixedWindows {
  private readonly entries = new Map<string, { hits: number; end: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {
    this.sweeper = setInterval(() => this.sweep(), windowMs);
    this.sweeper.unref();
  }

  /** Adds `n` hits (0 only reads); the window's hits so far and the ms until it ends. */
  hit(key: string, n: number): { hits: number; msLeft: number } {
    const now = this.now();
    let e = this.entries.get(key);
    if (e === undefined || e.end <= now) {
      if (n === 0) return { hits: 0, msLeft: this.windowMs };
      e = { hits: 0, end: now + this.windowMs };
      this.entries.set(key, e);
    }
    e.hits += n;
    return { hits: e.hits, msLeft: e.end - now };
  }

  sweep(): void {
    const now = this.now();
    for (const [k, e] of this.entries) if (e.end <= now) this.entries.delete(k);
  }

  size(): number {
    this.sweep();
    return this.entries.size;
  }
}

/** The rate limits' window: the settings are per minute (tests shorten it). */
export const RATE_WINDOW_SECONDS = 60;

/**
 * Fixed windows of `windowSeconds` (RATE_WINDOW_SECONDS unless a test shortens it).
 * Per-key entries are bounded by the number of keys in the store (only authenticated requests reach
 * them); per-address entries are made only by failed authentications, and IPv6 addresses are grouped
 * by /64 (what one host usually holds), so one client cannot mint entries by rotating the low 64 bits.
 */
export function createLimits(opts: {
  perKey: number;
  authFailures: number;
  windowSeconds?: number;
  now?: () => number;
}): Limits {
  const duration = opts.windowSeconds ?? RATE_WINDOW_SECONDS;
  const now = opts.now ?? Date.now;
  const perKey = new FixedWindows(duration * 1000, now);
  const failures = new FixedWindows(duration * 1000, now);
  const answer = limitAnswers(opts.perKey, duration);

  return {
    consumeKey(keyId) {
      const { hits, msLeft } = perKey.hit(keyId, 1);
      return answer.key(hits, msLeft);
    },
    checkAddress(address) {
      const { hits, msLeft } = failures.hit(addressBucket(address), 0);
      return hits >= opts.authFailures ? answer.address(msLeft) : null;
    },
    recordFailure(address) {
      failures.hit(addressBucket(address), 1);
    },
    size: () => perKey.size() + failures.size(),
  };
}

/**
 * The answers to a count, wherever it was kept (this process, the cluster's primary, Redis): the per-key
 * allowance or OverLimit from the window's hits so far and the ms until it ends, and the failed-authentication
 * OverLimit. One place, so every mode sends the same headers.
 */
export function limitAnswers(perKey: number, windowSeconds: number) {
  const policy = `"${POLICY}";q=${perKey};w=${windowSeconds}`;
  const state = (remaining: number, ms: number) => ({
    'RateLimit-Policy': policy,
    RateLimit: `"${POLICY}";r=${remaining};t=${secondsUntil(ms)}`,
  });
  const overLimit = (ms: number, headers: Record<string, string> = {}): OverLimit => {
    const retryAfter = secondsUntil(ms);
    return { retryAfter, headers: { ...headers, 'Retry-After': String(retryAfter) } };
  };
  return {
    key: (hits: number, msLeft: number): Allowance | OverLimit =>
      hits > perKey ? overLimit(msLeft, state(0, msLeft)) : { headers: state(perKey - hits, msLeft) },
    address: (msLeft: number): OverLimit => overLimit(msLeft),
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
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export const isOverLimit = (x: Allowance | OverLimit): x is OverLimit => 'retryAfter' in x;
