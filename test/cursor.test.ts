// Paging cursors: the codec as a pure module, and over HTTP every bad cursor (tampered, expired, foreign scope,
// too long, from another secret) is a 400 that names the cursor; a good one continues the walk.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { mulberry32 } from '../generate/random.ts';
import { CURSOR_TTL_SECONDS, cursorCodec, hmacSha256 } from '../src/http/cursor.ts';
import { ApiError } from '../src/http/errors.ts';
import { parseRawQuery, QueryMemo, validateQuery } from '../src/http/query.ts';
import { SearchQuery } from '../src/routes/support/listing-query.ts';
import { startServer, useServer } from './support/server.ts';
import { assert400 } from './support/shapes.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

/** Replaces the character in the middle of a part of the cursor (payload or signature) by another one. */
function flip(cursor: string, part: 'payload' | 'signature'): string {
  const dot = cursor.indexOf('.');
  const i = part === 'payload' ? Math.floor(dot / 2) : dot + 1 + Math.floor((cursor.length - dot - 1) / 2);
  const c = cursor[i] === 'A' ? 'B' : 'A';
  return cursor.slice(0, i) + c + cursor.slice(i + 1);
}
const b64 = (s: string) => Buffer.from(s).toString('base64url');

function rejects(fn: () => unknown, re: RegExp = /cursor/) {
  assert.throws(fn, (e: unknown) => e instanceof ApiError && e.status === 400 && re.test(e.message));
}

describe('cursor codec (unit)', () => {
  const SECRET = 'unit-test-secret-0123456789';
  let t = Date.UTC(2026, 10, 1);
  const codec = cursorCodec(SECRET, () => t);
  const scope = codec.scope('/v1/listings', { locale: 'en', limit: 2, location_id: 'loc-ams' });

  it('signs with HMAC-SHA256: the same MAC as createHmac, for short, 64-byte and long keys and any ASCII text', () => {
    for (const secret of ['k', SECRET, 'x'.repeat(64), 'y'.repeat(65), 'ü-non-ascii-secret'.repeat(9)])
      for (const text of ['', 'a', 'eyJhIjoibHN0LTAwMiJ9', '~'.repeat(300)])
        assert.equal(
          hmacSha256(secret)(text),
          createHmac('sha256', secret).update(text).digest('base64url'),
          `${secret.length} ${text.length}`,
        );
  });
  it('gives the MAC createHmac gives for 3,000 seeded random keys (any Unicode, 0 to 200 characters) and ASCII texts', () => {
    const next = mulberry32(20261128);
    const rnd = (n: number) => Math.floor(next() * n);
    // Code points from ASCII to astral (lone surrogates left out: UTF-8 has no form for them).
    const char = () => {
      const c = [0x7f, 0x800, 0xd800, 0x110000][rnd(4)];
      const cp = rnd(c);
      return String.fromCodePoint(cp >= 0xd800 && cp < 0xe000 ? 0x41 : cp);
    };
    for (let i = 0; i < 3000; i++) {
      const secret = Array.from({ length: rnd(201) }, char).join('');
      const text = Array.from({ length: rnd(600) }, () => String.fromCharCode(rnd(128))).join('');
      assert.equal(
        hmacSha256(secret)(text),
        createHmac('sha256', secret).update(text).digest('base64url'),
        `case ${i}: key ${JSON.stringify(secret)}, text ${JSON.stringify(text)}`,
      );
    }
  });
  it('puts the MAC of its payload in every token it signs', () => {
    const token = codec.sign('lst-002', scope);
    const [payload, mac] = token.split('.');
    assert.equal(mac, createHmac('sha256', SECRET).update(payload).digest('base64url'));
  });
  it('round-trips the position for the same scope', () => {
    assert.equal(codec.verify(codec.sign('lst-002', scope), scope), 'lst-002');
  });
  it('binds the scope to endpoint, every filter value, locale and limit, ignoring the cursor and absent filters', () => {
    const base = { locale: 'en', limit: 2, location_id: 'loc-ams' };
    assert.equal(codec.scope('/v1/listings', { ...base, cursor: 'x', q: undefined }), scope);
    assert.equal(
      codec.scope('/v1/listings', { limit: 2, location_id: 'loc-ams', locale: 'en' }),
      scope,
      'parameter order does not matter',
    );
    for (const other of [
      { ...base, locale: 'nl' },
      { ...base, limit: 3 },
      { ...base, location_id: 'loc-dh' },
      { ...base, q: 'x' },
    ]) {
      assert.notEqual(codec.scope('/v1/listings', other), scope);
    }
    assert.notEqual(codec.scope('/v1/owners', base), scope);
  });
  it('rejects a cursor for another scope', () => {
    rejects(() => codec.verify(codec.sign('lst-002', scope), codec.scope('/v1/owners', { locale: 'en', limit: 2 })));
  });
  it('rejects a tampered payload or signature', () => {
    const c = codec.sign('lst-002', scope);
    rejects(() => codec.verify(flip(c, 'payload'), scope));
    rejects(() => codec.verify(flip(c, 'signature'), scope));
  });
  it('rejects a payload re-signed with another secret', () => {
    const payload = b64(JSON.stringify({ a: 'lst-999', s: scope, e: Math.floor(t / 1000) + 60 }));
    const sig = createHmac('sha256', 'another-secret-0123456789').update(payload).digest('base64url');
    rejects(() => codec.verify(`${payload}.${sig}`, scope));
  });
  it('rejects well-signed payloads of the wrong form', () => {
    const signed = (body: unknown) => {
      const p = b64(JSON.stringify(body));
      return `${p}.${createHmac('sha256', SECRET).update(p).digest('base64url')}`;
    };
    rejects(() => codec.verify(signed({ a: 5, s: scope, e: 9e9 }), scope));
    rejects(() => codec.verify(signed({ a: 'x', s: scope }), scope));
    rejects(() => codec.verify(signed(['x', scope, 9e9]), scope));
    rejects(() => codec.verify(signed(null), scope));
    rejects(() => codec.verify(signed(7), scope));
    // 1e400 parses as Infinity: a cursor that would never expire.
    const never = b64(`{"a":"x","s":"${scope}","e":1e400}`);
    rejects(() => codec.verify(`${never}.${createHmac('sha256', SECRET).update(never).digest('base64url')}`, scope));
    const p = b64('not json');
    rejects(() => codec.verify(`${p}.${createHmac('sha256', SECRET).update(p).digest('base64url')}`, scope));
  });
  it('accepts a cursor only as signed: not the other spellings of the same signature bytes', () => {
    const c = codec.sign('lst-9', scope);
    assert.equal(codec.verify(c, scope), 'lst-9');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(c.at(-1)!);
    // The 43rd character's low 2 bits are padding: these 3 decode to the same 32 bytes.
    for (let low = 0; low < 4; low++) {
      const other = alphabet[(last & ~3) | low];
      if (other !== c.at(-1)) rejects(() => codec.verify(c.slice(0, -1) + other, scope));
    }
  });
  it('rejects malformed cursors (no dot, empty parts, over 4096 characters)', () => {
    for (const c of ['abc', '.abc', 'abc.', '', `${'a'.repeat(5000)}.x`]) rejects(() => codec.verify(c, scope));
  });
  it('accepts a cursor until 24 hours after issue and rejects it after', () => {
    const start = t;
    const c = codec.sign('lst-002', scope);
    t = start + CURSOR_TTL_SECONDS * 1000 - 1000;
    assert.equal(codec.verify(c, scope), 'lst-002');
    t = start + CURSOR_TTL_SECONDS * 1000 + 1000;
    rejects(() => codec.verify(c, scope), /expired/);
    t = start;
  });
  it('keeps an issued cursor well under 4096 characters for a 120-character id', () => {
    assert.ok(codec.sign('x'.repeat(120), scope).length < 1000);
  });
});

