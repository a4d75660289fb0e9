// HTTPS with HSTS, the 308 redirect listener beside it, and X-Forwarded-Proto behind a TLS-terminating proxy.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from './support/files.ts';
import { useServer } from './support/server.ts';
import { assertEnvelope, exchange, responses } from './support/wire.ts';

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

describe('HTTPS', () => {
  let ca: Buffer;
  const server = useServer(() => {
    const dir = tempDir();
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    const subject = ['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'];
    const args = [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      ...subject,
      '-keyout',
      key,
      '-out',
      cert,
    ];
    execFileSync('openssl', args, { stdio: 'ignore' });
    ca = readFileSync(cert);
    return { TLS_CERT_PATH: cert, TLS_KEY_PATH: key, HTTP_REDIRECT_PORT: '0', LOG_REQUESTS: '1' };
  });

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
    const all = await exchange(server.redirectUrl!, `${get + get + get}FOO / HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.deepEqual(
      all.map((r) => r.status),
      [308, 308, 308, 400],
    );
    assertEnvelope(all[3], 400, 'invalid_request');
    const [connect] = await exchange(
      server.redirectUrl!,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
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
    const [r] = await exchange(
      server.redirectUrl!,
      'GET http://other.example/v1/listings?limit=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
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
    const [twice] = await exchange(
      server.redirectUrl!,
      'GET /v1/ping HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n',
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
  const proxied = useServer({ TRUST_PROXY: '1' });
  const direct = useServer();

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
