// CORS for the one playground origin: its headers on answers and errors, the preflight, and nothing for other origins.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useServer } from './support/server.ts';

const corsHeaders = (h: Headers) => [...h.keys()].filter((k) => k.startsWith('access-control-'));

describe('CORS', () => {
  const PLAYGROUND = 'https://playground.example.com';
  const server = useServer({ PLAYGROUND_ORIGIN: PLAYGROUND });
  const closed = useServer();

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
