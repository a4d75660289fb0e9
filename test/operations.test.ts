// Operating the service: liveness and readiness, Prometheus metrics, snapshot identity and HTTP caching, a busy
// key store, and HEAD answers to requests the HTTP parser rejected.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateKey } from '../src/access/key-format.ts';
import { createKey, openKeyStore } from '../src/access/key-store.ts';
import { copyFixture, ROOT, tempDir } from './support/files.ts';
import { issueKey, startServer, type TestServer } from './support/server.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

let snapshotPath: string;
before(async () => {
  snapshotPath = (await buildTestSnapshot()).path;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One raw HTTP/1.1 exchange; resolves with everything the server sent before closing. */
const raw = (url: string, text: string) =>
  new Promise<string>((resolve, reject) => {
    const { hostname, port } = new URL(url);
    let data = '';
    const s = connect(Number(port), hostname, () => s.write(text, 'latin1'));
    s.on('data', (d) => {
      data += d.toString('latin1');
    });
    s.on('close', () => resolve(data));
    s.on('error', () => {});
    setTimeout(() => reject(new Error('still open after 5 s')), 5000).unref();
  });

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const braces = /\{([^}]*)\}/.exec(line)?.[1] ?? '';
    const have = braces ? braces.split(',') : [];
    if (want.every((w) => have.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('liveness and readiness', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ SNAPSHOT_PATH: snapshotPath });
  });
  after(async () => {
    await server?.close();
  });

  it('answers /livez and /readyz without a key, with what is served', async () => {
    const live = await server.get('/livez', { key: null });
    assert.equal(live.status, 200);
    assert.deepEqual(live.body, { status: 'ok' });
    const ready = await server.get('/readyz', { key: null });
    assert.equal(ready.status, 200);
    const meta = server.snapshots.get().meta;
    assert.equal(ready.body.status, 'ready');
    assert.equal(ready.body.snapshot.id, meta.snapshot_id);
    assert.equal(ready.body.snapshot.built_at, meta.built_at);
    assert.equal(ready.body.snapshot.schema_version, meta.schema_version);
    assert.equal(typeof ready.body.snapshot.age_seconds, 'number');
    assert.equal(ready.body.key_store, 'ok');
    assert.equal(ready.headers.get('cache-control'), 'no-store');
  });

  it('answers /readyz 503 with Connection: close once draining began', async () => {
    server.lifecycle.draining = true;
    try {
      const ready = await server.get('/readyz', { key: null });
      assert.equal(ready.status, 503);
      assert.equal(ready.body.status, 'draining');
      assert.equal(ready.headers.get('connection'), 'close');
      assert.equal((await server.get('/livez', { key: null })).status, 200, 'still alive');
    } finally {
      server.lifecycle.draining = false;
    }
  });

  it('keeps /readyz, /livez and /metrics out of the OpenAPI document', async () => {
    const doc = (await server.get('/v1/openapi.json', { key: null })).body;
    for (const p of ['/livez', '/readyz', '/metrics']) assert.equal(doc.paths[p], undefined, p);
  });
});

