// Transport and browsers: HTTPS with HSTS, the 308 redirect listener, X-Forwarded-Proto behind a proxy, CORS and preflight.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/service/server.ts';
import { tempDir } from './support/files.ts';
import { startServer, type TestServer } from './support/server.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

/** One request with full control of the headers (fetch cannot set Host) and, for HTTPS, a trusted CA. */
function send(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; ca?: Buffer } = {},
): Promise<Reply> {
  const u = new URL(url);
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: opts.method ?? 'GET',
        headers: opts.headers,
        ca: opts.ca,
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => {
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode!, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const corsHeaders = (h: IncomingHttpHeaders | Headers) =>
  (h instanceof Headers ? [...h.keys()] : Object.keys(h)).filter((k) => k.toLowerCase().startsWith('access-control-'));

let snapshotPath: string;
before(async () => {
  snapshotPath = (await buildTestSnapshot()).path;
});

describe('HTTPS', () => {
  let server: TestServer;
  let ca: Buffer;
  before(async () => {
    const dir = tempDir();
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        '/CN=localhost',
        '-days',
        '1',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    ca = readFileSync(cert);
    server = await startServer({
      SNAPSHOT_PATH: snapshotPath,
      TLS_CERT_PATH: cert,
      TLS_KEY_PATH: key,
      HTTP_REDIRECT_PORT: '0',
      LOG_REQUESTS: '1',
    });
  });
  after(() => server.close());

  it('serves HTTPS with HSTS on every response', async () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const auth = { Authorization: `Bearer ${server.key}` };
    for (const [path, headers, status] of [
      ['/v1/ping', {}, 200],
      ['/v1/listings/lst-001', auth, 200],
      ['/v1/listings', {}, 401],
    ] as const) {
      const r = await send(server.url + path, { headers, ca });
      assert.equal(r.status, status, path);
      assert.equal(r.headers['strict-transport-security'], 'max-age=31536000', path);
    }
  });

  it('answers a parser error on the redirect listener after its pipelined redirects, and CONNECT there with 405', async () => {
    const get = 'GET /v1/ping HTTP/1.1\r\nHost: localhost\r\n\r\n';
    const all = responses((await raw(server.redirectUrl!, `${get + get + get}FOO / HTTP/1.1\r\nHost: x\r\n\r\n`)).data);
    assert.deepEqual(
      all.map((r) => r.status),
      [308, 308, 308, 400],
    );
    assertEnvelope(all[3], 400, 'invalid_request');
    const [connect] = responses(
      (await raw(server.redirectUrl!, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')).data,
    );
    assertEnvelope(connect, 405, 'method_not_allowed');
  });
  it("gives requests node's parser rejects the envelope with HSTS over TLS too", async () => {
    const { connect: tlsConnect } = await import('node:tls');
    const { port } = new URL(server.url);
    const data = await new Promise<string>((resolve, reject) => {
      let got = '';
      const s = tlsConnect({ port: Number(port), host: '127.0.0.1', ca, servername: 'localhost' }, () =>
        s.write(`GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      );
      s.on('data', (d) => {
        got += d;
      });
      s.on('close', () => resolve(got));
      s.on('error', reject);
    });
    const [r] = responses(data);
    assertEnvelope(r, 431, 'request_too_large');
    assert.equal(r.headers['strict-transport-security'], 'max-age=31536000');
  });
  it('refuses a client that does not trust the certificate (no silent plain fallback)', async () => {
    await assert.rejects(send(`${server.url}/v1/ping`), /self[- ]signed|certificate/i);
  });

  it('redirects every plain-HTTP request to the same path and query over HTTPS with 308', async () => {
    const port = new URL(server.url).port;
    for (const path of ['/v1/listings?limit=1&locale=nl', '/v1/ping', '/anything/else?x=1']) {
      const r = await send(server.redirectUrl! + path, { headers: { Host: 'localhost:8081' } });
      assert.equal(r.status, 308, path);
      assert.equal(r.headers.location, `https://localhost:${port}${path}`);
      assert.equal(r.headers['strict-transport-security'], undefined, 'no HSTS over plain HTTP');
    }
    const r = await send(`${server.redirectUrl!}/v1/ping`);
    assert.equal(r.status, 308);
    assert.equal(r.headers.location, `https://127.0.0.1:${port}/v1/ping`);
  });

  it('keeps the path and query of an absolute-form target in the redirect, never its authority', async () => {
    const port = new URL(server.url).port;
    const [r] = responses(
      (
        await raw(
          server.redirectUrl!,
          'GET http://other.example/v1/listings?limit=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
        )
      ).data,
    );
    assert.equal(r.status, 308);
    assert.equal(r.headers.location, `https://localhost:${port}/v1/listings?limit=1`);
  });

  it("gives the redirect listener's answers a request id, nosniff and a log line, as the service's own", async () => {
    const redirected = await send(`${server.redirectUrl!}/v1/ping?x=1`);
    const refused = await send(`${server.redirectUrl!}/v1/ping`, { headers: { Host: 'a b' } });
    for (const [r, status] of [
      [redirected, 308],
      [refused, 400],
    ] as const) {
      assert.equal(r.status, status);
      const id = r.headers['x-request-id'];
      assert.match(String(id), /^[0-9a-f-]{36}$/, `${status}: X-Request-Id`);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      if (status === 400) assert.equal(r.body.error.request_id, id, 'the envelope names the same id');
      const logged = () =>
        server.logs.some((l) => l.request_id === id && l.status === status && l.listener === 'redirect');
      for (let i = 0; i < 100 && !logged(); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(logged(), `${status}: its log line`);
    }
  });

  it('never reflects a malformed Host header into a redirect', async () => {
    for (const host of ['evil.example/path', 'a b', 'x'.repeat(300), 'host:port', '"quoted"', 'evil.example@other']) {
      const r = await send(`${server.redirectUrl!}/v1/ping`, { headers: { Host: host } });
      assert.equal(r.status, 400, host);
      assert.equal(r.headers.location, undefined);
      assert.equal(r.body.error.code, 'invalid_request');
    }
  });

  it('refuses a key in the query (400) and two Host lines (400) instead of redirecting them', async () => {
    const keyed = await send(`${server.redirectUrl!}/v1/listings?api_key=${server.key}`);
    assert.equal(keyed.status, 400);
    assert.equal(keyed.headers.location, undefined, 'the key is not sent back for the client to repeat');
    assert.equal(keyed.body.error.code, 'invalid_request');
    const [twice] = responses(
      (
        await raw(
          server.redirectUrl!,
          'GET /v1/ping HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n',
        )
      ).data,
    );
    assert.equal(twice.status, 400);
    assert.equal(twice.headers.location, undefined);
  });

  it('follows a redirect to a working HTTPS answer', async () => {
    const r = await send(`${server.redirectUrl!}/v1/listings/lst-001`);
    const next = await send(r.headers.location!, { headers: { Authorization: `Bearer ${server.key}` }, ca });
    assert.equal(next.status, 200);
    assert.equal(next.body.data.id, 'lst-001');
  });
});

describe('behind a TLS-terminating proxy', () => {
  let proxied: TestServer;
  let direct: TestServer;
  before(async () => {
    proxied = await startServer({ SNAPSHOT_PATH: snapshotPath, TRUST_PROXY: '1' });
    direct = await startServer({ SNAPSHOT_PATH: snapshotPath });
  });
  after(async () => {
    await proxied.close();
    await direct.close();
  });

  it('redirects X-Forwarded-Proto: http to https://<Host><path> with 308 under TRUST_PROXY=1', async () => {
    const r = await send(`${proxied.url}/v1/listings?limit=2`, {
      headers: { Host: 'api.example.com', 'X-Forwarded-Proto': 'http' },
    });
    assert.equal(r.status, 308);
    assert.equal(r.headers.location, 'https://api.example.com/v1/listings?limit=2');
    const bad = await send(`${proxied.url}/v1/ping`, { headers: { Host: 'bad host', 'X-Forwarded-Proto': 'http' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.location, undefined);
    // A key in the query is refused, not repeated in a Location for the client to send again.
    const keyed = await send(`${proxied.url}/v1/listings?api_key=${proxied.key}`, {
      headers: { Host: 'api.example.com', 'X-Forwarded-Proto': 'http' },
    });
    assert.equal(keyed.status, 400);
    assert.equal(keyed.headers.location, undefined);
    assert.match(keyed.body.error.message, /api_key/);
  });

  it('serves X-Forwarded-Proto: https with HSTS', async () => {
    const r = await send(`${proxied.url}/v1/listings?limit=1`, {
      headers: { 'X-Forwarded-Proto': 'https', Authorization: `Bearer ${proxied.key}` },
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers['strict-transport-security'], 'max-age=31536000');
  });

  it('ignores X-Forwarded-Proto without TRUST_PROXY, and local plain HTTP has no HSTS', async () => {
    const r = await send(`${direct.url}/v1/listings?limit=1`, {
      headers: { 'X-Forwarded-Proto': 'http', Authorization: `Bearer ${direct.key}` },
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers['strict-transport-security'], undefined);
  });
});

describe('CORS', () => {
  const PLAYGROUND = 'https://playground.example.com';
  let server: TestServer;
  let closed: TestServer;
  before(async () => {
    server = await startServer({ SNAPSHOT_PATH: snapshotPath, PLAYGROUND_ORIGIN: PLAYGROUND });
    closed = await startServer({ SNAPSHOT_PATH: snapshotPath });
  });
  after(async () => {
    await server.close();
    await closed.close();
  });

  it('gives the playground origin CORS headers on success and on errors', async () => {
    for (const [key, status] of [
      [undefined, 200],
      [null, 401],
    ] as const) {
      const r = await server.get('/v1/listings?limit=1', { key, headers: { Origin: PLAYGROUND } });
      assert.equal(r.status, status);
      assert.equal(r.headers.get('access-control-allow-origin'), PLAYGROUND);
      assert.equal(
        r.headers.get('access-control-expose-headers'),
        'X-Request-Id, RateLimit, RateLimit-Policy, Retry-After, ETag, Last-Modified, X-Snapshot-Id',
      );
      // A 200 may also be compressed (errors never are): fetch's headers join the two Vary lines.
      assert.equal(r.headers.get('vary'), status === 200 ? 'Origin, Accept-Encoding' : 'Origin');
      assert.equal(r.headers.get('access-control-allow-credentials'), null);
    }
  });

  it('gives any other origin no CORS headers', async () => {
    for (const origin of [
      'https://evil.example.com',
      'http://playground.example.com',
      'null',
      `${PLAYGROUND}.evil.com`,
    ]) {
      const r = await server.get('/v1/listings?limit=1', { headers: { Origin: origin } });
      assert.equal(r.status, 200, 'server-to-server style calls are unaffected');
      assert.deepEqual(corsHeaders(r.headers), [], origin);
      assert.equal(r.headers.get('vary'), 'Origin, Accept-Encoding');
    }
    const r = await closed.get('/v1/listings?limit=1', { headers: { Origin: PLAYGROUND } });
    assert.deepEqual(corsHeaders(r.headers), [], 'no PLAYGROUND_ORIGIN: no CORS at all');
  });

  it('answers the playground preflight with 204 and the allowed methods and headers', async () => {
    const r = await server.get('/v1/listings?limit=1', {
      method: 'OPTIONS',
      key: null,
      headers: {
        Origin: PLAYGROUND,
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization',
      },
    });
    assert.equal(r.status, 204);
    assert.equal(r.headers.get('access-control-allow-origin'), PLAYGROUND);
    assert.equal(r.headers.get('access-control-allow-methods'), 'GET, HEAD');
    assert.equal(r.headers.get('access-control-allow-headers'), 'Authorization');
    assert.equal(r.headers.get('access-control-max-age'), '600');
    assert.equal(r.headers.get('vary'), 'Origin');
    assert.equal(r.text, '');
    assert.equal(r.headers.get('content-length'), null, 'a 204 carries no Content-Length (RFC 9110, 8.6)');
  });

  it("answers another origin's preflight with a bare 204 (no CORS headers), and a non-preflight OPTIONS with 405", async () => {
    const r = await server.get('/v1/listings', {
      method: 'OPTIONS',
      key: null,
      headers: { Origin: 'https://evil.example.com', 'Access-Control-Request-Method': 'GET' },
    });
    assert.equal(r.status, 204);
    assert.deepEqual(corsHeaders(r.headers), []);
    const plain = await server.get('/v1/listings', { method: 'OPTIONS' });
    assert.equal(plain.status, 405);
    assert.equal(plain.body.error.code, 'method_not_allowed');
    // Without a key, a non-preflight OPTIONS is a 401 like a GET: neither 405 nor 404 says whether a path exists.
    for (const path of ['/v1/listings', '/v1/no-such-endpoint']) {
      const anon = await server.get(path, { method: 'OPTIONS', key: null });
      assert.equal(anon.status, 401, path);
      assert.equal(anon.body.error.code, 'unauthorized');
    }
  });
});

describe('start-up errors name their settings', () => {
  it('a port in use names HOST / PORT', async () => {
    const snap = (await buildTestSnapshot()).path;
    const first = await startServer({ SNAPSHOT_PATH: snap });
    try {
      const port = new URL(first.url).port;
      await assert.rejects(
        startServer({ SNAPSHOT_PATH: snap, PORT: port }),
        /^Error: HOST \/ PORT \(127\.0\.0\.1:\d+\): .*EADDRINUSE/,
      );
    } finally {
      await first.close();
    }
  });
  it('a snapshot, key store or certificate that cannot be read names its setting', async () => {
    const snap = (await buildTestSnapshot()).path;
    const dir = tempDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'notes.txt'), 'operator notes');
    const start = (env: Record<string, string>) =>
      startService(
        loadConfig({
          HOST: '127.0.0.1',
          PORT: '0',
          LOG_REQUESTS: '0',
          DEV_KEY: '0',
          CURSOR_SECRET: 'test-cursor-secret-0123456789',
          SNAPSHOT_PATH: snap,
          KEYS_PATH: join(dir, 'keys.db'),
          ...env,
        }),
        { log: () => {} },
      ).then((s) => s.close());
    await assert.rejects(start({ SNAPSHOT_PATH: join(dir, 'missing.db') }), /^\w*Error: SNAPSHOT_PATH: .*missing\.db/);
    await assert.rejects(start({ KEYS_PATH: join(dir, 'notes.txt') }), /^\w*Error: KEYS_PATH: .*notes\.txt/);
    await assert.rejects(
      start({ TLS_CERT_PATH: join(dir, 'nope.pem'), TLS_KEY_PATH: join(dir, 'nope.pem') }),
      /^Error: TLS_CERT_PATH: cannot read TLS certificate .*nope\.pem/,
    );
  });
  it('a certificate or key that is not PEM names TLS_CERT_PATH / TLS_KEY_PATH', async () => {
    const snap = (await buildTestSnapshot()).path;
    const dir = tempDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'cert.pem'), 'not a certificate');
    writeFileSync(join(dir, 'key.pem'), 'not a key');
    await assert.rejects(
      startServer({ SNAPSHOT_PATH: snap, TLS_CERT_PATH: join(dir, 'cert.pem'), TLS_KEY_PATH: join(dir, 'key.pem') }),
      /^Error: TLS_CERT_PATH \/ TLS_KEY_PATH: not a usable PEM certificate/,
    );
  });
});

/** Opens a raw connection, sends `text`, and resolves with what the server sent before closing, and when. */
const raw = (url: string, text: string, within = 10_000) =>
  new Promise<{ data: string; ms: number }>((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const t0 = Date.now();
    let data = '';
    const s = connect(Number(port), hostname, () => s.write(text));
    s.on('data', (d) => {
      data += d;
    });
    s.on('close', () => resolve({ data, ms: Date.now() - t0 }));
    s.on('error', () => {
      /* a reset also ends it */
    });
    setTimeout(() => {
      s.destroy();
      reject(new Error(`still open after ${within} ms`));
    }, within).unref();
  });

/** The responses in a raw HTTP/1.1 byte stream: status, headers (lower-case names) and body (by Content-Length). */
function responses(data: string): { status: number; headers: Record<string, string>; body: string }[] {
  const out = [];
  let rest = data;
  while (rest.length) {
    const end = rest.indexOf('\r\n\r\n');
    assert.ok(end > 0, `a complete response head in ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

/** An error answer as the spec has it: the envelope, its request id also in X-Request-Id. */
function assertEnvelope(
  r: { status: number; headers: Record<string, string>; body: string },
  status: number,
  code: string,
) {
  assert.equal(r.status, status, r.body);
  assert.match(r.headers['content-type'], /^application\/json/);
  const body = JSON.parse(r.body);
  assert.deepEqual(Object.keys(body.error), ['code', 'message', 'request_id']);
  assert.equal(body.error.code, code);
  assert.ok(body.error.message.length > 0);
  assert.equal(r.headers['x-request-id'], body.error.request_id);
  return body.error as { code: string; message: string; request_id: string };
}

describe('requests outside the usual shape', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(
      { SNAPSHOT_PATH: (await buildTestSnapshot()).path, LOG_REQUESTS: '1' },
      { requestLog: undefined },
    );
  });
  after(() => server.close());

  it("answers requests node's HTTP parser rejects with the error envelope and a request id, logs them, and closes", async () => {
    const big = `GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    const [tooLarge] = responses((await raw(server.url, big)).data);
    const e = assertEnvelope(tooLarge, 431, 'request_too_large');
    assert.equal(tooLarge.headers.connection, 'close');
    assert.ok(
      server.logs.some((l) => l.request_id === e.request_id && l.status === 431),
      'the request log has it',
    );
    const [badMethod] = responses((await raw(server.url, 'FOO /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n')).data);
    assertEnvelope(badMethod, 400, 'invalid_request');
    const [garbage] = responses((await raw(server.url, '\u0016\u0003\u0001\u0002\u0000\r\n\r\n')).data);
    assertEnvelope(garbage, 400, 'invalid_request');
  });
  it('answers a parser error on a connection after the responses to the requests before it (pipelined), in order', async () => {
    const ping = 'GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n';
    const page = `GET /v1/listings?limit=100 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\n\r\n`;
    for (const [bad, status, code] of [
      [`GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request_too_large'],
      ['FOO / HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'invalid_request'],
    ] as const) {
      const all = responses((await raw(server.url, ping + page + ping + page + bad)).data);
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
    const [noHost] = responses((await raw(server.url, 'GET /v1/ping HTTP/1.1\r\n\r\n')).data);
    assert.match(assertEnvelope(noHost, 400, 'invalid_request').message, /Host/);
    assert.equal(noHost.headers.connection, 'close');
    const [old] = responses((await raw(server.url, 'GET /v1/ping HTTP/1.0\r\n\r\n')).data);
    assert.equal(old.status, 200);
  });
  it('answers a request with two Host lines with the envelope (400), in HTTP/1.0 too (RFC 9112 3.2)', async () => {
    for (const version of ['1.1', '1.0']) {
      const [twice] = responses(
        (await raw(server.url, `GET /v1/ping HTTP/${version}\r\nHost: a.example\r\nhost: b.example\r\n\r\n`)).data,
      );
      assert.match(assertEnvelope(twice, 400, 'invalid_request').message, /Host/, version);
    }
  });
  it('answers a Host value that is not a host (RFC 9112 3.2) with the envelope (400), and serves every form a host takes', async () => {
    const get = (host: string) => `GET /v1/ping HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
    for (const host of ['<script>', 'x/y', 'a b', 'evil.example:99999x', 'a@b', 'x'.repeat(256), '[::1', 'a:b:c']) {
      const [r] = responses((await raw(server.url, get(host))).data);
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
      const [r] = responses((await raw(server.url, get(host))).data);
      assert.equal(r.status, 200, host);
    }
  });
  it('answers a request line of another HTTP version than 1.x with the envelope (400), not as HTTP/1.1', async () => {
    for (const line of ['GET /v1/ping HTTP/2.0', 'GET /v1/ping']) {
      const [r] = responses((await raw(server.url, `${line}\r\nHost: x\r\n\r\n`)).data);
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
    const all = responses(
      (
        await raw(
          server.url,
          'GET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nFOO / HTTP/1.1\r\nHost: x\r\n\r\n',
        )
      ).data,
    );
    assert.deepEqual(
      all.map((r) => r.status),
      [200],
    );
  });
  it('answers CONNECT (this is no proxy) with the 405 envelope and Allow, after earlier pipelined responses, and logs it', async () => {
    const ping = 'GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n';
    const all = responses(
      (await raw(server.url, `${ping + ping}CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`)).data,
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
    const [r] = responses(
      (await raw(server.url, 'GET /v1/ping HTTP/1.1\r\nHost: x\r\nExpect: something\r\nConnection: close\r\n\r\n'))
        .data,
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
    const [star] = responses(
      (await raw(server.url, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).data,
    );
    assertEnvelope(star, 401, 'unauthorized');
  });
});

describe('connection limits', () => {
  it('closes a connection whose headers trickle in past the headers time limit (408)', async () => {
    const snap = (await buildTestSnapshot()).path;
    const server = await startServer(
      { SNAPSHOT_PATH: snap },
      { timeouts: { headersMs: 400, requestMs: 400, checkMs: 100 } },
    );
    try {
      const r = await raw(server.url, 'GET /v1/ping HTTP/1.1\r\nHost: x\r\n'); // never ends the headers
      assertEnvelope(responses(r.data)[0], 408, 'request_timeout');
      assert.ok(r.ms < 3000, `closed after ${r.ms} ms`);
    } finally {
      await server.close();
    }
  });
  it('closes connections beyond MAX_CONNECTIONS at once, and serves again when one goes', async () => {
    const snap = (await buildTestSnapshot()).path;
    const server = await startServer({ SNAPSHOT_PATH: snap, MAX_CONNECTIONS: '2' });
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
      await server.close();
    }
  });
});
