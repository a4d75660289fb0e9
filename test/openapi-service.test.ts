// The OpenAPI document against the service: the headers and error messages its examples show are the ones sent,
// and its links, followed on the service, lead to answers.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { useDocument } from './support/openapi.ts';
import { startServer } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

const { server, doc, PATHS, op, queryParams, deref } = useDocument();

describe('the document against the service', () => {
  const documentedHeaders = (path: string, status: string) =>
    Object.keys(deref(op(path).responses[status]).headers ?? {}).map((h) => h.toLowerCase());
  const assertHeaders = (res: { headers: Headers }, path: string, status: string) => {
    for (const h of documentedHeaders(path, status)) assert.ok(res.headers.has(h), `${path} ${status}: ${h} is sent`);
  };
  it('sends the headers documented for 200, 304, 400, 401 and 404', async () => {
    const ok = await server.get('/v1/owners/own-1');
    assert.equal(ok.status, 200);
    assertHeaders(ok, '/v1/owners/{id}', '200');
    const etag = ok.headers.get('etag')!;
    const notModified = await server.get('/v1/owners/own-1', { headers: { 'If-None-Match': etag } });
    assert.equal(notModified.status, 304);
    assertHeaders(notModified, '/v1/owners/{id}', '304');
    assertHeaders(await server.get('/v1/owners/own-1?colour=red'), '/v1/owners/{id}', '400');
    assertHeaders(await server.get('/v1/owners/own-1', { key: null }), '/v1/owners/{id}', '401');
    assertHeaders(await server.get('/v1/owners/own-999'), '/v1/owners/{id}', '404');
    assertHeaders(await server.get('/v1/ping'), '/v1/ping', '200');
  });
  it("sends the headers documented for 429 when a key's allowance is used up", async () => {
    const limited = await startServer({ SNAPSHOT_PATH: (await fixtureSnapshot()).path, RATE_LIMIT_PER_MINUTE: '1' });
    try {
      assert.equal((await limited.get('/v1/owners')).status, 200);
      const res = await limited.get('/v1/owners');
      assert.equal(res.status, 429);
      assertHeaders(res, '/v1/owners', '429');
    } finally {
      await limited.close();
    }
  });
  it('shows in its 404 examples the message the service answers for an unknown id of that path', async () => {
    for (const [path, { example }] of Object.entries(PATHS)) {
      if (!path.includes('{id}')) continue;
      const shown = op(path).responses['404'].content['application/json'].examples.not_found.value.error.message;
      const url = example.split('?')[0].replace(/\/[^/]+(\/observations|\/similar)?$/, '/no-such-id$1');
      const res = await server.get(url + (example.includes('?') ? `?${example.split('?')[1]}` : ''));
      assert.equal(res.status, 404, url);
      assert.equal(res.body.error.message, shown, path);
    }
  });
  it("states the observations' month range as the service applies it (the text's own examples)", async () => {
    const to = queryParams('/v1/market/metrics/{id}/observations').find((p) => p.name === 'to');
    const pairs = [...to.description.matchAll(/(\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2}) is (\d+)/g)];
    assert.equal(pairs.length, 2, to.description);
    for (const [, from, until, months] of pairs) {
      const res = await server.get(
        `/v1/market/metrics/median_rent/observations?location_id=loc-ams&from=${from}&to=${until}`,
      );
      assert.equal(res.status, Number(months) <= 24 ? 200 : 400, `${from} to ${until}: ${res.text.slice(0, 200)}`);
    }
  });
  it('shows in its default examples the message of a real 405', async () => {
    const res = await server.get('/v1/listings', { method: 'POST' });
    assert.equal(res.status, 405);
    const shown = doc.components.responses.OtherError.content['application/json'].examples.method_not_allowed.value;
    assert.deepEqual([res.body.error.code, res.body.error.message], [shown.error.code, shown.error.message]);
  });
  it('shows in its default examples the message of a real 431', async () => {
    const { hostname, port } = new URL(server.url);
    const text = await new Promise<string>((resolve, reject) => {
      let got = '';
      const s = connect(Number(port), hostname, () =>
        s.write(`GET /v1/listings HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      );
      s.on('data', (d) => {
        got += d;
      });
      s.on('close', () => resolve(got));
      s.on('error', reject);
    });
    assert.match(text, /^HTTP\/1\.1 431 /);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    const shown = doc.components.responses.OtherError.content['application/json'].examples.request_too_large.value;
    assert.deepEqual([body.error.code, body.error.message], [shown.error.code, shown.error.message]);
  });
  it('shows in its 400 examples the messages the service answers', async () => {
    for (const [path, { example }] of Object.entries(PATHS)) {
      const examples = op(path).responses['400'].content['application/json'].examples;
      const cases: [string, string][] = [['unknown_parameter', 'colour=red']];
      if (examples.invalid_value)
        cases.push([
          'invalid_value',
          /\blimit\b/.test(examples.invalid_value.value.error.message) ? 'limit=0' : 'locale=it',
        ]);
      for (const [name, qs] of cases) {
        const res = await server.get(`${example.split('?')[0]}?${qs}`);
        assert.equal(res.status, 400);
        assert.equal(res.body.error.message, examples[name].value.error.message, `${path} ${name}`);
      }
    }
  });
});

describe('the links of the document', () => {
  const opsById = () => {
    const out = new Map<string, { path: string; op: any }>();
    for (const [path, item] of Object.entries<any>(doc.paths)) out.set(item.get.operationId, { path, op: item.get });
    return out;
  };
  const linksOf = (path: string): Record<string, any> => op(path).responses['200'].links ?? {};

  it('links every page to the next, listed records to their detail, and ids to the records they name', () => {
    const names = (path: string) => Object.keys(linksOf(path)).sort();
    assert.deepEqual(names('/v1/listings'), ['detail', 'next', 'owner']);
    assert.deepEqual(names('/v1/listings/{id}'), ['owner', 'similar']);
    assert.deepEqual(names('/v1/listings/{id}/similar'), ['detail', 'owner']);
    assert.deepEqual(names('/v1/owners'), ['detail', 'next']);
    assert.equal(linksOf('/v1/internet/plans').provider.operationId, op('/v1/internet/providers/{id}').operationId);
    assert.equal(
      linksOf('/v1/insurance/products').provider.operationId,
      op('/v1/insurance/providers/{id}').operationId,
    );
    assert.equal(linksOf('/v1/listings').next.parameters.cursor, '$response.body#/pagination/next_cursor');
    for (const [path, item] of Object.entries<any>(doc.paths))
      if (item.get.responses['200'].content?.['application/json']?.schema?.properties?.pagination)
        assert.ok(linksOf(path).next, `${path} links its next page`);
  });

  it('names in every link an operation of the document and only parameters it takes', () => {
    const ops = opsById();
    let links = 0;
    for (const path of Object.keys(doc.paths))
      for (const [name, link] of Object.entries<any>(linksOf(path))) {
        const target = ops.get(link.operationId);
        assert.ok(target, `${path} ${name}: ${link.operationId} is an operation`);
        const taken = new Set((target.op.parameters as any[]).map((p) => p.name));
        for (const p of Object.keys(link.parameters))
          assert.ok(taken.has(p), `${path} ${name}: ${p} is a parameter of ${target.path}`);
        for (const p of (target.op.parameters as any[]).filter((x) => x.required))
          assert.ok(p.name in link.parameters, `${path} ${name}: the required ${p.name} is given`);
        links++;
      }
    assert.ok(links >= 25, `${links} links`);
  });

  it('leads, followed on the service, to answers: 200 for the next page, a detail and similar; 200 or 404 for a named record', async () => {
    const ops = opsById();
    /** A value of the response body at a JSON pointer, or undefined. */
    const at = (body: any, pointer: string) =>
      pointer
        .split('/')
        .slice(1)
        .reduce((o, k) => (o == null ? undefined : o[k.replace(/~1/g, '/').replace(/~0/g, '~')]), body);
    let followed = 0;
    for (const [path, { example, public: isPublic }] of Object.entries(PATHS)) {
      const links = op(path) ? linksOf(path) : {};
      if (isPublic || Object.keys(links).length === 0) continue;
      const first = /^\/v1\/[a-z/]+$/.test(example) && links.next ? `${example}?limit=1` : example;
      const res = await server.get(first);
      assert.equal(res.status, 200, first);
      const url = new URL(first, 'http://x');
      const pathId = /\/v1\/[a-z]+(?:\/[a-z]+)?\/([^/?]+)/.exec(url.pathname)?.[1];
      for (const [name, link] of Object.entries<any>(links)) {
        const target = ops.get(link.operationId)!;
        let targetPath = target.path;
        const query = new URLSearchParams();
        let missing = false;
        for (const [p, expr] of Object.entries<string>(link.parameters)) {
          const value = expr.startsWith('$response.body#')
            ? at(res.body, expr.slice('$response.body#'.length))
            : expr.startsWith('$request.query.')
              ? (url.searchParams.get(expr.slice('$request.query.'.length)) ?? undefined)
              : expr === '$request.path.id'
                ? pathId
                : assert.fail(`${path} ${name}: an expression the test does not know: ${expr}`);
          if (value == null) {
            if (p === 'cursor' || p === 'id') missing = true;
            continue;
          }
          if (targetPath.includes(`{${p}}`))
            targetPath = targetPath.replace(`{${p}}`, encodeURIComponent(String(value)));
          else query.set(p, String(value));
        }
        if (missing) continue; // no next page, or the field is null on this record
        const next = await server.get(`${targetPath}${query.size ? `?${query}` : ''}`);
        const allowed = ['next', 'detail', 'similar'].includes(name) ? [200] : [200, 404];
        assert.ok(allowed.includes(next.status), `${path} → ${name}: ${targetPath}?${query} answered ${next.status}`);
        followed++;
      }
    }
    assert.ok(followed >= 20, `${followed} links followed`);
  });
});
