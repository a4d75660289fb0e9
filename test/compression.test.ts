// Response compression: br or gzip as Accept-Encoding asks, for JSON bodies of 1 KB or more; the raw bytes on the wire.

import assert from 'node:assert/strict';
import { type IncomingHttpHeaders, request } from 'node:http';
import { describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { COMPRESS_MIN_BYTES, JsonText, negotiate, sendJson } from '../src/http/respond.ts';
import { rawServer, startServer, useServer } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  bytes: Buffer;
}

/** One request whose body comes back as sent (fetch would decode it), with the server's key unless `key` is null. */
function raw(
  server: { url: string; key?: string },
  path: string,
  headers: Record<string, string> = {},
  opts: { method?: string; key?: string | null } = {},
): Promise<Raw> {
  const u = new URL(server.url);
  const h: Record<string, string> = { ...headers };
  if (opts.key !== null && (opts.key ?? server.key)) h.Authorization = `Bearer ${opts.key ?? server.key}`;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path, method: opts.method ?? 'GET', headers: h, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            bytes: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.setTimeout(5000, () =>
      req.destroy(new Error(`no complete answer to ${path} within 5 s (a Content-Length above the bytes sent?)`)),
    );
    req.on('error', reject);
    req.end();
  });
}

const decode = (r: Raw): string => {
  const c = r.headers['content-encoding'];
  return (c === 'br' ? brotliDecompressSync(r.bytes) : c === 'gzip' ? gunzipSync(r.bytes) : r.bytes).toString('utf8');
};
/**
 * The body without what differs between two requests: the request id, and the next cursor's expiry (set from
 * the clock, in seconds) and so its signature. The cursor's position and scope are kept.
 */
