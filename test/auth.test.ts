// Authentication, key-in-query refusal, rate limits and fail-closed key store, over HTTP against the real service.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs, { copyFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import {
  digestKey,
  digestKeyBase64,
  generateKey,
  isWellFormedKey,
  KEY_PATTERN,
  parseBearer,
} from '../src/access/key-format.ts';
import { KeyReader, KeyStoreUnavailable } from '../src/access/key-reader.ts';
import { changeKey, openKeyStore } from '../src/access/key-store.ts';
import { addressBucket, createLimits } from '../src/access/rate-limit.ts';
import { UNAUTHORIZED_MESSAGE } from '../src/http/guard.ts';
import { tempDir } from './support/files.ts';
import { issueKey, startServer, type TestServer } from './support/server.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let snapshotPath: string;
before(async () => {
  snapshotPath = (await buildTestSnapshot()).path;
});

function assertUnauthorized(r: { status: number; headers: Headers; body: any }, what: string) {
  assert.equal(r.status, 401, what);
  assert.equal(r.headers.get('www-authenticate'), 'Bearer', what);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'message', 'request_id'], what);
  assert.equal(r.body.error.code, 'unauthorized', what);
  assert.equal(r.body.error.message, UNAUTHORIZED_MESSAGE, what);
}

/** A GET over a raw connection, so that a header can be sent twice (fetch would merge the two). */
function rawGet(url: string, path: string, headerLines: string[]): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let data = '';
    const s = connect(Number(port), hostname, () =>
      s.write(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headerLines.map((h) => `${h}\r\n`).join('')}\r\n`,
      ),
    );
    s.on('data', (d) => {
      data += d;
    });
    s.on('error', reject);
    s.on('close', () => {
      const end = data.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(data.slice(0, end))?.[1] ?? 0);
      resolve({ status: Number(data.split(' ')[1]), body: data.slice(end + 4, end + 4 + length) });
    });
  });
}

const change = (keysPath: string, id: string, action: 'disable' | 'enable' | 'revoke') => {
  const db = openKeyStore(keysPath, { create: false });
  try {
    changeKey(db, id, action);
  } finally {
    db.close();
  }
};

describe('key format', () => {
  it('generates prefixed keys with a valid checksum and distinct secrets', () => {
    const a = generateKey();
    const b = generateKey();
    assert.match(a, KEY_PATTERN);
    assert.ok(a.startsWith('nlr_live_'));
    assert.equal(a.length, 'nlr_live_'.length + 40 + 6);
    assert.notEqual(a, b);
    assert.ok(isWellFormedKey(a));
  });

  it('rejects a key with any one character changed, without a lookup', () => {
    const k = generateKey();
    for (const i of [9, 20, k.length - 7, k.length - 1]) {
      const c = k[i] === 'A' ? 'B' : 'A';
      assert.equal(isWellFormedKey(k.slice(0, i) + c + k.slice(i + 1)), false, `position ${i}`);
    }
    assert.equal(isWellFormedKey(`xyz_live_${k.slice(9)}`), false);
    assert.equal(isWellFormedKey(`${k}A`), false);
  });

  it('parses only "Bearer <key>" with one space and no quotes', () => {
    assert.equal(parseBearer('Bearer abc'), 'abc');
    for (const bad of [
      undefined,
      '',
      'bearer abc',
      'Bearer  abc',
      'Bearer "abc"',
      "Bearer 'abc'",
      'Bearer abc ',
      ' Bearer abc',
      'Bearer',
      'Bearer ',
      'Basic abc',
      'Bearer\tabc',
      'Bearer a b',
    ]) {
      assert.equal(parseBearer(bad), null, JSON.stringify(bad));
    }
  });

  it('digests with SHA-256', () => {
    assert.equal(digestKey('x').toString('hex'), createHash('sha256').update('x').digest('hex'));
  });
});

describe('authentication', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ SNAPSHOT_PATH: snapshotPath, LOG_REQUESTS: '1' });
  });
  after(() => server.close());

  it('serves ping and the OpenAPI document without a key', async () => {
    assert.equal((await server.get('/v1/ping', { key: null })).status, 200);
    assert.equal((await server.get('/v1/openapi.json', { key: null })).status, 200);
  });

  it('serves data with a valid key, on GET and HEAD', async () => {
    const r = await server.get('/v1/listings/lst-001');
    assert.equal(r.status, 200);
    assert.equal(r.body.data.id, 'lst-001');
    assert.equal((await server.get('/v1/listings', { method: 'HEAD' })).status, 200);
  });

  it('answers every kind of bad key with the same 401', async () => {
    const expired = issueKey(server.keysPath, { expiresAt: '2020-01-01T00:00:00.000Z' });
    const disabled = issueKey(server.keysPath);
    change(server.keysPath, disabled.id, 'disable');
    const revoked = issueKey(server.keysPath);
    change(server.keysPath, revoked.id, 'revoke');
    const k = server.key;
    const flipped = k.slice(0, -1) + (k.at(-1) === 'A' ? 'B' : 'A');
    const cases: [string, Record<string, string>][] = [
      ['missing', {}],
      ['lowercase bearer', { Authorization: `bearer ${k}` }],
      ['two spaces', { Authorization: `Bearer  ${k}` }],
      ['quoted key', { Authorization: `Bearer "${k}"` }],
      ['tab instead of space', { Authorization: `Bearer\t${k}` }],
      ['two keys', { Authorization: `Bearer ${k} ${k}` }],
      ['Basic scheme', { Authorization: `Basic ${Buffer.from(`u:${k}`).toString('base64')}` }],
      ['no key', { Authorization: 'Bearer' }],
      ['wrong prefix', { Authorization: `Bearer abc_live_${k.slice(9)}` }],
      ['bad checksum', { Authorization: `Bearer ${flipped}` }],
      ['unknown key', { Authorization: `Bearer ${generateKey()}` }],
      ['expired key', { Authorization: `Bearer ${expired.key}` }],
      ['disabled key', { Authorization: `Bearer ${disabled.key}` }],
      ['revoked key', { Authorization: `Bearer ${revoked.key}` }],
    ];
    for (const [what, headers] of cases) {
      for (const path of ['/v1/listings', '/v1/listings/lst-001', '/v1/no-such-endpoint']) {
        assertUnauthorized(await server.get(path, { headers, key: null }), `${what} ${path}`);
      }
    }
  });
  it('answers 401 to two Authorization headers, whichever comes first (node would keep only the first)', async () => {
    for (const second of [`Bearer ${server.key}`, 'Basic abc']) {
      const r = await rawGet(server.url, '/v1/listings?limit=1', [
        `Authorization: Bearer ${server.key}`,
        `authorization: ${second}`,
      ]);
      assert.equal(r.status, 401, second);
      assert.equal(JSON.parse(r.body).error.code, 'unauthorized');
    }
    assert.equal(
      (await rawGet(server.url, '/v1/listings?limit=1', [`Authorization: Bearer ${server.key}`])).status,
      200,
      'one header is served',
    );
  });

  it('accepts a key whose expiry is in the future', async () => {
    const k = issueKey(server.keysPath, { expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    assert.equal((await server.get('/v1/listings', { key: k.key })).status, 200);
  });

  it('rejects a key on its next request after it is disabled or revoked while the server runs', async () => {
    const k = issueKey(server.keysPath);
    assert.equal((await server.get('/v1/listings', { key: k.key })).status, 200);
    change(server.keysPath, k.id, 'disable');
    assertUnauthorized(await server.get('/v1/listings', { key: k.key }), 'disabled');
    change(server.keysPath, k.id, 'enable');
    assert.equal((await server.get('/v1/listings', { key: k.key })).status, 200);
    change(server.keysPath, k.id, 'revoke');
    assertUnauthorized(await server.get('/v1/listings', { key: k.key }), 'revoked');
    assert.equal((await server.get('/v1/listings')).status, 200, 'other keys unaffected');
  });

  it('judges every request on a keep-alive connection by its own header (the digest is remembered per connection)', async () => {
    const k2 = issueKey(server.keysPath);
    const k3 = issueKey(server.keysPath);
    const flipped = k3.key.slice(0, -1) + (k3.key.at(-1) === 'A' ? 'B' : 'A');
    const { port } = new URL(server.url);
    const s = connect(Number(port), '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
    let buffered = '';
    s.on('data', (d) => {
      buffered += d;
    });
    /** One request on the connection, and its answer's status and request id. */
    const send = async (auth: string | null) => {
      s.write(
        `GET /v1/listings?limit=1 HTTP/1.1\r\nHost: x\r\n${auth === null ? '' : `Authorization: ${auth}\r\n`}\r\n`,
      );
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? -1);
        if (end !== -1 && length >= 0 && buffered.length >= end + 4 + length) {
          const head = buffered.slice(0, end);
          buffered = buffered.slice(end + 4 + length);
          return { status: Number(head.split(' ')[1]), id: /\r\nx-request-id: (\S+)/i.exec(head)![1] };
        }
        await sleep(2);
      }
    };
    const keyOf = (id: string) => (server.logs.find((l) => l.request_id === id)?.key_id as string | undefined) ?? null;
    const steps: [string | null, number, string | null][] = [
      [`Bearer ${k2.key}`, 200, k2.id],
      [`Bearer ${k3.key}`, 200, k3.id],
      [`Bearer ${flipped}`, 401, null],
      [`Bearer ${k3.key}`, 200, k3.id],
      [null, 401, null],
      [`Bearer ${k2.key}`, 200, k2.id],
    ];
    const seen: [number, string | null][] = [];
    for (const [auth] of steps) {
      const r = await send(auth);
      await sleep(5); // the log line is written when the response closes
      seen.push([r.status, keyOf(r.id)]);
    }
    assert.deepEqual(
      seen,
      steps.map(([, status, id]) => [status, id]),
    );
    change(server.keysPath, k2.id, 'revoke');
    assert.equal((await send(`Bearer ${k2.key}`)).status, 401, 'the same header again, after a revoke');
    assert.equal((await send(`Bearer ${k3.key}`)).status, 200);
    s.destroy();
  });

  it('sees every change, also several within one file-timestamp tick (the server keeps keys in memory)', async () => {
    // File timestamps advance in clock ticks of a few ms, and an UPDATE does not change the file size:
    // a reader that trusted stat alone would miss the second of two quick changes.
    const k = issueKey(server.keysPath);
    for (let i = 0; i < 20; i++) {
      change(server.keysPath, k.id, 'disable');
      assertUnauthorized(await server.get('/v1/listings', { key: k.key }), `disabled, round ${i}`);
      change(server.keysPath, k.id, 'enable');
      assert.equal((await server.get('/v1/listings', { key: k.key })).status, 200, `enabled, round ${i}`);
    }
    const fresh = issueKey(server.keysPath);
    assert.equal(
      (await server.get('/v1/listings', { key: fresh.key })).status,
      200,
      'a key created while running works at once',
    );
  });

  it('refuses a key in the query string with 400, with or without a header', async () => {
    // Percent-encoded spellings too: %6Bey is key, to%6Ben is token.
    for (const name of [
      'api_key',
      'apikey',
      'key',
      'token',
      'access_token',
      'API_KEY',
      '%6Bey',
      'to%6Ben',
      'Api%5FKey',
    ]) {
      for (const key of [null, undefined]) {
        const r = await server.get(`/v1/listings?${name}=${server.key}`, { key });
        assert.equal(r.status, 400, `${name} ${key}`);
        assert.equal(r.body.error.code, 'invalid_request');
        assert.match(r.body.error.message, /Authorization: Bearer/);
        assert.ok(!r.text.includes(server.key), 'the key is not echoed');
      }
    }
    assert.equal((await server.get(`/v1/ping?token=${server.key}`, { key: null })).status, 400);
  });

  it('logs the key id and never a key', async () => {
    const bad = generateKey();
    await server.get('/v1/listings');
    await server.get('/v1/listings', { key: bad });
    await server.get(`/v1/listings?api_key=${server.key}`);
    // A key pasted into a path: 404 (or 401 without a key), and neither the answer nor the log line repeats it.
    // Or anywhere else a message quotes what was sent: a docs file's path, a query value or a parameter's name.
    const quoted = [
      `/docs/assets/0/${server.key}`,
      `/v1/listings?limit=${server.key}`,
      `/v1/listings?locale=${server.key}`,
      `/v1/ping?${server.key}=1`,
      `/v1/listings/stats?property_type=x&${server.key}`,
    ];
    for (const path of [
      `/v1/listings/${server.key}`,
      `/${server.key}`,
      `/v1/listings/${server.key}/similar`,
      ...quoted,
    ])
      for (const key of [undefined, null]) {
        const r = await server.get(path, { key });
        assert.ok([400, 401, 404].includes(r.status), `${path}: ${r.status}`);
        assert.ok(!r.text.includes(server.key.slice(9, 19)), `${path}: the answer does not repeat it: ${r.text}`);
      }
    assert.ok(server.logs.some((l) => l.path === '/v1/listings/nlr_live_[redacted]/similar'));
    const text = JSON.stringify(server.logs);
    assert.ok(!text.includes(server.key) && !text.includes(server.key.slice(9, 49)), 'no key or secret in the logs');
    assert.ok(!text.includes(bad.slice(9, 49)));
    assert.ok(server.logs.some((l) => l.key_id === server.keyId && l.status === 200));
  });
});

describe('rate limits', () => {
  it('answers 429 with a truthful Retry-After once a key used its allowance, and counts down RateLimit', async () => {
    const server = await startServer(
      { SNAPSHOT_PATH: snapshotPath, RATE_LIMIT_PER_MINUTE: '3' },
      { rateWindowSeconds: 2 },
    );
    try {
      const other = issueKey(server.keysPath);
      for (const left of [2, 1, 0]) {
        const r = await server.get('/v1/listings?limit=1');
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('ratelimit-policy'), '"per-key";q=3;w=2');
        assert.match(r.headers.get('ratelimit')!, new RegExp(`^"per-key";r=${left};t=[12]$`));
      }
      const r = await server.get('/v1/listings?limit=1');
      assert.equal(r.status, 429);
      assert.equal(r.body.error.code, 'rate_limited');
      const wait = Number(r.headers.get('retry-after'));
      assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 2, `Retry-After ${wait}`);
      assert.match(r.headers.get('ratelimit')!, /^"per-key";r=0;t=[12]$/);
      assert.equal((await server.get('/v1/listings?limit=1', { key: other.key })).status, 200, 'limits are per key');
      assert.equal((await server.get('/v1/ping', { key: null })).status, 200, 'ping is not limited');
      await sleep(wait * 1000);
      assert.equal((await server.get('/v1/listings?limit=1')).status, 200, 'after Retry-After the key gets through');
    } finally {
      await server.close();
    }
  });

  it('answers 429 to failed authentications from an address after too many, until Retry-After; a valid key is still served', async () => {
    const server = await startServer(
      { SNAPSHOT_PATH: snapshotPath, AUTH_FAILURES_PER_MINUTE: '2', TRUST_PROXY: '1' },
      { rateWindowSeconds: 2 },
    );
    try {
      // The proxy appends the address it saw; the entries before it are the client's to choose.
      const from = (ip: string, spoof = '198.18.0.99') => ({
        'X-Forwarded-For': `${spoof}, ${ip}`,
        Authorization: 'Bearer nope',
      });
      assertUnauthorized(await server.get('/v1/listings', { headers: from('203.0.113.7') }), 'first');
      assertUnauthorized(
        await server.get('/v1/listings', { headers: from('203.0.113.7', '192.0.2.1') }),
        'second (another spoofed entry counts for the same address)',
      );
      const r = await server.get('/v1/listings', { headers: from('203.0.113.7', '192.0.2.2') });
      assert.equal(r.status, 429);
      assert.equal(r.body.error.code, 'rate_limited');
      const wait = Number(r.headers.get('retry-after'));
      assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 2, `Retry-After ${wait}`);
      assert.equal(
        (await server.get('/v1/listings', { headers: { 'X-Forwarded-For': '203.0.113.7' } })).status,
        200,
        'a valid key from the blocked address is served',
      );
      assert.equal(
        (await server.get('/v1/listings', { headers: { 'X-Forwarded-For': '203.0.113.7, 198.51.100.1' } })).status,
        200,
        'another address is unaffected',
      );
      assertUnauthorized(
        await server.get('/v1/listings', { headers: from('198.51.100.1', '203.0.113.7') }),
        'naming the blocked address first does not aim the block at it',
      );
      assert.equal(
        (await server.get('/v1/ping', { key: null, headers: { 'X-Forwarded-For': '203.0.113.7' } })).status,
        200,
        'ping stays public',
      );
      await sleep(wait * 1000);
      assertUnauthorized(
        await server.get('/v1/listings', { headers: from('203.0.113.7') }),
        'after Retry-After a failure is a 401 again',
      );
    } finally {
      await server.close();
    }
  });

  it('keeps memory bounded: entries vanish when their window ends', async () => {
    const limits = createLimits({ perKey: 5, authFailures: 5, windowSeconds: 0.2 });
    for (let i = 0; i < 2000; i++) await limits.recordFailure(`10.${i >> 8}.${i & 255}.1`);
    for (let i = 0; i < 500; i++) await limits.consumeKey(`key_${i}`);
    assert.equal(limits.size(), 2500);
    await sleep(400);
    assert.equal(limits.size(), 0);
  });

  it('groups IPv6 addresses by /64 and unwraps IPv4-mapped addresses', () => {
    assert.equal(addressBucket('2001:db8:1:2:aaaa::1'), addressBucket('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
    assert.notEqual(addressBucket('2001:db8:1:2::1'), addressBucket('2001:db8:1:3::1'));
    assert.equal(addressBucket('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(addressBucket('192.0.2.1'), '192.0.2.1');
  });
});

describe('fail closed: the key store', () => {
  it('answers 503 while the key store is missing or garbage, and recovers when it is back', async () => {
    const server = await startServer({ SNAPSHOT_PATH: snapshotPath }, { keysRetryMs: 50 });
    try {
      const backup = `${tempDir()}/keys.bak`;
      copyFileSync(server.keysPath, backup);
      const unavailable = async (what: string) => {
        const r = await server.get('/v1/listings');
        assert.equal(r.status, 503, what);
        assert.equal(r.body.error.code, 'service_unavailable', what);
        assert.match(r.headers.get('retry-after') ?? '', /^\d+$/, what);
        assert.equal((await server.get('/v1/ping', { key: null })).status, 200, `${what}: ping still answers`);
      };

      rmSync(server.keysPath);
      await unavailable('deleted');
      await unavailable('still deleted');
      copyFileSync(backup, server.keysPath);
      await sleep(60);
      assert.equal((await server.get('/v1/listings')).status, 200, 'recovered after restore');

      writeFileSync(server.keysPath, Buffer.alloc(8192, 0x41)); // garbage in place (same inode)
      await unavailable('garbage');
      await sleep(60);
      await unavailable('garbage, retried');
      writeFileSync(server.keysPath, readFileSync(backup));
      await sleep(60);
      assert.equal((await server.get('/v1/listings')).status, 200, 'recovered after rewrite');
      assert.ok(server.logs.some((l) => l.msg === 'key store unavailable; failing closed'));

      // Switched to WAL by hand: the change counter no longer tracks revocations, so the store is refused.
      const journal = (mode: string) => {
        const db = new Database(server.keysPath);
        db.pragma(`journal_mode = ${mode}`);
        db.close();
      };
      journal('WAL');
      await unavailable('WAL mode');
      assert.ok(
        server.logs.some((l) => String(l.reason ?? '').includes('WAL mode')),
        'the log says why',
      );
      journal('DELETE');
      await sleep(60);
      assert.equal((await server.get('/v1/listings')).status, 200, 'recovered in rollback mode');
    } finally {
      await server.close();
    }
  });

  it('sees a change written in place on the very next lookup, and a file renamed into place from the next turn on (one stat per turn)', async () => {
    const dir = tempDir();
    const path = `${dir}/keys.db`;
    const k = issueKey(path);
    const k2 = issueKey(path);
    const digest = digestKeyBase64(k.key);
    const turn = () => new Promise((r) => setImmediate(r));
    // Counts the stats of the key store (fileIdentity's statSync, seen through the synced ESM binding).
    let stats = 0;
    const realStat = fs.statSync;
    const writable = fs as { statSync: typeof fs.statSync };
    writable.statSync = ((...a: Parameters<typeof fs.statSync>) => {
      if (a[0] === path) stats++;
      return realStat(...a);
    }) as typeof fs.statSync;
    syncBuiltinESMExports();
    const reader = new KeyReader(path, { retryMs: 0 });
    try {
      // What the keys command does, a write in place, made fast (an open connection, no fsync) so that
      // the lookups around it come within microseconds of each other, well inside one turn.
      const writer = openKeyStore(path, { create: false });
      writer.pragma('synchronous = OFF');
      try {
        assert.equal(reader.lookup(digest)?.revoked_at, null);
        changeKey(writer, k.id, 'revoke');
        assert.notEqual(
          reader.lookup(digest)?.revoked_at,
          null,
          'the lookup right after the commit, in the same turn, sees the revocation',
        );
        changeKey(writer, k2.id, 'disable');
        assert.notEqual(reader.lookup(digestKeyBase64(k2.key))?.disabled_at, null, 'and a disable');
      } finally {
        writer.close();
      }
      stats = 0;
      for (let i = 0; i < 5; i++) reader.lookup(digest);
      assert.equal(stats, 0, 'no more stats in this turn: writes in place are seen by the change counter');
      await turn();
      for (let i = 0; i < 5; i++) reader.lookup(digest);
      assert.equal(stats, 1, 'one stat for the lookups of the next turn');

      const other = `${dir}/other.db`; // another store renamed into place (a restored backup): a new inode
      const k3 = issueKey(other);
      renameSync(other, path);
      await turn();
      assert.equal(reader.lookup(digestKeyBase64(k3.key))?.id, k3.id, 'the next turn reads the new file');
      assert.equal(reader.lookup(digest), undefined, 'and forgets the old one');

      const third = `${dir}/third.db`; // a turn that lasts: the stat is reused for less than a millisecond
      const k4 = issueKey(third);
      reader.lookup(digest);
      renameSync(third, path);
      const until = performance.now() + 2;
      while (performance.now() < until);
      assert.equal(
        reader.lookup(digestKeyBase64(k4.key))?.id,
        k4.id,
        'the same turn, 2 ms later, reads the renamed file',
      );

      rmSync(path);
      await turn();
      assert.throws(
        () => reader.lookup(digest),
        (e) => e instanceof KeyStoreUnavailable,
        'a deleted store fails closed on the next turn',
      );
      assert.throws(
        () => reader.lookup(digest),
        (e) => e instanceof KeyStoreUnavailable,
        'and within the same turn too',
      );
      reader.close();
      assert.throws(
        () => reader.lookup(digest),
        (e) => e instanceof KeyStoreUnavailable,
        'a closed reader fails closed, not with a TypeError',
      );
    } finally {
      reader.close();
      (fs as { statSync: typeof fs.statSync }).statSync = realStat;
      syncBuiltinESMExports();
    }
  });

  it('goes on serving the open snapshot (not 500) while its file is missing, with a valid key', async () => {
    const snap = (await buildTestSnapshot()).path;
    const server = await startServer({ SNAPSHOT_PATH: snap, SNAPSHOT_CHECK_MS: '1' });
    try {
      rmSync(snap);
      await sleep(5);
      const r = await server.get('/v1/listings');
      assert.equal(r.status, 200);
      assert.equal(r.body.data.length > 0, true);
    } finally {
      await server.close();
    }
  });

  it('creates an empty key store at start-up when none exists, and refuses a file that is not a key store', async () => {
    const { startService } = await import('../src/service/server.ts');
    const { loadConfig } = await import('../src/config.ts');
    const dir = tempDir();
    const base = { HOST: '127.0.0.1', PORT: '0', LOG_REQUESTS: '0', SNAPSHOT_PATH: snapshotPath };
    const s = await startService(loadConfig({ ...base, KEYS_PATH: `${dir}/new/keys.db` }), { log: () => {} });
    try {
      const r = await fetch(`${s.url}/v1/listings`);
      assert.equal(r.status, 401);
    } finally {
      await s.close();
    }
    await assert.rejects(
      startService(loadConfig({ ...base, KEYS_PATH: snapshotPath }), { log: () => {} }),
      /is a snapshot, not a key store/,
    );
    await assert.rejects(
      startService(loadConfig({ ...base, KEYS_PATH: dir }), { log: () => {} }),
      /is a folder; KEYS_PATH names the key store's file/,
    );
  });
});
