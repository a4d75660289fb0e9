// Requests outside the usual shape, on the wire: what node's HTTP parser rejects, Host lines, pipelining, CONNECT,
// absolute-form targets; connection limits; and start-up errors that name their setting.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from './support/files.ts';
import { startBare, startServer, useServer } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';
import { assertEnvelope, exchange, raw, responses } from './support/wire.ts';

describe('requests outside the usual shape', () => {
  const server = useServer({ LOG_REQUESTS: '1' }, { requestLog: undefined });

  it("answers requests node's HTTP parser rejects with the error envelope and a request id, logs them, and closes", async () => {
    const big = `GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    const [tooLarge] = await exchange(server.url, big);
    const e = assertEnvelope(tooLarge, 431, 'request_too_large');
    assert.equal(tooLarge.headers.connection, 'close');
    assert.ok(
      server.logs.some((l) => l.request_id === e.request_id && l.status === 431),
      'the request log has it',
    );
    const [badMethod] = await exchange(server.url, 'FOO /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n');
    assertEnvelope(badMethod, 400, 'invalid_request');
    const [garbage] = await exchange(server.url, '\u0016\u0003\u0001\u0002\u0000\r\n\r\n');
    assertEnvelope(garbage, 400, 'invalid_request');
  });
  it('answers a parser error on a connection after the responses to the requests before it (pipelined), in order', async () => {
    const ping = 'GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n';
    const page = `GET /v1/listings?limit=100 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\n\r\n`;
    for (const [bad, status, code] of [
      [`GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request_too_large'],
      ['FOO / HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'invalid_request'],
    ] as const) {
      const all = await exchange(server.url, ping + page + ping + page + bad);
      assert.deepEqual(
        all.map((r) => r.status),
        [200, 200, 200, 200, status],
        'every earlier response, then the error',
      );
      assert.deepEqual(JSON.parse(all[0].body), { service: 'nl-rental-data-api', status: 'ok' });
      assert.ok(JSON.parse(all[3].body).data.length > 0);
      assertEnvelope(all[4], status, code);
    }
  });
  it('answers an HTTP/1.1 request without Host with the envelope (400) and closes, and serves HTTP/1.0 without one', async () => {
    const [noHost] = await exchange(server.url, 'GET /v1/ping HTTP/1.1\r\n\r\n');
    assert.match(assertEnvelope(noHost, 400, 'invalid_request').message, /Host/);
    assert.equal(noHost.headers.connection, 'close');
    const [old] = await exchange(server.url, 'GET /v1/ping HTTP/1.0\r\n\r\n');
    assert.equal(old.status, 200);
  });
  it('answers a request with two Host lines with the envelope (400), in HTTP/1.0 too (RFC 9112 3.2)', async () => {
    for (const version of ['1.1', '1.0']) {
      const [twice] = await exchange(
        server.url,
        `GET /v1/ping HTTP/${version}\r\nHost: a.example\r\nhost: b.example\r\n\r\n`,
      );
      assert.match(assertEnvelope(twice, 400, 'invalid_request').message, /Host/, version);
    }
  });
  it('answers a Host value that is not a host (RFC 9112 3.2) with the envelope (400), and serves every form a host takes', async () => {
    const get = (host: string) => `GET /v1/ping HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
    for (const host of ['<script>', 'x/y', 'a b', 'evil.example:99999x', 'a@b', 'x'.repeat(256), '[::1', 'a:b:c']) {
      const [r] = await exchange(server.url, get(host));
      assert.match(assertEnvelope(r, 400, 'invalid_request').message, /Host/, host);
      assert.equal(r.headers.connection, 'close', host);
    }
    for (const host of [
      'api.example',
      'api_1:8080',
      '127.0.0.1',
      '[::1]:8080',
      'localhost.',
      'host:',
      'x'.repeat(255),
    ]) {
      const [r] = await exchange(server.url, get(host));
      assert.equal(r.status, 200, host);
    }
  });
  it('answers a request line of another HTTP version than 1.x with the envelope (400), not as HTTP/1.1', async () => {
    for (const line of ['GET /v1/ping HTTP/2.0', 'GET /v1/ping']) {
      const [r] = await exchange(server.url, `${line}\r\nHost: x\r\n\r\n`);
      assert.match(assertEnvelope(r, 400, 'invalid_request').message, /HTTP\/(2\.0|0\.9) is not spoken here/, line);
    }
  });
  it('decodes percent-encoded unreserved characters in the path before routing (RFC 3986 6.2.2.2), and only those', async () => {
    const stats = await server.get('/v1/listings/%73tats');
    assert.equal(stats.status, 200);
    assert.equal(typeof stats.body.data.count, 'number', 'the stats endpoint, not the listing "stats"');
    const page = await server.get('/v1/%6Cistings?limit=1&q=%61partment');
    assert.equal(page.status, 200);
    assert.equal(page.body.data.length, 1);
    assert.equal((await server.get('/v1/listings/lst%2D001')).body.data.id, 'lst-001');
    assert.equal((await server.get('/v1/listings%2Fstats')).status, 404, 'an encoded slash stays part of one segment');
  });
  it('writes nothing more after a response that closes the connection (Connection: close, then a bad request)', async () => {
    const all = await exchange(
      server.url,
      'GET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nFOO / HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    assert.deepEqual(
      all.map((r) => r.status),
      [200],
    );
  });
  it('answers CONNECT (this is no proxy) with the 405 envelope and Allow, after earlier pipelined responses, and logs it', async () => {
    const ping = 'GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n';
    const all = await exchange(
      server.url,
      `${ping + ping}CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`,
    );
    assert.deepEqual(
      all.map((x) => x.status),
      [200, 200, 405],
    );
    const r = all[2];
    const e = assertEnvelope(r, 405, 'method_not_allowed');
    assert.equal(r.headers.allow, 'GET, HEAD');
    assert.ok(r.headers.date, 'a Date header, as on every response');
    assert.ok(server.logs.some((l) => l.request_id === e.request_id && l.status === 405 && l.method === 'CONNECT'));
  });
  it('serves a request with an unknown Expect as usual instead of a bare 417', async () => {
    const [r] = await exchange(
      server.url,
      'GET /v1/ping HTTP/1.1\r\nHost: x\r\nExpect: something\r\nConnection: close\r\n\r\n',
    );
    assert.equal(r.status, 200);
  });
  it('routes an absolute-form target like its path, through the key check; the asterisk form matches nothing', async () => {
    const get = (target: string, key?: string) =>
      raw(
        server.url,
        `GET ${target} HTTP/1.1\r\nHost: x\r\n${key ? `Authorization: Bearer ${key}\r\n` : ''}Connection: close\r\n\r\n`,
      );
    const [ok] = responses((await get('http://api.example/v1/listings?limit=1', server.key)).data);
    assert.equal(ok.status, 200, ok.body);
    assert.equal(JSON.parse(ok.body).data.length, 1);
    assert.ok(ok.headers['x-request-id']);
    const [noKey] = responses((await get('http://api.example/v1/listings?limit=1')).data);
    assertEnvelope(noKey, 401, 'unauthorized');
    const [bare] = responses((await get('http://api.example', server.key)).data);
    assert.equal(bare.status, 200, 'the root: the JSON index of links');
    const [nowhere] = responses((await get('http://api.example/nowhere', server.key)).data);
    assertEnvelope(nowhere, 404, 'not_found');
    const [ping] = responses((await get('https://api.example/v1/ping')).data);
    assert.equal(ping.status, 200);
    const [star] = await exchange(server.url, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assertEnvelope(star, 401, 'unauthorized');
  });
});

describe('connection limits: the headers time limit', () => {
  const server = useServer({}, { timeouts: { headersMs: 400, requestMs: 400, checkMs: 100 } });
  it('closes a connection whose headers trickle in past the headers time limit (408)', async () => {
    const r = await raw(server.url, 'GET /v1/ping HTTP/1.1\r\nHost: x\r\n'); // never ends the headers
    assertEnvelope(responses(r.data)[0], 408, 'request_timeout');
    assert.ok(r.ms < 3000, `closed after ${r.ms} ms`);
  });
});

describe('connection limits: MAX_CONNECTIONS', () => {
  const server = useServer({ MAX_CONNECTIONS: '2' });
  it('closes connections beyond MAX_CONNECTIONS at once, and serves again when one goes', async () => {
    const { hostname, port } = new URL(server.url);
    const held = [connect(Number(port), hostname), connect(Number(port), hostname)];
    try {
      await Promise.all(held.map((s) => new Promise((r) => s.once('connect', r))));
      await new Promise((r) => setTimeout(r, 100));
      const third = await raw(server.url, 'GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n', 5000);
      assert.equal(third.data, '', 'the third connection is closed without an answer');
      held[0].destroy();
      await new Promise((r) => setTimeout(r, 100));
      const again = await raw(server.url, 'GET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 5000);
      assert.match(again.data, /^HTTP\/1\.1 200/);
    } finally {
      for (const s of held) s.destroy();
    }
  });
});

describe('start-up errors name their settings', () => {
  const first = useServer();
  it('a port in use names HOST / PORT', async () => {
    await assert.rejects(
      startServer({ SNAPSHOT_PATH: (await fixtureSnapshot()).path, PORT: new URL(first.url).port }),
      /^Error: HOST \/ PORT \(127\.0\.0\.1:\d+\): .*EADDRINUSE/,
    );
  });
  it('a snapshot, key store or certificate that cannot be read names its setting', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'notes.txt'), 'operator notes');
    const snapshot = (await fixtureSnapshot()).path;
    const start = (env: Record<string, string>) =>
      startBare({ SNAPSHOT_PATH: snapshot, KEYS_PATH: join(dir, 'keys.db'), ...env }).then((s) => s.close());
    await assert.rejects(start({ SNAPSHOT_PATH: join(dir, 'missing.db') }), /^\w*Error: SNAPSHOT_PATH: .*missing\.db/);
    await assert.rejects(start({ KEYS_PATH: join(dir, 'notes.txt') }), /^\w*Error: KEYS_PATH: .*notes\.txt/);
    await assert.rejects(
      start({ TLS_CERT_PATH: join(dir, 'nope.pem'), TLS_KEY_PATH: join(dir, 'nope.pem') }),
      /^Error: TLS_CERT_PATH: cannot read TLS certificate .*nope\.pem/,
    );
  });
  it('a certificate or key that is not PEM names TLS_CERT_PATH / TLS_KEY_PATH', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'cert.pem'), 'not a certificate');
    writeFileSync(join(dir, 'key.pem'), 'not a key');
    await assert.rejects(
      startServer({
        SNAPSHOT_PATH: (await fixtureSnapshot()).path,
        TLS_CERT_PATH: join(dir, 'cert.pem'),
        TLS_KEY_PATH: join(dir, 'key.pem'),
      }),
      /^Error: TLS_CERT_PATH \/ TLS_KEY_PATH: not a usable PEM certificate/,
    );
  });
});
