// Operating the service: liveness and readiness, and Prometheus metrics on their own listener.
import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './support/files.ts';
import { issueKey, startServer, useServer } from './support/server.ts';
import { snapshotCopy } from './support/snapshots.ts';

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
  const server = useServer();

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
  const server = useServer({ METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '5', AUTH_FAILURES_PER_MINUTE: '2' });
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
    const path = await snapshotCopy();
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
