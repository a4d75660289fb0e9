// Response compression: br or gzip as Accept-Encoding asks, for JSON bodies of 1 KB or more; the raw bytes on the wire.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { buildTestSnapshot, startServer, type TestServer } from './helpers.ts';
import { COMPRESS_MIN_BYTES, negotiate } from '../src/respond.ts';

interface Raw { status: number; headers: IncomingHttpHeaders; bytes: Buffer }

/** One request whose body comes back as sent (fetch would decode it), with the server's key unless `key` is null. */
function raw(server: TestServer, path: string, headers: Record<string, string> = {}, opts: { method?: string; key?: string | null } = {}): Promise<Raw> {
  const u = new URL(server.url);
  const h: Record<string, string> = { ...headers };
  if (opts.key !== null) h.Authorization = `Bearer ${opts.key ?? server.key}`;
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: opts.method ?? 'GET', headers: h, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const decode = (r: Raw): string => {
  const c = r.headers['content-encoding'];
  return (c === 'br' ? brotliDecompressSync(r.bytes) : c === 'gzip' ? gunzipSync(r.bytes) : r.bytes).toString('utf8');
};
/** The body without its request id (the one part that differs between two requests). */
const stable = (text: string) => { const b = JSON.parse(text); delete b.meta?.request_id; return b; };

describe('response compression', () => {
  let server: TestServer;
  const page = '/v1/listings?limit=5';
  before(async () => { server = await startServer({ SNAPSHOT_PATH: (await buildTestSnapshot()).path }); });
  after(async () => { await server.close(); });

  it('answers br or gzip as asked, with the same JSON as uncompressed, Vary and a Content-Length of the bytes sent', async () => {
    const plain = await raw(server, page);
    assert.equal(plain.status, 200);
    assert.ok(plain.bytes.length >= COMPRESS_MIN_BYTES, `the page is ${plain.bytes.length} bytes, enough to be compressed`);
    assert.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: identity');
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    for (const [ask, coding] of [['gzip', 'gzip'], ['br', 'br'], ['gzip, deflate, br', 'br'], ['deflate, gzip;q=0.8', 'gzip'], ['GZIP', 'gzip']] as const) {
      const r = await raw(server, page, { 'Accept-Encoding': ask });
      assert.equal(r.status, 200, ask);
      assert.equal(r.headers['content-encoding'], coding, ask);
      assert.equal(r.headers.vary, 'Accept-Encoding', ask);
      assert.equal(Number(r.headers['content-length']), r.bytes.length, ask);
      assert.ok(r.bytes.length < plain.bytes.length / 2, `${ask}: ${r.bytes.length} bytes against ${plain.bytes.length}`);
      assert.deepEqual(stable(decode(r)), stable(plain.bytes.toString('utf8')), ask);
    }
  });

  it('follows the weights: a higher q wins, q=0 refuses, * stands for the codings not named, identity otherwise', async () => {
    const cases: [string, string | undefined][] = [
      ['gzip;q=1, br;q=0.5', 'gzip'], ['br;q=0.1, gzip;q=0.001', 'br'], ['br;q=0, gzip', 'gzip'], ['br;q=0, gzip;q=0', undefined],
      ['*', 'br'], ['*;q=0.5, br;q=0', 'gzip'], ['*;q=0', undefined], ['identity', undefined], ['deflate, compress', undefined],
      ['gzip;q=abc', undefined], ['gzip;q=2', undefined], ['gzip;level=9', undefined], [';;, ,', undefined], ['', undefined],
    ];
    for (const [ask, coding] of cases) {
      const r = await raw(server, page, { 'Accept-Encoding': ask });
      assert.equal(r.status, 200, ask);
      assert.equal(r.headers['content-encoding'], coding, `Accept-Encoding: ${ask}`);
      JSON.parse(decode(r));
    }
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
    for (const [path, key, status] of [['/v1/listings/nope', undefined, 404], ['/v1/listings?limit=abc', undefined, 400], ['/v1/listings', null, 401]] as const) {
      const r = await raw(server, path, { 'Accept-Encoding': 'gzip, br' }, { key });
      assert.equal(r.status, status, path);
      assert.equal(r.headers['content-encoding'], undefined, path);
      assert.ok(JSON.parse(r.bytes.toString('utf8')).error, path);
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
      assert.ok(ask === 'identity' ? diff === 0 : diff <= 8, `${ask}: HEAD ${head.headers['content-length']}, GET ${get.headers['content-length']}`);
    }
  });

  it('compresses the public OpenAPI document once per coding and serves the same bytes again', async () => {
    const a = await raw(server, '/v1/openapi.json', { 'Accept-Encoding': 'br' }, { key: null });
    const b = await raw(server, '/v1/openapi.json', { 'Accept-Encoding': 'br' }, { key: null });
    const g = await raw(server, '/v1/openapi.json', { 'Accept-Encoding': 'gzip' }, { key: null });
    const plain = await raw(server, '/v1/openapi.json', {}, { key: null });
    assert.equal(a.headers['content-encoding'], 'br');
    assert.ok(a.bytes.equals(b.bytes));
    assert.equal(g.headers['content-encoding'], 'gzip');
    assert.equal(decode(a), plain.bytes.toString('utf8'));
    assert.equal(decode(g), plain.bytes.toString('utf8'));
    assert.ok(a.bytes.length < plain.bytes.length / 4, `${a.bytes.length} against ${plain.bytes.length}`);
  });
});
