// API keys: the key format (prefix, secret, CRC32 checksum), SHA-256 digests, and Bearer authentication (one answer for every failure).
import { hash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** The fixed operator prefix plus the environment marker: every key starts with it (and secret scanners match on it). */
export const KEY_PREFIX = 'nlr_live_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const SECRET_LENGTH = 40; // 40 base62 characters ≈ 238 bits from the CSPRNG
const CHECKSUM_LENGTH = 6; // CRC32 < 62^6, so base62 in 6 characters always fits
/** The whole key: prefix, secret, checksum. Exported for docs and secret-scanner patterns. */
export const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${SECRET_LENGTH + CHECKSUM_LENGTH}}$`);

const KEY_IN_TEXT = new RegExp(`${KEY_PREFIX}[0-9A-Za-z]*`, 'g');
/** The text with whatever starts like a key cut to the prefix: a key sent in a path never reaches a log line. */
export const redactKeys = (text: string): string =>
  text.includes(KEY_PREFIX) ? text.replace(KEY_IN_TEXT, `${KEY_PREFIX}[redacted]`) : text;

function base62(n: number, width: number): string {
  let s = '';
  for (let i = 0; i < width; i++) {
    s = ALPHABET[n % 62] + s;
    n = Math.floor(n / 62);
  }
  return s;
}

const checksum = (body: string) => base62(crc32(body), CHECKSUM_LENGTH);

/** n base62 characters from the cryptographic random source (randomInt is CSPRNG-backed and unbiased). */
export function randomBase62(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[randomInt(62)];
  return s;
}

/** A new key: prefix + random secret + checksum of both. */
export function generateKey(): string {
  const body = KEY_PREFIX + randomBase62(SECRET_LENGTH);
  return body + checksum(body);
}

/** True when the string has the key shape and its checksum matches: typos and garbage are rejected without a lookup. */
export function isWellFormedKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === key.slice(-CHECKSUM_LENGTH);
}

/** The only form in which the service stores or looks up a key. */
export const digestKey = (key: string): Buffer => hash('sha256', key, 'buffer') as unknown as Buffer;
/** The digest as the server's in-memory key index holds it (base64): one hashing call, no Buffer. */
export const digestKeyBase64 = (key: string): string => hash('sha256', key, 'base64');

/**
 * The key from an Authorization header value, or null. Exactly "Bearer", one space, the key; no
 * quotes, no other whitespace. (The scheme is matched case-sensitively on purpose: the contract says
 * exactly this form, and one accepted spelling keeps every client's behaviour the same.)
 */
export function parseBearer(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^Bearer ([^\s"',;]+)$/.exec(header);
  return m ? m[1] : null;
}

/** What the key store returns for a digest: enough to decide, never the digest or key. */
export interface KeyRecord {
  id: string;
  expires_at: string | null;
  disabled_at: string | null;
  revoked_at: string | null;
}
/**
 * Looks a key up by its SHA-256 digest; throws (or rejects with) KeyStoreUnavailable when the store cannot be
 * read. A promise only when the answer has to wait for the store to be read again (./key-reader.ts lookupOrWait).
 */
export type KeyLookup = (digestBase64: string) => KeyRecord | undefined | Promise<KeyRecord | undefined>;

/** The digest of the key an Authorization header value carries, or null when it carries no well-formed key. */
export function presentedDigest(header: string | undefined): string | null {
  const key = parseBearer(header);
  return key !== null && isWellFormedKey(key) ? digestKeyBase64(key) : null;
}

/**
 * The key id for a usable key (given by its digest, presentedDigest), or null for every kind of failure (the
 * caller answers one 401), or a promise of it when the lookup answers with one. The lookup is by digest in the key
 * reader's map (./key-reader.ts), which re-reads the key store when the file changed, so a disabled or revoked key fails
 * on its very next request. No secret-dependent comparison happens here: the map lookup compares digests of the
 * presented key, which reveal nothing useful about stored keys.
 */
export function authenticate(
  digest: string | null,
  lookup: KeyLookup,
  now: number,
): string | null | Promise<string | null> {
  if (digest === null) return null;
  const rec = lookup(digest);
  return rec instanceof Promise ? rec.then((r) => usableId(r, now)) : usableId(rec, now);
}

function usableId(rec: KeyRecord | undefined, now: number): string | null {
  if (!rec || rec.revoked_at !== null || rec.disabled_at !== null) return null;
  if (rec.expires_at !== null && !(Date.parse(rec.expires_at) > now)) return null;
  return rec.id;
}
