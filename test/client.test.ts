// The typed client (client/) against the real server: its generated files match the served document, every
// operation has a method, .all() follows next_cursor with the same filters, errors are ApiErrors, and 429 and 503
// are retried after Retry-After within the caps.
import assert from 'node:assert/strict';
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DOCUMENT_FILE, documentText, REGENERATE, TYPES_FILE, typesFor } from '../client/scripts/openapi-types.ts';
import { ApiError, type ClientOptions, createClient, parseRetryAfter } from '../client/src/index.ts';
import { BASIC, tempDir } from './support/files.ts';
import { loadSource } from './support/model.ts';
import { issueKey, startServer, type TestServer, useServer } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

/** A fetch that records each request's URL (path and query) and each answer's status and Retry-After. */
function recording(before?: (url: URL) => Promise<void>, afterEach?: (res: Response) => void) {
  const calls: { url: URL; status: number; retryAfter: string | null; at: number }[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    await before?.(url);
    const res = await fetch(input, init);
    calls.push({ url, status: res.status, retryAfter: res.headers.get('retry-after'), at: performance.now() });
    afterEach?.(res);
    return res;
  };
  return { calls, fetch: fetchImpl };
}

const client = (server: TestServer, opts: Partial<ClientOptions> = {}) =>
  createClient({ baseUrl: server.url, key: server.key, ...opts });

