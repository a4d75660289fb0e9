// HTTP answers an operator and a cache see: snapshot identity and conditional requests (ETag, 304, a swap changes
// every tag), and HEAD answers to requests the HTTP parser rejected.
import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { copyFixture } from './support/files.ts';
import { useServer } from './support/server.ts';
import { fixtureSnapshot, snapshotCopy } from './support/snapshots.ts';
import { raw } from './support/wire.ts';

describe('snapshot identity and HTTP caching', () => {
  let dir: string;
  let path: string;
  before(() => {
    dir = copyFixture(); // changed by the last test: another snapshot
  });
  const server = useServer(async () => {
    path = await snapshotCopy();
    return { SNAPSHOT_PATH: path, SNAPSHOT_CHECK_MS: '1', RATE_LIMIT_PER_MINUTE: '40' };
  });

  it('tags every data answer with the snapshot and a weak ETag that the same request repeats', async () => {
    const a = await server.get('/v1/listings?location_id=loc-ams');
    const b = await server.get('/v1/listings?location_id=loc-ams&limit=20&locale=en');
    const meta = server.snapshots.get().meta;
    assert.equal(a.headers.get('x-snapshot-id'), meta.snapshot_id);
    assert.equal(a.headers.get('last-modified'), new Date(meta.built_at).toUTCString());
    assert.equal(a.headers.get('cache-control'), 'private, no-cache');
    assert.match(a.headers.get('etag') ?? '', /^W\/"[A-Za-z0-9_-]+"$/);
    assert.notEqual(a.body.meta.request_id, b.body.meta.request_id);
    assert.equal(b.headers.get('etag'), a.headers.get('etag'), 'defaults written out are the same request');
    const other = [
      '/v1/listings?location_id=loc-ams&locale=nl',
      '/v1/listings?location_id=loc-ams&limit=5',
      `/v1/listings?location_id=loc-ams&cursor=${encodeURIComponent(
        (await server.get('/v1/listings?location_id=loc-ams&limit=1')).body.pagination.next_cursor,
      )}&limit=1`,
      '/v1/listings/lst-001',
    ];
    for (const p of other) assert.notEqual((await server.get(p)).headers.get('etag'), a.headers.get('etag'), p);
  });

  it('answers 304 with no body to a matching If-None-Match, after the key check', async () => {
    const first = await server.get('/v1/listings/lst-001');
    const etag = first.headers.get('etag')!;
    const again = await server.get('/v1/listings/lst-001', { headers: { 'If-None-Match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    assert.equal(again.headers.get('etag'), etag);
    assert.equal(again.headers.get('x-snapshot-id'), first.headers.get('x-snapshot-id'));
    const listed = await server.get('/v1/listings/lst-001', { headers: { 'If-None-Match': `W/"x", ${etag}` } });
    assert.equal(listed.status, 304);
    const noKey = await server.get('/v1/listings/lst-001', { key: null, headers: { 'If-None-Match': etag } });
    assert.equal(noKey.status, 401, 'a tag is no key');
    const stale = await server.get('/v1/listings/lst-001', { headers: { 'If-None-Match': 'W/"other"' } });
    assert.equal(stale.status, 200);
  });

  it('never answers a request that fails with a 304: its 404 or 400 comes first, and "*" needs an answer', async () => {
    const star = { headers: { 'If-None-Match': '*' } };
    assert.equal((await server.get('/v1/listings/lst-001', star)).status, 304, 'the listing exists');
    for (const p of ['/v1/listings/nope', '/v1/listings/nope/similar', '/v1/owners/nope'])
      assert.equal((await server.get(p, star)).status, 404, p);
    const bad = await server.get('/v1/listings?cursor=abc', star);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_request');
  });

  it('changes every tag when another snapshot is swapped in', async () => {
    const before = await server.get('/v1/listings/lst-001');
    // Another snapshot: one listing's price changed in the source (the id is a digest of the source).
    const file = join(dir, 'listings.ndjson');
    const lines = readFileSync(file, 'utf8').split('\n');
    const first = JSON.parse(lines[0]);
    lines[0] = JSON.stringify({ ...first, price_eur: first.price_eur + 1 });
    writeFileSync(file, lines.join('\n'));
    await snapshotCopy((await fixtureSnapshot(dir, { builtAt: '2030-01-02T03:04:05Z' })).path, `${path}.next`);
    renameSync(`${path}.next`, path);
    assert.equal(await server.snapshots.refresh(), true);
    const after = await server.get('/v1/listings/lst-001', {
      headers: { 'If-None-Match': before.headers.get('etag')! },
    });
    assert.equal(after.status, 200, 'the old tag no longer matches');
    assert.notEqual(after.headers.get('etag'), before.headers.get('etag'));
    assert.equal(after.headers.get('last-modified'), new Date('2030-01-02T03:04:05Z').toUTCString());
  });
});

describe('HEAD requests the HTTP parser rejected', () => {
  const server = useServer();

  it('answers 400 without a body to HEAD, with one to GET', async () => {
    const head = (await raw(server.url, 'HEAD /v1/ping?q=\xff HTTP/1.1\r\nHost: x\r\n\r\n', 5000)).data;
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.ok(head.endsWith('\r\n\r\n'), `no body after the headers: ${JSON.stringify(head.slice(-80))}`);
    const get = (await raw(server.url, 'GET /v1/ping?q=\xff HTTP/1.1\r\nHost: x\r\n\r\n', 5000)).data;
    assert.match(get, /^HTTP\/1\.1 400 /);
    assert.match(get, /\r\n\r\n\{"error":\{"code":"invalid_request"/);
  });

  /** The answers in what a connection received: each status line's head, and the body its Content-Length counts. */
  function answers(text: string): { head: string; body: string }[] {
    const out: { head: string; body: string }[] = [];
    let rest = text;
    let headOnly = true; // the first answer here is always to a HEAD
    while (rest.length > 0) {
      const end = rest.indexOf('\r\n\r\n');
      assert.ok(rest.startsWith('HTTP/1.1 ') && end > 0, `an answer starts here: ${JSON.stringify(rest.slice(0, 80))}`);
      const head = rest.slice(0, end);
      const length = headOnly ? 0 : Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      out.push({ head, body: rest.slice(end + 4, end + 4 + length) });
      rest = rest.slice(end + 4 + length);
      headOnly = false;
    }
    return out;
  }

  it('answers a request rejected after a pipelined HEAD by its own method: a GET gets its body', async () => {
    const head = `HEAD /v1/market/metrics?&&locale HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\n\r\n`;
    const get = 'GET /v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 150\r\nTransfer-Encoding: chunked\r\n\r\n';
    const [first, second, ...more] = answers((await raw(server.url, head + get, 5000)).data); // one write: one packet
    assert.match(first.head, /^HTTP\/1\.1 400 /);
    assert.equal(more.length, 0, 'nothing after the second answer');
    assert.match(second.head, /^HTTP\/1\.1 400 /);
    assert.match(second.head, /\r\nconnection: close/i);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(second.head)?.[1]);
    assert.equal(Buffer.byteLength(second.body), length, "the GET's answer carries its body");
    const body = JSON.parse(second.body);
    assert.equal(body.error.code, 'invalid_request');
    assert.equal(body.error.request_id, /\r\nx-request-id: (\S+)/i.exec(second.head)?.[1]);
  });

  it('answers a HEAD the parser rejects without a body also after earlier requests on its connection', async () => {
    const { hostname, port } = new URL(server.url);
    const text = await new Promise<string>((resolve, reject) => {
      let data = '';
      const s = connect(Number(port), hostname, () => s.write('GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n'));
      s.on('data', (d) => {
        const first = data === '';
        data += d.toString('latin1');
        if (first) s.write('HEAD /v1/ping?q=\xff HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'); // the ping answered
      });
      s.on('close', () => resolve(data));
      s.on('error', () => {});
      setTimeout(() => reject(new Error('still open after 5 s')), 5000).unref();
    });
    const at = text.indexOf('HTTP/1.1 400 ');
    assert.match(text, /^HTTP\/1\.1 200 /);
    assert.ok(at > 0, text);
    assert.ok(text.endsWith('\r\n\r\n'), `no body after the HEAD's headers: ${JSON.stringify(text.slice(-80))}`);
  });

  it('answers 431 without a body to a HEAD pipelined after a GET in one write, the GET with its body', async () => {
    const get = 'GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n';
    const head = `HEAD /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    const text = (await raw(server.url, get + get + head, 5000)).data; // one write: one packet
    assert.equal(text.match(/HTTP\/1\.1 200 /g)?.length, 2, text.slice(0, 300));
    const at = text.indexOf('HTTP/1.1 431 ');
    assert.ok(at > 0, 'the HEAD answered 431 after both GETs');
    assert.ok(text.slice(0, at).endsWith('}'), "the second GET's answer carries its body");
    assert.ok(text.endsWith('\r\n\r\n'), `no body after the HEAD's headers: ${JSON.stringify(text.slice(-80))}`);
  });

  it('answers 431 without a body to a HEAD pipelined after a chunked GET in one write', async () => {
    const get = 'GET /v1/ping HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n';
    const body = '5;note=x\r\nhello\r\n4\r\n\r\n\r\n\r\n0\r\nX-Trailer: 1\r\n\r\n'; // a chunk of CRLFs, a trailer
    const head = `HEAD /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    const text = (await raw(server.url, get + body + get + body + head, 5000)).data; // one write: one packet
    assert.equal(text.match(/HTTP\/1\.1 200 /g)?.length, 2, text.slice(0, 300));
    const at = text.indexOf('HTTP/1.1 431 ');
    assert.ok(at > 0, 'the HEAD answered 431 after both GETs');
    assert.ok(text.slice(0, at).endsWith('}'), "the second GET's answer carries its body");
    assert.ok(text.endsWith('\r\n\r\n'), `no body after the HEAD's headers: ${JSON.stringify(text.slice(-80))}`);
  });

  it('answers 431 without a body to HEAD', async () => {
    const head = (
      await raw(server.url, `HEAD /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 5000)
    ).data;
    assert.match(head, /^HTTP\/1\.1 431 /);
    assert.ok(head.endsWith('\r\n\r\n'));
  });
});
