// Opaque paging cursors: {after, scope, exp} signed with HMAC-SHA256; any bad cursor is a 400.
import { createHash, hash, timingSafeEqual } from 'node:crypto';
import { badRequest } from './errors.ts';

export const CURSOR_TTL_SECONDS = 24 * 60 * 60;
const MAX_CURSOR = 4096;
/** base64url payload, a dot, and the 32-byte HMAC as 43 base64url characters (no padding). */
const CURSOR_FORM = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/;

export interface CursorCodec {
  /** A digest of everything a cursor is bound to: endpoint, filters, locale, limit. */
  scope(endpoint: string, params: Record<string, unknown>): string;
  sign(after: string, scope: string): string;
  /** The id to continue after; throws 400 for a malformed, tampered, expired or foreign-scope cursor. */
  verify(cursor: string, scope: string): string;
}

/**
 * HMAC-SHA256 (RFC 2104) of ASCII text with a fixed key, as base64url: the keyed pads are made once, and each MAC
 * is two one-shot hashes. Why: createHmac builds a native object per MAC, a tenth of a page of owners
 * (docs/performance.md); test/cursor.test.ts compares the two on random input.
 */
export function hmacSha256(secret: string): (ascii: string) => string {
  let key = Buffer.from(secret, 'utf8');
  if (key.length > 64) key = createHash('sha256').update(key).digest();
  const block = Buffer.alloc(64);
  key.copy(block);
  const pad = (x: number) => Buffer.from(block.map((b) => b ^ x)).toString('latin1');
  const inner = pad(0x36);
  const outer = pad(0x5c);
  return (ascii) =>
    hash(
      'sha256',
      Buffer.from(outer + hash('sha256', Buffer.from(inner + ascii, 'latin1'), 'binary'), 'latin1'),
      'base64url',
    );
}

export function cursorCodec(secret: string, now: () => number = Date.now): CursorCodec {
  // The MAC as the token holds it (base64url); the payload is base64url text, so ASCII.
  const mac = hmacSha256(secret);
  const invalid = () =>
    badRequest('Parameter "cursor" is invalid or was issued for a different request; restart without a cursor.');
  return {
    scope(endpoint, params) {
      // A route serves /v1/listings/ as /v1/listings (patternOf): both are one endpoint to a cursor too.
      if (endpoint.length > 1 && endpoint.endsWith('/')) endpoint = endpoint.slice(0, -1);
      const keys = Object.keys(params).sort();
      const entries: [string, unknown][] = [];
      for (const k of keys) if (k !== 'cursor' && params[k] !== undefined) entries.push([k, params[k]]);
      const canonical = JSON.stringify([endpoint, entries]);
      return hash('sha256', canonical, 'base64url').slice(0, 22);
    },
    sign(after, scope) {
      const payload = Buffer.from(
        JSON.stringify({ a: after, s: scope, e: Math.floor(now() / 1000) + CURSOR_TTL_SECONDS }),
      ).toString('base64url');
      const token = `${payload}.${mac(payload)}`;
      if (token.length > MAX_CURSOR) throw new Error('cursor too long'); // ids are ≤ 120 chars, so this cannot happen
      return token;
    },
    verify(cursor, scope) {
      // Exactly the form sign() writes: base64url decoding skips characters outside the alphabet, so
      // "<cursor>!" or "<cursor>==" would otherwise be accepted as the same cursor.
      if (cursor.length > MAX_CURSOR || !CURSOR_FORM.test(cursor)) throw invalid();
      const dot = cursor.indexOf('.');
      const payload = cursor.slice(0, dot);
      // Compared as text: the last of the 43 characters carries 4 bits, so 4 spellings decode to the same
      // bytes, and only the one sign() wrote is the cursor. In constant time; CURSOR_FORM made both 43 bytes long.
      if (!timingSafeEqual(Buffer.from(cursor.slice(dot + 1), 'latin1'), Buffer.from(mac(payload), 'latin1')))
        throw invalid();
      let body: { a?: unknown; s?: unknown; e?: unknown } | null;
      try {
        body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      // Only what sign() writes: an object with a string id and scope and a finite expiry (JSON's 1e400 is Infinity).
      if (
        typeof body !== 'object' ||
        body === null ||
        typeof body.a !== 'string' ||
        typeof body.s !== 'string' ||
        typeof body.e !== 'number' ||
        !Number.isFinite(body.e)
      )
        throw invalid();
      if (body.s !== scope)
        throw badRequest(
          'Parameter "cursor" was issued for a different endpoint, filter set, locale or limit; restart without a cursor.',
        );
      if (body.e * 1000 < now())
        throw badRequest('Parameter "cursor" has expired (cursors live 24 hours); restart without a cursor.');
      return body.a;
    },
  };
}