describe('typed client', () => {
  const server = useServer();

  it('has committed types generated from the document the server serves', async () => {
    const doc = await client(server).openapi();
    const stale = `is out of date with the served /v1/openapi.json: run \`${REGENERATE}\` and commit the result`;
    assert.equal(readFileSync(DOCUMENT_FILE, 'utf8'), documentText(doc), `client/openapi.json ${stale}`);
    assert.equal(readFileSync(TYPES_FILE, 'utf8'), typesFor(doc), `client/src/schema.d.ts ${stale}`);
  });

  it('has one method per operation of the document, each answering 200 on the fixture', async () => {
    const rec = recording();
    const api = client(server, { fetch: rec.fetch });
    const answers = await Promise.all([
      api.ping(),
      api.openapi(),
      api.listings.search({ limit: 1 }),
      api.listings.get('lst-001', { locale: 'nl' }),
      api.listings.similar('lst-001', { limit: 3 }),
      api.listings.stats({ location_id: 'loc-ams' }),
      api.owners.search(),
      api.owners.get('own-1'),
      api.internet.providers.search(),
      api.internet.providers.get('inet-kpn'),
      api.internet.plans.search(),
      api.insurance.products.search(),
      api.insurance.providers.search(),
      api.insurance.providers.get('ins-centraal'),
      api.platforms.search(),
      api.platforms.get('plat-funda'),
      api.articles.search(),
      api.articles.get('art-1'),
      api.glossary.search(),
      api.glossary.get('gl-huurtoeslag'),
      api.market.metrics(),
      api.market.observations('median_rent', { location_id: 'loc-ams', from: '2026-01-01', to: '2026-12-31' }),
      api.locations.search(),
      api.locations.get('loc-ams-pijp'),
      api.changes.search({ since: (await fixtureSnapshot()).result.snapshotId! }),
    ]);
    assert.ok(answers.every((a) => typeof a === 'object' && a !== null));
    assert.ok(
      rec.calls.every((c) => c.status === 200),
      'every call answered 200',
    );
    assert.equal((await api.listings.get('lst-001')).data.id, 'lst-001');
    // Each document path (as a pattern with {id} for one segment) was called by some method.
    const doc = (await api.openapi()) as { paths: Record<string, unknown> };
    const called = rec.calls.map((c) => c.url.pathname);
    for (const path of Object.keys(doc.paths)) {
      const re = new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{[a-z_]+\}/g, '[^/]+')}$`);
      assert.ok(
        called.some((p) => re.test(p)),
        `client/src/index.ts has a method for ${path}`,
      );
    }
  });

  it('.all() yields every listing of a filter exactly once, page after page with the same filters', async () => {
    const model = loadSource(BASIC);
    const expected = model.listings
      .filter((l) => model.ancestorsOf(l.location_id).includes('loc-ams'))
      .map((l) => l.id);
    const rec = recording();
    const api = client(server, { fetch: rec.fetch });
    const ids: string[] = [];
    for await (const listing of api.listings.all({ location_id: 'loc-ams', locale: 'de', limit: 2 }))
      ids.push(listing.id);
    assert.deepEqual(ids, expected);
    assert.ok(expected.length > 4, 'the filter spans three pages or more');
    const direct = await server.get('/v1/listings?location_id=loc-ams&limit=100');
    assert.deepEqual(
      ids,
      direct.body.data.map((l: { id: string }) => l.id),
    );
    assert.equal(rec.calls.length, Math.ceil(expected.length / 2), 'one request per page');
    rec.calls.forEach(({ url }, i) => {
      const q = url.searchParams;
      assert.deepEqual(
        [q.get('location_id'), q.get('locale'), q.get('limit')],
        ['loc-ams', 'de', '2'],
        `page ${i + 1}`,
      );
      assert.equal(q.has('cursor'), i > 0, `page ${i + 1}: a cursor after the first page`);
    });
  });

  it('throws an ApiError with code unauthorized for a bad key, without retrying', async () => {
    const rec = recording();
    const api = createClient({ baseUrl: server.url, key: 'nlr_live_not-a-key', fetch: rec.fetch });
    const e = await api.owners.search().then(
      () => assert.fail('expected an ApiError'),
      (err: unknown) => err,
    );
    assert.ok(e instanceof ApiError, `an ApiError: ${e}`);
    assert.equal(e.status, 401);
    assert.equal(e.code, 'unauthorized');
    assert.ok(e.message.length > 0);
    assert.ok(e.requestId, 'the request id of the error envelope');
    assert.equal(rec.calls.length, 1, 'a 401 is not retried');
  });

  it('throws an ApiError with code invalid_request for a bad parameter, without retrying', async () => {
    const rec = recording();
    const api = client(server, { fetch: rec.fetch });
    await assert.rejects(api.listings.search({ min_price: 10, max_price: 5 }), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.deepEqual([e.status, e.code], [400, 'invalid_request']);
      return true;
    });
    assert.equal(rec.calls.length, 1);
  });
});

describe('typed client retries', () => {
  // One request per key per 1-second window: a key's second request in a window gets 429 with Retry-After: 1.
  const server = useServer({ RATE_LIMIT_PER_MINUTE: '1' }, { rateWindowSeconds: 1 });
  const withNewKey = (opts: Partial<ClientOptions>) => client(server, { key: issueKey(server.keysPath).key, ...opts });

  it('retries a 429 after its Retry-After and succeeds', async () => {
    const rec = recording();
    const api = withNewKey({ fetch: rec.fetch });
    await api.ping(); // public: does not count
    await api.owners.search();
    const started = performance.now();
    const page = await api.owners.search();
    const took = performance.now() - started;
    assert.ok(page.data.length > 0);
    assert.deepEqual(
      rec.calls.slice(1).map((c) => c.status),
      [200, 429, 200],
    );
    const retryAfter = Number(rec.calls[2].retryAfter);
    assert.ok(retryAfter >= 1, 'the 429 carries Retry-After');
    assert.ok(took >= retryAfter * 1000, `waited Retry-After (${retryAfter} s) before retrying: ${took} ms`);
    assert.ok(rec.calls[3].at - rec.calls[2].at >= retryAfter * 1000 - 5, 'the retry left after Retry-After');
  });

  it('gives up after maxRetries retries and throws the 429 with its retryAfter', async () => {
    // Another user of the same key takes each window's one request just before the client's attempt.
    const key = issueKey(server.keysPath).key;
    const rival = async () => {
      await fetch(`${server.url}/v1/owners`, { headers: { Authorization: `Bearer ${key}` } });
    };
    const rec = recording(rival);
    const api = client(server, { key, fetch: rec.fetch, retry: { maxRetries: 2 } });
    await assert.rejects(api.owners.search(), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.deepEqual([e.status, e.code, e.retryAfter], [429, 'rate_limited', 1]);
      return true;
    });
    assert.deepEqual(
      rec.calls.map((c) => c.status),
      [429, 429, 429],
      'the first attempt and two retries',
    );
  });

  it('does not retry with maxRetries 0, nor when Retry-After is longer than maxDelayMs', async () => {
    for (const retry of [{ maxRetries: 0 }, { maxDelayMs: 500 }]) {
      const rec = recording();
      const api = withNewKey({ fetch: rec.fetch, retry });
      await api.owners.search();
      const started = performance.now();
      await assert.rejects(api.owners.search(), (e: unknown) => e instanceof ApiError && e.status === 429);
      assert.ok(performance.now() - started < 500, `${JSON.stringify(retry)}: thrown without waiting`);
      assert.equal(rec.calls.length, 2, JSON.stringify(retry));
    }
  });

  it('retries a 503 (key store missing) after its Retry-After', async () => {
    const s = await startServer({ SNAPSHOT_PATH: (await fixtureSnapshot()).path }, { keysRetryMs: 50 });
    try {
      const aside = join(tempDir(), 'keys.db');
      renameSync(s.keysPath, aside);
      // The key store is renamed back as soon as the first (503) answer has arrived.
      const restore = (res: Response) => {
        if (res.status === 503) renameSync(aside, s.keysPath);
      };
      const rec = recording(undefined, restore);
      const page = await client(s, { fetch: rec.fetch }).owners.search();
      assert.ok(page.data.length > 0);
      assert.deepEqual(
        rec.calls.map((c) => [c.status, c.retryAfter]),
        [
          [503, '1'],
          [200, null],
        ],
      );
      assert.ok(rec.calls[1].at - rec.calls[0].at >= 1000 - 5, 'the retry left after Retry-After');
    } finally {
      await s.close();
    }
  });
});

describe('typed client: bad input, time limits and cancellation', () => {
  /** A fetch double: answers each call with the next of `answers` (the last one repeats), counting the calls. */
  const scripted = (...answers: (() => Response)[]) => {
    const calls: string[] = [];
    const fetchImpl: typeof fetch = async (input) => {
      calls.push(String(input));
      return answers[Math.min(calls.length, answers.length) - 1]();
    };
    return { calls, fetch: fetchImpl };
  };
  const json =
    (body: unknown, status = 200, headers: Record<string, string> = {}) =>
    () =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
  const api = (opts: Partial<ClientOptions> = {}) =>
    createClient({ baseUrl: 'http://127.0.0.1:1', key: 'nlr_live_test', ...opts });

  it('refuses an id a URL cannot carry as one segment ("", ".", "..", over 120 characters) before any request', async () => {
    const rec = scripted(json({ data: {} }));
    const c = api({ fetch: rec.fetch });
    for (const id of ['', '.', '..', 'x'.repeat(121)]) {
      assert.throws(() => c.listings.get(id), RangeError, JSON.stringify(id));
      assert.throws(
        () => c.market.observations(id, { location_id: 'a', from: '2026-01-01', to: '2026-02-01' }),
        RangeError,
      );
    }
    await c.listings.get('..x');
    await c.listings.get('🏠'.repeat(120));
    assert.deepEqual(rec.calls, [
      'http://127.0.0.1:1/v1/listings/..x',
      `http://127.0.0.1:1/v1/listings/${encodeURIComponent('🏠'.repeat(120))}`,
    ]);
  });

  it('refuses a baseUrl that is not an http(s) address without a query or fragment', () => {
    for (const baseUrl of ['localhost:8080', 'ftp://h', 'http://h/?x=1', 'http://h/#f', 'not a url'])
      assert.throws(() => api({ baseUrl }), RangeError, baseUrl);
    for (const retry of [{ maxDelayMs: Number.POSITIVE_INFINITY }, { maxDelayMs: -1 }])
      assert.throws(() => api({ retry }), RangeError, JSON.stringify(retry));
    assert.throws(() => api({ timeoutMs: 0 }), RangeError);
  });

  it('aborts an attempt after timeoutMs with a TimeoutError, without retrying', async () => {
    let calls = 0;
    // A server that never answers: its open socket would keep the process alive, as this timer does (Node's
    // AbortSignal.timeout does not).
    const hanging: typeof fetch = (_input, init) => {
      calls++;
      const socket = setTimeout(() => {}, 10_000);
      return new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => {
          clearTimeout(socket);
          reject(init.signal?.reason);
        }),
      );
    };
    await assert.rejects(api({ fetch: hanging, timeoutMs: 50 }).owners.search(), (e: unknown) => {
      assert.equal((e as Error).name, 'TimeoutError');
      return true;
    });
    assert.equal(calls, 1);
  });

  it('cancels a call with its signal, a wait before a retry included', async () => {
    const rec = scripted(
      json({ error: { code: 'rate_limited', message: 'x', request_id: 'r' } }, 429, { 'retry-after': '20' }),
    );
    const controller = new AbortController();
    const call = api({ fetch: rec.fetch }).with({ signal: controller.signal }).owners.search();
    setTimeout(() => controller.abort(new Error('stopped by the caller')), 50);
    const started = performance.now();
    await assert.rejects(call, /stopped by the caller/);
    assert.ok(performance.now() - started < 10_000, 'did not sit out the 20 s wait');
    assert.equal(rec.calls.length, 1, 'no retry after the abort');
  });

  it('ends all() with invalid_response on a page without pagination or with the same next_cursor again', async () => {
    const page = (next: string | null) => json({ data: [{ id: 'a' }], pagination: { next_cursor: next }, meta: {} });
    for (const fetchImpl of [scripted(json({ data: [] })).fetch, scripted(page('c1'), page('c1')).fetch]) {
      const seen: unknown[] = [];
      await assert.rejects(
        (async () => {
          for await (const x of api({ fetch: fetchImpl }).owners.all()) seen.push(x);
        })(),
        (e: unknown) => e instanceof ApiError && e.code === 'invalid_response',
      );
      assert.ok(seen.length <= 1);
    }
  });

  it('calls onResponse with every answer (a retried 429 too) and names the URL in an ApiError', async () => {
    const rec = scripted(
      json({ error: { code: 'rate_limited', message: 'x', request_id: 'r1' } }, 429, { 'retry-after': '0' }),
      json({ error: { code: 'not_found', message: 'No public owner was found with this id.', request_id: 'r2' } }, 404),
    );
    const seen: [string, number, number, string | null][] = [];
    const c = api({
      fetch: rec.fetch,
      onResponse: ({ url, status, attempt, headers }) => seen.push([url, status, attempt, headers.get('retry-after')]),
    });
    await assert.rejects(c.owners.get('own 1', { locale: 'nl' }), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.deepEqual([e.status, e.url], [404, 'http://127.0.0.1:1/v1/owners/own%201?locale=nl']);
      return true;
    });
    assert.deepEqual(seen, [
      ['http://127.0.0.1:1/v1/owners/own%201?locale=nl', 429, 1, '0'],
      ['http://127.0.0.1:1/v1/owners/own%201?locale=nl', 404, 2, null],
    ]);
  });

  it('reads Retry-After as digits or an HTTP date, and nothing else ("1.5" is unreadable: the 1 s default)', () => {
    const now = Date.parse('Thu, 26 Nov 2026 12:00:00 GMT');
    assert.equal(parseRetryAfter('7', now), 7);
    assert.equal(parseRetryAfter('Thu, 26 Nov 2026 12:00:30 GMT', now), 30);
    assert.equal(parseRetryAfter('1.5', now), undefined);
    assert.equal(parseRetryAfter('2026', now), 2026);
    assert.equal(parseRetryAfter('-1', now), undefined);
  });
});