describe('Prometheus metrics on their own listener', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      SNAPSHOT_PATH: snapshotPath,
      METRICS_PORT: '0',
      RATE_LIMIT_PER_MINUTE: '5',
      AUTH_FAILURES_PER_MINUTE: '2',
    });
  });
  after(async () => {
    await server?.close();
  });
  const scrape = async () => {
    const r = await fetch(`${server.metricsUrl}/metrics`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
    return r.text();
  };

  it('counts a known sequence of requests by route and status, 401s and 429s by kind', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await server.get('/v1/listings?limit=1')).status, 200);
    assert.equal((await server.get('/v1/listings/no-such-id')).status, 404);
    assert.equal((await server.get('/v1/ping', { key: null })).status, 200);
    assert.equal((await server.get('/v1/listings', { key: 'nlr_live_wrong' })).status, 401);
    assert.equal((await server.get('/v1/listings', { key: 'nlr_live_wrong' })).status, 401);
    assert.equal((await server.get('/v1/listings', { key: 'nlr_live_wrong' })).status, 429, 'the address limit');
    assert.equal((await server.get('/v1/listings?limit=2')).status, 200); // the key's 5th request this minute
    assert.equal((await server.get('/v1/listings?limit=3')).status, 429, "the key's limit");
    const text = await scrape();
    assert.equal(sample(text, 'nlr_http_requests_total', { route: '/v1/listings', status: '200' }), 4);
    assert.equal(sample(text, 'nlr_http_requests_total', { route: '/v1/listings/:id', status: '404' }), 1);
    assert.equal(sample(text, 'nlr_http_requests_total', { route: '/v1/ping', status: '200' }), 1);
    assert.equal(sample(text, 'nlr_http_requests_total', { route: '/v1/listings', status: '401' }), 2);
    assert.equal(sample(text, 'nlr_unauthorized_total'), 2);
    assert.equal(sample(text, 'nlr_rate_limited_total', { kind: 'address' }), 1);
    assert.equal(sample(text, 'nlr_rate_limited_total', { kind: 'key' }), 1);
    assert.equal(sample(text, 'nlr_http_request_duration_seconds_count', { route: '/v1/listings' }), 8);
    assert.equal(sample(text, 'nlr_http_requests_in_flight'), 0);
    const id = server.snapshots.get().meta.snapshot_id;
    assert.equal(sample(text, 'nlr_snapshot_info', { snapshot_id: id }), 1);
    assert.ok((sample(text, 'nlr_snapshot_age_seconds') ?? -1) > 0);
    assert.equal(sample(text, 'nlr_snapshot_swaps_total'), 0);
    assert.equal(sample(text, 'nlr_snapshot_candidates_refused_total'), 0);
    assert.ok((sample(text, 'nlr_key_store_reloads_total') ?? 0) >= 1);
    assert.ok(sample(text, 'process_cpu_user_seconds_total') !== undefined, 'default process metrics');
    assert.ok(sample(text, 'nodejs_eventloop_lag_p99_seconds') !== undefined, 'event-loop delay');
  });

  it('has both kinds of 429 at 0 before the first, and says whether data is served (0 once the file is written in place)', async () => {
    const path = join(tempDir(), 'served.db');
    writeFileSync(path, readFileSync(snapshotPath));
    const fresh = await startServer({ SNAPSHOT_PATH: path, METRICS_PORT: '0', SNAPSHOT_CHECK_MS: '60000' });
    try {
      const scrapeFresh = async () => (await fetch(`${fresh.metricsUrl}/metrics`)).text();
      let text = await scrapeFresh();
      assert.equal(sample(text, 'nlr_rate_limited_total', { kind: 'key' }), 0);
      assert.equal(sample(text, 'nlr_rate_limited_total', { kind: 'address' }), 0);
      assert.equal(sample(text, 'nlr_snapshot_serving'), 1);
      const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
      assert.equal(sample(text, 'nlr_build_info', { version, node_version: process.version }), 1);
      writeFileSync(path, 'not a snapshot any more'); // in place: the same inode
      await fresh.snapshots.refresh();
      assert.equal((await fresh.get('/v1/listings')).status, 503);
      text = await scrapeFresh();
      assert.equal(sample(text, 'nlr_snapshot_serving'), 0);
      assert.ok(sample(text, 'nlr_snapshot_info', { snapshot_id: fresh.snapshots.peek()!.meta.snapshot_id }));
    } finally {
      await fresh.close();
    }
  });

  it('says whether the key store file can be read (nlr_key_store_readable{store="file"}), 0 while it is gone', async () => {
    assert.equal(sample(await scrape(), 'nlr_key_store_readable', { store: 'file' }), 1);
    const away = `${server.keysPath}.away`;
    renameSync(server.keysPath, away);
    try {
      assert.equal(sample(await scrape(), 'nlr_key_store_readable', { store: 'file' }), 0);
    } finally {
      renameSync(away, server.keysPath);
    }
    // A store that failed is read again after a second (KeyReader's retry), at the latest.
    const deadline = Date.now() + 10_000;
    while (sample(await scrape(), 'nlr_key_store_readable', { store: 'file' }) !== 1) {
      assert.ok(Date.now() < deadline, 'readable again within 10 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('answers another method on /metrics 405 with Allow, HEAD without a body, and another path 404', async () => {
    for (const method of ['POST', 'DELETE', 'PUT']) {
      const r = await fetch(`${server.metricsUrl}/metrics`, { method });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.get('allow'), 'GET, HEAD');
      assert.equal(await r.text(), `method ${method} not allowed on /metrics: use GET\n`);
    }
    const head = await fetch(`${server.metricsUrl}/metrics`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    for (const [method, path] of [
      ['GET', '/'],
      ['POST', '/'],
      ['GET', '/metricsx'],
    ]) {
      const r = await fetch(`${server.metricsUrl}${path}`, { method });
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.equal(await r.text(), 'not found: only /metrics is served here\n');
    }
  });

  it('is not served on the public port', async () => {
    const r = await server.get('/metrics', { key: issueKey(server.keysPath).key }); // the first key is used up
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'not_found');
  });
});