describe('validated queries with a cursor (unit)', () => {
  const CURSOR = `${b64('{"a":"lst-000123","s":"4jT8mO2xQzK3PvXhYwFcBA","e":1794000000}')}.${'x'.repeat(43)}`;
  /** The query as the whole string's validation makes it, or its 400's message. */
  const direct = (search: string) => {
    try {
      return validateQuery(SearchQuery, parseRawQuery(search.length > 1 ? search.slice(1) : ''));
    } catch (e) {
      return (e as Error).message;
    }
  };
  const memoised = (memo: QueryMemo, search: string) => {
    try {
      return { ...memo.get(search) };
    } catch (e) {
      return (e as Error).message;
    }
  };

  it("is the whole query's validation, for the cursor anywhere and for every bad query", () => {
    const filters = 'location_id=loc_0013&furnishing=FURNISHED&max_price=1500';
    const searches = [
      `?cursor=${CURSOR}`,
      `?${filters}&cursor=${CURSOR}`,
      `?cursor=${CURSOR}&${filters}`,
      `?location_id=loc_0013&cursor=${CURSOR}&limit=50`,
      `?${filters}&&cursor=${CURSOR}&`,
      `?${filters}&cursor=${CURSOR}&cursor=${CURSOR}`, // repeated
      `?%63ursor=${CURSOR}&cursor=${CURSOR}`, // repeated, the first name escaped
      `?cursor=${CURSOR}&${filters}&%63ursor=abc`, // repeated, the last name escaped
      `?${filters}&cursor=${CURSOR.replace('-', '%2D')}`, // escaped: decoded by the whole parse
      `?${filters}&cursor=${CURSOR}&limit=0`, // a bad limit
      `?${filters}&cursor=${CURSOR}&colour=red`, // an unknown parameter
      `?min_price=900&max_price=100&cursor=${CURSOR}`, // min above max
      `?${filters}&cursor=`, // empty
      `?${filters}&cursor=${'a'.repeat(4097)}`, // too long
      `?q=acursor=1&cursor=${CURSOR}`, // "cursor=" inside another value
      `?${filters}&xcursor=${CURSOR}`,
    ];
    const memo = new QueryMemo(SearchQuery);
    for (let round = 0; round < 2; round++)
      for (const s of searches) assert.deepEqual(memoised(memo, s), direct(s), `round ${round}: ${s}`);
  });

  it('remembers the query without its cursor, so that the pages of a walk validate their filters once', () => {
    const memo = new QueryMemo(SearchQuery);
    const first = memo.get(`?location_id=loc_0013&cursor=${CURSOR}`);
    assert.equal(first.cursor, CURSOR);
    assert.equal(memo.size, 1, 'the query without its cursor is remembered');
    const base = memo.get('?location_id=loc_0013');
    assert.equal(memo.size, 1);
    assert.equal(base.cursor, undefined);
    assert.deepEqual({ ...first }, { ...base, cursor: CURSOR });
    // The same object each time: taken from the memo, not validated again.
    assert.equal(memo.get('?location_id=loc_0013'), base);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(base));
    const other = `${CURSOR.slice(0, -1)}y`;
    assert.equal(memo.get(`?location_id=loc_0013&cursor=${other}`).cursor, other);
  });
});

