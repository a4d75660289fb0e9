// Authentication over HTTP against the real service: the key format, every kind of bad key the same 401, a key
// changed while the server runs, a key in the query refused, and no key ever logged.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { digestKey, generateKey, isWellFormedKey, KEY_PATTERN, parseBearer } from '../src/access/key-format.ts';
import { changeKey, openKeyStore } from '../src/access/key-store.ts';
import { sleep } from './support/processes.ts';
import { issueKey, useServer } from './support/server.ts';
import { assertUnauthorized } from './support/shapes.ts';
import { exchange } from './support/wire.ts';

/** A GET over a raw connection, so that a header can be sent twice (fetch would merge the two). */
const rawGet = async (url: string, path: string, headerLines: string[]) =>
  (
    await exchange(
      url,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headerLines.map((h) => `${h}\r\n`).join('')}\r\n`,
    )
  )[0];

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
  const server = useServer({ LOG_REQUESTS: '1' });

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