describe('snapshot identity and HTTP caching', () => {
  let server: TestServer;
  let dir: string;
  let path: string;
  before(async () => {
    dir = copyFixture();
    path = (await buildTestSnapshot(dir, `${tempDir()}/snapshot.db`)).path;
    server = await startServer({ SNAPSHOT_PATH: path, SNAPSHOT_CHECK_MS: '1', RATE_LIMIT_PER_MINUTE: '40' });
  });
  after(async () => {
    await server?.close();
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
    const next = `${path}.next`;
    await buildTestSnapshot(dir, next, { builtAt: '2030-01-02T03:04:05Z' });
    renameSync(next, path);
    assert.equal(await server.snapshots.refresh(), true);
    const after = await server.get('/v1/listings/lst-001', {
      headers: { 'If-None-Match': before.headers.get('etag')! },
    });
    assert.equal(after.status, 200, 'the old tag no longer matches');
    assert.notEqual(after.headers.get('etag'), before.headers.get('etag'));
    assert.equal(after.headers.get('last-modified'), new Date('2030-01-02T03:04:05Z').toUTCString());
  });
});

describe('a key store held locked by a writer', () => {
  it('answers keyed requests 503 at once and ping at once, then serves the change when the lock is gone', async () => {
    const server = await startServer({ SNAPSHOT_PATH: snapshotPath });
    try {
      const other = issueKey(server.keysPath);
      assert.equal((await server.get('/v1/listings?limit=1', { key: other.key })).status, 200);
      // A writer revokes the other key, then holds the store locked (a sqlite3 shell in BEGIN EXCLUSIVE).
      const holder = spawn(
        process.execPath,
        [
          '-e',
          `const D = require('better-sqlite3'); const db = new D(process.argv[1]);
           db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").run(new Date().toISOString(), process.argv[2]);
           db.exec('BEGIN EXCLUSIVE'); console.log('locked');
           setTimeout(() => { db.exec('COMMIT'); db.close(); }, 1500);`,
          server.keysPath,
          other.id,
        ],
        { cwd: ROOT },
      );
      await new Promise<void>((resolve) => holder.stdout.on('data', () => resolve()));
      const t0 = performance.now();
      const busy = await Promise.all(Array.from({ length: 20 }, () => server.get('/v1/listings?limit=1')));
      const ping = await server.get('/v1/ping', { key: null });
      const ms = performance.now() - t0;
      for (const r of busy) {
        assert.equal(r.status, 503);
        assert.equal(r.body.error.code, 'service_unavailable');
      }
      assert.equal(ping.status, 200);
      assert.ok(ms < 500, `20 keyed requests and a ping took ${ms.toFixed(0)} ms while the store was locked`);
      await new Promise((resolve) => holder.on('close', resolve));
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await server.get('/v1/listings?limit=1')).status, 200);
      assert.equal((await server.get('/v1/listings?limit=1', { key: other.key })).status, 401, 'the revoke applies');
    } finally {
      await server.close();
    }
  });

  it('lets a key the server does not know wait for the re-read of a changed store (no 503 for a new key), at most ~250 ms', async () => {
    const server = await startServer({ SNAPSHOT_PATH: snapshotPath });
    const writer = openKeyStore(server.keysPath, { create: false });
    const timed = async (key: string | null, path = '/v1/listings?limit=1') => {
      const t0 = performance.now();
      const r = await server.get(path, { key });
      return { status: r.status, code: r.body?.error?.code, ms: performance.now() - t0 };
    };
    try {
      assert.equal((await server.get('/v1/listings?limit=1')).status, 200);
      // `keys create` commits a key, and the server looks while the writer still holds the lock (here held on
      // purpose, in place of the last moments of its commit): the reader has seen the change and cannot read it yet.
      const fresh = createKey(writer, { name: 'fresh' });
      writer.exec('BEGIN EXCLUSIVE');
      const known = await timed(server.key);
      assert.equal(known.status, 503, 'a key the table holds fails closed at once: it may have been revoked');
      assert.ok(known.ms < 250, `the known key's 503 took ${known.ms.toFixed(0)} ms`);
      const during = timed(fresh.key);
      await sleep(100);
      writer.exec('COMMIT'); // the writer has finished; the reader's re-read is still to come
      const after = timed(fresh.key);
      const [d, a] = await Promise.all([during, after]);
      assert.equal(d.status, 200, 'the new key sent during the lock is served once it is gone');
      assert.equal(a.status, 200, 'the new key sent right after the writer finished is served');

      // A key nobody issued, while the store stays locked: a 503 after the bounded wait; ping is never held up.
      createKey(writer, { name: 'another' });
      writer.exec('BEGIN EXCLUSIVE');
      try {
        assert.equal((await timed(server.key)).status, 503);
        const unknown = timed(generateKey());
        const ping = await timed(null, '/v1/ping');
        const u = await unknown;
        assert.equal(ping.status, 200);
        assert.ok(ping.ms < 250, `ping took ${ping.ms.toFixed(0)} ms while a request waited for the re-read`);
        assert.equal(u.status, 503);
        assert.equal(u.code, 'service_unavailable');
        assert.ok(u.ms >= 200 && u.ms < 1000, `the unknown key waited ${u.ms.toFixed(0)} ms`);
      } finally {
        writer.exec('COMMIT');
      }
      writer.close();
      await sleep(100);
      assert.equal((await timed(server.key)).status, 200, 'readable again');

      // A store that cannot be read at all (deleted) is no re-read under way: an unknown key fails closed at once.
      rmSync(server.keysPath);
      const gone = await timed(generateKey());
      assert.equal(gone.status, 503);
      assert.ok(gone.ms < 200, `the 503 for a deleted store took ${gone.ms.toFixed(0)} ms`);
    } finally {
      if (writer.open) writer.close();
      await server.close();
    }
  });
});

describe('HEAD requests the HTTP parser rejected', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ SNAPSHOT_PATH: snapshotPath });
  });
  after(async () => {
    await server?.close();
  });

  it('answers 400 without a body to HEAD, with one to GET', async () => {
    const head = await raw(server.url, 'HEAD /v1/ping?q=\xff HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.ok(head.endsWith('\r\n\r\n'), `no body after the headers: ${JSON.stringify(head.slice(-80))}`);
    const get = await raw(server.url, 'GET /v1/ping?q=\xff HTTP/1.1\r\nHost: x\r\n\r\n');
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
    const [first, second, ...more] = answers(await raw(server.url, head + get)); // one write: one packet
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

  it('answers 431 without a body to HEAD', async () => {
    const head = await raw(server.url, `HEAD /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(head, /^HTTP\/1\.1 431 /);
    assert.ok(head.endsWith('\r\n\r\n'));
  });
});