const stable = (text: string) => {
  const b = JSON.parse(text);
  delete b.meta?.request_id;
  const cursor = b.pagination?.next_cursor;
  if (typeof cursor === 'string') {
    const { e: _expiry, ...rest } = JSON.parse(Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8'));
    b.pagination.next_cursor = rest;
  }
  return b;
};

describe('response compression', () => {
  const server = useServer();
  const page = '/v1/listings?limit=5';

  it('answers br or gzip as asked, with the same JSON as uncompressed, Vary and a Content-Length of the bytes sent', async () => {
    const plain = await raw(server, page);
    assert.equal(plain.status, 200);
    assert.ok(
      plain.bytes.length >= COMPRESS_MIN_BYTES,
      `the page is ${plain.bytes.length} bytes, enough to be compressed`,
    );
    assert.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: identity');
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    for (const [ask, coding] of [
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['gzip, deflate, br', 'gzip'],
      ['deflate, gzip;q=0.8', 'gzip'],
      ['GZIP', 'gzip'],
      ['x-gzip', 'gzip'],
    ] as const) {
      const r = await raw(server, page, { 'Accept-Encoding': ask });
      assert.equal(r.status, 200, ask);
      assert.equal(r.headers['content-encoding'], coding, ask);
      assert.equal(r.headers.vary, 'Accept-Encoding', ask);
      assert.equal(Number(r.headers['content-length']), r.bytes.length, ask);
      assert.ok(
        r.bytes.length < plain.bytes.length / 2,
        `${ask}: ${r.bytes.length} bytes against ${plain.bytes.length}`,
      );
      assert.deepEqual(stable(decode(r)), stable(plain.bytes.toString('utf8')), ask);
    }
  });

  it('follows the weights: a higher q wins, q=0 refuses, * stands for the codings not named, identity otherwise', async () => {
    const cases: [string, string | undefined][] = [
      ['gzip;q=1, br;q=0.5', 'gzip'],
      ['br;q=0.1, gzip;q=0.001', 'br'],
      ['br;q=0, gzip', 'gzip'],
      ['br;q=0, gzip;q=0', undefined],
      ['*', 'gzip'],
      ['*;q=0.5, gzip;q=0', 'br'],
      ['*;q=0', undefined],
      ['identity', undefined],
      ['deflate, compress', undefined],
      ['GZip;Q=0.9, Br;q=0.1', 'gzip'],
      ['br;Q=0.9, gzip;q=0.1', 'br'],
      ['gzip;q=.5', 'gzip'],
      ['gzip;q=0.5000', 'gzip'],
      ['br;q=0.5, identity', undefined],
      ['br, identity;q=0.5', 'br'],
      ['br, identity', 'br'],
      [',,,,,,,,,,,,,,,,,,,,br', 'br'],
      ['gzip;q=0, gzip', undefined],
      ['gzip;q=abc', undefined],
      ['gzip;q=2', undefined],
      ['gzip;level=9', undefined],
      [';;, ,', undefined],
      ['', undefined],
      ['gzip;q=0.123456', undefined], // more than 5 decimals: not read
    ];
    for (const [ask, coding] of cases) {
      const r = await raw(server, page, { 'Accept-Encoding': ask });
      assert.equal(r.status, 200, ask);
      assert.equal(r.headers['content-encoding'], coding, `Accept-Encoding: ${ask}`);
      JSON.parse(decode(r));
    }
    // A 15 KB weight of digits on the public document (the first pattern took 1.2 s to reject it): refused, identity.
    const long = await raw(
      server,
      '/v1/openapi.json',
      { 'Accept-Encoding': `gzip;q=${'1'.repeat(15_000)}x` },
      { key: null },
    );
    assert.equal(long.status, 200);
    assert.equal(long.headers['content-encoding'], undefined);
    // The function itself, for what a request cannot show (an absent header is what the first test sends).
    assert.equal(negotiate(undefined), null);
    assert.equal(negotiate('gzip ; q = 0.5 , br ; q=0.4'), 'gzip');
  });

  it('leaves small bodies and every error uncompressed', async () => {
    const small = await raw(server, '/v1/listings?limit=1&locale=nl', { 'Accept-Encoding': 'gzip, br' });
    assert.equal(small.status, 200);
    assert.ok(small.bytes.length < COMPRESS_MIN_BYTES, `a one-listing page is ${small.bytes.length} bytes`);
    assert.equal(small.headers['content-encoding'], undefined);
    assert.equal(small.headers.vary, 'Accept-Encoding');
    JSON.parse(small.bytes.toString('utf8'));
    const long = `/v1/${'x'.repeat(1500)}`; // a 404 that names its path: an error body over the minimum
    for (const [path, key, status] of [
      ['/v1/listings/nope', undefined, 404],
      [long, undefined, 404],
      ['/v1/listings?limit=abc', undefined, 400],
      ['/v1/listings', null, 401],
    ] as const) {
      const r = await raw(server, path, { 'Accept-Encoding': 'gzip, br' }, { key });
      assert.equal(r.status, status, path);
      assert.equal(r.headers['content-encoding'], undefined, path);
      assert.ok(JSON.parse(r.bytes.toString('utf8')).error, path);
      if (path === long) assert.ok(r.bytes.length >= COMPRESS_MIN_BYTES, `the long 404 is ${r.bytes.length} bytes`);
    }
  });

  it('gives HEAD the Content-Length and Content-Encoding of the same GET, and no body', async () => {
    for (const ask of ['gzip', 'br', 'identity']) {
      const get = await raw(server, page, { 'Accept-Encoding': ask });
      const head = await raw(server, page, { 'Accept-Encoding': ask }, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.bytes.length, 0);
      assert.equal(head.headers['content-encoding'], get.headers['content-encoding'], ask);
      // The request ids differ (random), so compressed lengths may differ by a byte or two; identity is ~2 times longer.
      const diff = Math.abs(Number(head.headers['content-length']) - Number(get.headers['content-length']));
      assert.ok(
        ask === 'identity' ? diff === 0 : diff <= 8,
        `${ask}: HEAD ${head.headers['content-length']}, GET ${get.headers['content-length']}`,
      );
    }
  });

  it('compresses the public OpenAPI document as asked', async () => {
    const plain = await raw(server, '/v1/openapi.json', {}, { key: null });
    for (const coding of ['br', 'gzip']) {
      const r = await raw(server, '/v1/openapi.json', { 'Accept-Encoding': coding }, { key: null });
      assert.equal(r.headers['content-encoding'], coding);
      assert.equal(decode(r), plain.bytes.toString('utf8'));
      assert.ok(r.bytes.length < plain.bytes.length / 4, `${coding}: ${r.bytes.length} against ${plain.bytes.length}`);
    }
  });

  it('sends one Vary line naming Origin and Accept-Encoding when CORS adds its own', async () => {
    const origin = 'https://playground.example.com';
    const cors = await startServer({ SNAPSHOT_PATH: (await fixtureSnapshot()).path, PLAYGROUND_ORIGIN: origin });
    try {
      const r = await raw(cors, page, { Origin: origin, 'Accept-Encoding': 'gzip' });
      assert.equal(r.headers['access-control-allow-origin'], origin);
      const vary = r.rawHeaders.filter((_, i) => i % 2 === 0 && r.rawHeaders[i].toLowerCase() === 'vary').length;
      assert.equal(vary, 1, `one Vary line: ${JSON.stringify(r.rawHeaders)}`);
      assert.equal(r.headers.vary, 'Origin, Accept-Encoding');
    } finally {
      await cors.close();
    }
  });
});

describe('sendJson with a reused body', () => {
  it('compresses a reused body once per coding and keeps the bytes it sent', async () => {
    const body = new JsonText(JSON.stringify({ data: 'x'.repeat(4000) }), { reused: true });
    const server = await rawServer((_req, res) => sendJson(res, 200, body));
    try {
      const first = await raw(server, '/', { 'Accept-Encoding': 'br' });
      assert.ok(body.encoded?.get('br')?.equals(first.bytes), 'the br bytes are kept');
      assert.equal(body.encoded?.get('gzip'), undefined, 'gzip not made until asked');
      const kept = body.encoded!.get('br')!;
      const again = await raw(server, '/', { 'Accept-Encoding': 'br' });
      assert.equal(body.encoded!.get('br'), kept, 'the same Buffer, not compressed again');
      assert.ok(again.bytes.equals(first.bytes));
      await raw(server, '/', { 'Accept-Encoding': 'gzip' });
      assert.ok(body.encoded!.get('gzip'));
    } finally {
      await server.close();
    }
  });
});