describe('cursors over HTTP', () => {
  let clock = Date.UTC(2026, 10, 1, 12);
  const server = useServer({}, { now: () => clock });

  const firstCursor = async (path = '/v1/listings?limit=2') => {
    const res = await server.get(path);
    assert.equal(res.status, 200);
    assert.equal(typeof res.body.pagination.next_cursor, 'string');
    return res.body.pagination.next_cursor as string;
  };
  const withCursor = (path: string, c: string) =>
    `${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(c)}`;

  it('continues the walk with the next page, and the same cursor gives the same page again', async () => {
    const c = await firstCursor();
    const a = await server.get(withCursor('/v1/listings?limit=2', c));
    const b = await server.get(withCursor('/v1/listings?limit=2', c));
    assert.equal(a.status, 200);
    assert.deepEqual(
      a.body.data.map((x: any) => x.id),
      ['lst-003', 'lst-007'],
    );
    assert.deepEqual(b.body.data, a.body.data);
  });
  it('returns 400 for a cursor with a flipped signature character', async () => {
    assert400(await server.get(withCursor('/v1/listings?limit=2', flip(await firstCursor(), 'signature'))), 'cursor');
  });
  it('returns 400 for a cursor with a flipped payload character', async () => {
    assert400(await server.get(withCursor('/v1/listings?limit=2', flip(await firstCursor(), 'payload'))), 'cursor');
  });
  it('returns 400 for a cursor that is not one (garbage, no signature, truncated)', async () => {
    const c = await firstCursor();
    for (const bad of [
      'abc',
      'abc.def',
      c.split('.')[0],
      c.slice(0, -5),
      `${c}x`,
      `${c}!`,
      `${c}==`,
      `${c} `,
      c.replace('.', '..'),
      `${c.split('.')[0]}.!${c.split('.')[1]}`,
    ]) {
      assert400(await server.get(withCursor('/v1/listings?limit=2', bad)), 'cursor');
    }
  });
  it('returns 400 for a cursor issued by a server with another secret', async () => {
    const other = await startServer({
      SNAPSHOT_PATH: (await fixtureSnapshot()).path,
      CURSOR_SECRET: 'another-cursor-secret-987654321',
    });
    try {
      const res = await other.get('/v1/listings?limit=2');
      assert400(await server.get(withCursor('/v1/listings?limit=2', res.body.pagination.next_cursor)), 'cursor');
    } finally {
      await other.close();
    }
  });
  it('without CURSOR_SECRET, warns and signs with a random secret per process (no built-in secret to forge with)', async () => {
    const env = { SNAPSHOT_PATH: (await fixtureSnapshot()).path, CURSOR_SECRET: '' };
    const [a, b] = [await startServer(env), await startServer(env)];
    try {
      for (const s of [a, b])
        assert.ok(
          s.logs.some((l) => l.level === 'warn' && /CURSOR_SECRET is not set/.test(String(l.msg))),
          'a warning names the setting',
        );
      assert.ok(!server.logs.some((l) => /CURSOR_SECRET/.test(String(l.msg))), 'no warning when it is set');
      const c = (await a.get('/v1/listings?limit=2')).body.pagination.next_cursor;
      assert.equal((await a.get(withCursor('/v1/listings?limit=2', c))).status, 200, 'the issuing process accepts it');
      assert400(await b.get(withCursor('/v1/listings?limit=2', c)), 'cursor');
    } finally {
      await a.close();
      await b.close();
    }
  });
  it('accepts a cursor just before 24 hours and returns 400 once it has expired', async () => {
    const start = clock;
    const c = await firstCursor();
    try {
      clock = start + 24 * 3600_000 - 5000;
      const fresh = await server.get(withCursor('/v1/listings?limit=2', c));
      assert.equal(fresh.status, 200);
      clock = start + 24 * 3600_000 + 5000;
      const res = await server.get(withCursor('/v1/listings?limit=2', c));
      assert400(res, 'cursor');
      assert.match(res.body.error.message, /expired/);
      // The answer's tag, sent back, does not turn the expired cursor into a 304.
      const tagged = await server.get(withCursor('/v1/listings?limit=2', c), {
        headers: { 'If-None-Match': fresh.headers.get('etag')! },
      });
      assert400(tagged, 'cursor');
      assert.match(tagged.body.error.message, /expired/);
    } finally {
      clock = start;
    }
  });
  it('returns 400 for a cursor used with a different filter', async () => {
    const c = await firstCursor('/v1/listings?limit=2');
    assert400(await server.get(withCursor('/v1/listings?limit=2&location_id=loc-ams', c)), 'cursor');
    const f = await firstCursor('/v1/listings?limit=2&location_id=loc-ams');
    assert400(await server.get(withCursor('/v1/listings?limit=2', f)), 'cursor'); // a filter dropped
    assert400(await server.get(withCursor('/v1/listings?limit=2&location_id=loc-nh', f)), 'cursor');
  });
  it('returns 400 for a cursor used with a different limit', async () => {
    const c = await firstCursor('/v1/listings?limit=2');
    assert400(await server.get(withCursor('/v1/listings?limit=3', c)), 'cursor');
    assert400(await server.get(withCursor('/v1/listings', c)), 'cursor');
  });
  it('returns 400 for a cursor used with a different locale', async () => {
    const c = await firstCursor('/v1/listings?limit=2');
    assert400(await server.get(withCursor('/v1/listings?limit=2&locale=nl', c)), 'cursor');
  });
  it('returns 400 for a /v1/listings cursor used on /v1/owners, /v1/locations and /v1/platforms', async () => {
    const c = await firstCursor('/v1/listings?limit=1');
    for (const path of ['/v1/owners?limit=1', '/v1/locations?limit=1', '/v1/platforms?limit=1']) {
      assert400(await server.get(withCursor(path, c)), 'cursor');
    }
  });
  it('returns 400 for an /v1/owners cursor used on /v1/listings', async () => {
    const c = await firstCursor('/v1/owners?limit=1');
    assert400(await server.get(withCursor('/v1/listings?limit=1', c)), 'cursor');
  });
  it('returns 400 for a cursor over 4096 characters', async () => {
    const c = await firstCursor();
    assert400(await server.get(withCursor('/v1/listings?limit=2', c + 'A'.repeat(4097 - c.length))), 'cursor');
  });
  it('treats an explicit locale=en as the same request as leaving it out, in any parameter order', async () => {
    const res = await server.get('/v1/listings?limit=1');
    const c = res.body.pagination.next_cursor;
    assert.equal((await server.get(withCursor('/v1/listings?limit=1&locale=en', c))).status, 200);
    const q = await firstCursor('/v1/listings?limit=1&q=balcony');
    assert.equal(
      (await server.get(withCursor('/v1/listings?q=balcony&limit=1', q))).status,
      200,
      'parameter order does not matter',
    );
  });
  it('treats /v1/listings/ (trailing slash, served as /v1/listings) as the same endpoint, both ways', async () => {
    const plain = await firstCursor('/v1/listings?limit=2');
    const slashed = await firstCursor('/v1/listings/?limit=2');
    const a = await server.get(withCursor('/v1/listings/?limit=2', plain));
    const b = await server.get(withCursor('/v1/listings?limit=2', slashed));
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    assert.deepEqual(
      a.body.data.map((x: any) => x.id),
      ['lst-003', 'lst-007'],
    );
    assert.deepEqual(b.body.data, a.body.data);
  });
  it('does not let a cursor change the filters it was issued for', async () => {
    const f = await firstCursor('/v1/listings?limit=1&location_id=loc-dh');
    const res = await server.get(withCursor('/v1/listings?limit=1&location_id=loc-dh', f));
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.map((x: any) => x.id),
      ['lst-008'],
    );
  });
});
