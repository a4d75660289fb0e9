// GET /v1/openapi.json: a 3.1 document, version 1.0.0, every path and every query parameter each route accepts
// (checked against what the route itself accepts), the error responses of every operation, the field sets
// of the 200 responses, the headers and error messages the examples show, and parameter examples the shipped
// sample accepts (all checked against real responses).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { copyFixture, ROOT } from './support/files.ts';
import { withParams } from './support/model.ts';
import { startServer, type TestServer } from './support/server.ts';
import { assertError } from './support/shapes.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

let server: TestServer;
let doc: any;
/** The snapshot the served one records its changes since (/v1/changes?since=): the fixture less one listing. */
let previousId = '';
before(async () => {
  const older = copyFixture();
  const listings = join(older, 'listings.ndjson');
  writeFileSync(listings, readFileSync(listings, 'utf8').replace(/^.*"id":"lst-001".*\n/m, ''));
  const previous = await buildTestSnapshot(older);
  previousId = previous.result.snapshotId!;
  const { path } = await buildTestSnapshot(undefined, undefined, { previous: previous.path });
  server = await startServer({ SNAPSHOT_PATH: path });
  const res = await server.get('/v1/openapi.json');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  doc = JSON.parse(res.text);
});
after(async () => {
  await server?.close();
});

/** Every path of the spec and the discovery endpoints, with a concrete request that succeeds on the basic fixture. */
const PATHS: Record<string, { example: string; public?: boolean }> = {
  '/v1/ping': { example: '/v1/ping', public: true },
  '/v1/listings': { example: '/v1/listings' },
  '/v1/listings/{id}': { example: '/v1/listings/lst-001' },
  '/v1/listings/{id}/similar': { example: '/v1/listings/lst-001/similar' },
  '/v1/listings/stats': { example: '/v1/listings/stats' },
  '/v1/owners': { example: '/v1/owners' },
  '/v1/owners/{id}': { example: '/v1/owners/own-1' },
  '/v1/internet/providers': { example: '/v1/internet/providers' },
  '/v1/internet/providers/{id}': { example: '/v1/internet/providers/inet-kpn' },
  '/v1/internet/plans': { example: '/v1/internet/plans' },
  '/v1/insurance/products': { example: '/v1/insurance/products' },
  '/v1/insurance/providers/{id}': { example: '/v1/insurance/providers/ins-centraal' },
  '/v1/platforms': { example: '/v1/platforms' },
  '/v1/platforms/{id}': { example: '/v1/platforms/plat-funda' },
  '/v1/articles': { example: '/v1/articles' },
  '/v1/articles/{id}': { example: '/v1/articles/art-1' },
  '/v1/insurance/providers': { example: '/v1/insurance/providers' },
  '/v1/glossary': { example: '/v1/glossary' },
  '/v1/glossary/{id}': { example: '/v1/glossary/gl-huurtoeslag' },
  '/v1/market/metrics/{id}/observations': {
    example: '/v1/market/metrics/median_rent/observations?location_id=loc-ams&from=2026-01-01&to=2026-12-31',
  },
  '/v1/locations': { example: '/v1/locations' },
  '/v1/locations/{id}': { example: '/v1/locations/loc-ams-pijp' },
  '/v1/market/metrics': { example: '/v1/market/metrics' },
  '/v1/openapi.json': { example: '/v1/openapi.json', public: true },
  '/v1/changes': {
    get example() {
      return `/v1/changes?since=${previousId}`;
    },
  },
};
const op = (path: string) => doc.paths[path]?.get;
const queryParams = (path: string) => (op(path).parameters as any[]).filter((p) => p.in === 'query');
/** The query parameters a route accepts, read from its own unknown-parameter error ("Allowed: a, b."). */
async function acceptedParams(example: string): Promise<string[]> {
  const res = await server.get(`${example + (example.includes('?') ? '&' : '?')}zz_unknown=1`);
  assert.equal(res.status, 400);
  const m = /Allowed: ([^.]*)\./.exec(res.body.error.message);
  if (!m) {
    assert.match(res.body.error.message, /takes no parameters/);
    return [];
  }
  return m[1].split(', ');
}
/** Follows a local $ref. */
const deref = (s: any): any =>
  s?.$ref
    ? s.$ref
        .split('/')
        .slice(1)
        .reduce((o: any, k: string) => o[k], doc)
    : s;

describe('GET /v1/openapi.json', () => {
  it('declares OpenAPI 3.1 and version 1.0.0', () => {
    assert.match(doc.openapi, /^3\.1(\.\d+)?$/);
    assert.equal(doc.info.version, '1.0.0');
    assert.equal(typeof doc.info.title, 'string');
  });
  it('lists every endpoint path with {id} templates, and no other', () => {
    assert.deepEqual(Object.keys(doc.paths).sort(), Object.keys(PATHS).sort());
  });
  it('describes only GET operations, each with a unique operationId', () => {
    const opIds: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      assert.deepEqual(Object.keys(item), ['get'], path);
      opIds.push(item.get.operationId);
    }
    assert.equal(new Set(opIds).size, opIds.length);
  });
  for (const [path, entry] of Object.entries(PATHS)) {
    it(`lists exactly the query parameters ${path} accepts`, async () => {
      assert.deepEqual(
        queryParams(path)
          .map((p) => p.name)
          .sort(),
        (await acceptedParams(entry.example)).sort(),
      );
    });
  }
  it('declares the path id of every templated path as a required string of 1 to 120 characters', () => {
    for (const path of Object.keys(PATHS).filter((p) => p.includes('{id}'))) {
      const id = (op(path).parameters as any[]).filter((p) => p.in === 'path');
      assert.deepEqual(
        id.map((p) => [p.name, p.required, p.schema.minLength, p.schema.maxLength]),
        [['id', true, 1, 120]],
        path,
      );
    }
  });
  it('marks location_id, from and to of observations and since of changes required, every other query parameter optional', () => {
    for (const path of Object.keys(PATHS)) {
      for (const p of queryParams(path)) {
        const required =
          (path === '/v1/market/metrics/{id}/observations' && ['location_id', 'from', 'to'].includes(p.name)) ||
          (path === '/v1/changes' && p.name === 'since');
        assert.equal(p.required, required, `${path} ${p.name}`);
      }
    }
  });
  it('documents the parameter rules of the spec (enums, ranges, lengths, defaults)', () => {
    const param = (path: string, name: string) => queryParams(path).find((p) => p.name === name)!.schema;
    assert.deepEqual(param('/v1/listings', 'furnishing').enum, ['SHELL', 'FURNISHED', 'UPHOLSTERED']);
    assert.deepEqual(param('/v1/listings', 'locale').enum, ['en', 'nl', 'de', 'fr', 'es']);
    assert.equal(param('/v1/listings', 'locale').default, 'en');
    assert.deepEqual(
      [
        param('/v1/listings', 'limit').minimum,
        param('/v1/listings', 'limit').maximum,
        param('/v1/listings', 'limit').default,
      ],
      [1, 100, 20],
    );
    assert.deepEqual(
      [
        param('/v1/listings/{id}/similar', 'limit').minimum,
        param('/v1/listings/{id}/similar', 'limit').maximum,
        param('/v1/listings/{id}/similar', 'limit').default,
      ],
      [1, 20, 10],
    );
    assert.deepEqual([param('/v1/listings', 'q').minLength, param('/v1/listings', 'q').maxLength], [1, 200]);
    assert.equal(param('/v1/listings', 'cursor').maxLength, 4096);
    for (const n of ['min_price', 'max_price', 'min_size', 'max_size']) {
      assert.deepEqual(
        [param('/v1/listings', n).type, param('/v1/listings', n).minimum, param('/v1/listings', n).maximum],
        ['integer', 0, 10_000_000],
        n,
      );
    }
    assert.deepEqual(
      [param('/v1/listings', 'min_rooms').minimum, param('/v1/listings', 'min_rooms').maximum],
      [0, 100],
    );
    assert.equal(param('/v1/listings', 'property_type').maxLength, 120);
    assert.deepEqual(
      [param('/v1/internet/plans', 'min_download_mbps').type, param('/v1/internet/plans', 'min_download_mbps').maximum],
      ['number', 100_000],
    );
    assert.equal(param('/v1/internet/plans', 'max_monthly_price_cents').type, 'integer');
    assert.equal(param('/v1/market/metrics/{id}/observations', 'from').format, 'date');
  });
  it('gives every operation a default response in the error envelope, for the statuses it does not list', () => {
    for (const path of Object.keys(PATHS))
      assert.equal(op(path).responses.default?.$ref, '#/components/responses/OtherError', path);
    const other = doc.components.responses.OtherError;
    assert.equal(other.content['application/json'].schema.$ref, '#/components/schemas/Error');
    for (const code of ['request_timeout', 'request_too_large', 'internal_error', 'method_not_allowed'])
      assert.ok(other.description.includes(`\`${code}\``), code);
  });
  it('gives every operation a 400 response', () => {
    for (const path of Object.keys(PATHS)) assert.ok(op(path).responses['400'], `${path} 400`);
  });
  it('gives every non-public operation 401, 429 and 503 responses, and the public ones an empty security list', () => {
    for (const [path, { public: pub }] of Object.entries(PATHS)) {
      const r = op(path).responses;
      if (pub) assert.deepEqual(op(path).security, [], `${path} is public`);
      else for (const code of ['401', '429', '503']) assert.ok(r[code], `${path} ${code}`);
    }
  });
  it('gives every operation with a path id a 404 response', () => {
    for (const path of Object.keys(PATHS).filter((p) => p.includes('{id}'))) assert.ok(op(path).responses['404'], path);
  });
  it("describes errors with the spec's envelope {error: {code, message, request_id}}", () => {
    const e = doc.components.schemas.Error;
    assert.deepEqual(e.required, ['error']);
    assert.deepEqual(e.properties.error.required.sort(), ['code', 'message', 'request_id']);
    assert.equal(deref(op('/v1/listings').responses['400'].content['application/json'].schema), e);
  });
  it('resolves every $ref in the document', () => {
    const refs: string[] = [];
    const visit = (x: unknown) => {
      if (Array.isArray(x)) x.forEach(visit);
      else if (x && typeof x === 'object')
        for (const [k, v] of Object.entries(x)) {
          if (k === '$ref') refs.push(v as string);
          else visit(v);
        }
    };
    visit(doc);
    assert.ok(refs.length > 0);
    for (const r of refs) assert.ok(deref({ $ref: r }) !== undefined, r);
  });
  for (const [path, entry] of Object.entries(PATHS)) {
    if (path === '/v1/openapi.json') continue;
    it(`documents the field set ${path} actually returns`, async () => {
      const res = await server.get(entry.example);
      assert.equal(res.status, 200);
      const schema = op(path).responses['200'].content['application/json'].schema;
      assert.deepEqual(Object.keys(schema.properties).sort(), Object.keys(res.body).sort(), 'envelope members');
      if (path === '/v1/ping') return;
      const dataSchema = schema.properties.data;
      const item = dataSchema.type === 'array' ? dataSchema.items : dataSchema;
      const sample = Array.isArray(res.body.data) ? res.body.data[0] : res.body.data;
      assert.ok(sample, 'the example returns data');
      assert.deepEqual(Object.keys(item.properties).sort(), Object.keys(sample).sort(), 'data fields');
      if (item.properties.location)
        assert.deepEqual(Object.keys(item.properties.location.properties).sort(), Object.keys(sample.location).sort());
    });
  }
});

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
    const { path } = await buildTestSnapshot();
    const limited = await startServer({ SNAPSHOT_PATH: path, RATE_LIMIT_PER_MINUTE: '1' });
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

describe('the examples on the shipped sample', () => {
  let sample: TestServer;
  let sampleId = '';
  before(async () => {
    const { path, result } = await buildTestSnapshot(join(ROOT, 'data'));
    sampleId = result.snapshotId!;
    sample = await startServer({ SNAPSHOT_PATH: path });
  });
  after(async () => {
    await sample?.close();
  });
  // The shipped sample is built without --previous: its change history is empty, so /v1/changes is asked for the
  // changes since the sample itself (an empty page), and its records are not looked for.
  const example = (p: any) => (p.name === 'since' ? sampleId : (p.example ?? p.schema.examples[0]));
  const NO_HISTORY = '/v1/changes';
  /** An operation's request with its path parameters' examples and the query parameters `which` picks. */
  const requestOf = (template: string, which: (p: any) => boolean) => {
    const params = doc.paths[template].get.parameters as any[];
    let url = template;
    for (const p of params.filter((x) => x.in === 'path')) url = url.replace(`{${p.name}}`, example(p));
    const query = Object.fromEntries(
      params.filter((p) => p.in === 'query' && p.name !== 'cursor' && which(p)).map((p) => [p.name, example(p)]),
    );
    return withParams(url, query);
  };

  it("answers 200 to every operation called with its parameters' examples", async () => {
    for (const template of Object.keys(doc.paths)) {
      const url = requestOf(template, () => true);
      const res = await sample.get(url);
      assert.equal(res.status, 200, `${url}: ${res.text.slice(0, 300)}`);
    }
  });

  it("finds records on the shipped sample with each filter's example alone", async () => {
    const empty: string[] = [];
    for (const template of Object.keys(doc.paths)) {
      if (template === NO_HISTORY) continue;
      const params = doc.paths[template].get.parameters as any[];
      for (const p of params.filter((x) => x.in === 'query' && !x.required)) {
        if (['cursor', 'limit', 'locale'].includes(p.name)) continue;
        const url = requestOf(template, (x) => x.required === true || x.name === p.name);
        const res = await sample.get(url);
        assert.equal(res.status, 200, url);
        if (Array.isArray(res.body.data) && res.body.data.length === 0) empty.push(url);
      }
    }
    assert.deepEqual(empty, []);
  });

  /**
   * Where an example differs from what the service answers: a text may be cut (its start, then "…"); the data of a
   * paged collection may show some of its records (found by id, in the order served), a ranked or bounded list of
   * records its first ones, and a list of values (a series) is shown whole. Every other value, list and key (in its
   * order) is as served.
   */
  type Top = 'collection' | 'list' | false;
  function differences(shown: unknown, served: unknown, at: string, top: Top = false): string[] {
    if (typeof shown === 'string' && typeof served === 'string') {
      const cut = shown.endsWith('…') && served.length >= shown.length && served.startsWith(shown.slice(0, -1));
      return shown === served || cut ? [] : [`${at}: shows ${JSON.stringify(shown)}, served ${JSON.stringify(served)}`];
    }
    if (Array.isArray(shown) && Array.isArray(served)) {
      const records = shown.every((x) => typeof x?.id === 'string');
      if (top === 'collection' && records) {
        // Records of a list: each as served, found by its id, in the order served.
        const at2 = shown.map((x) => served.findIndex((y) => y?.id === x.id));
        if (at2.some((i, k) => i === -1 || (k > 0 && i <= at2[k - 1])))
          return [`${at}: shows ids ${shown.map((x) => x.id).join()} (not served in this order: ${at2.join()})`];
        return shown.flatMap((x, k) => differences(x, served[at2[k]], `${at}[${x.id}]`));
      }
      if (top === 'list' && records ? shown.length > served.length : shown.length !== served.length)
        return [`${at}: shows ${shown.length} items, served ${served.length}`];
      return shown.flatMap((x, i) => differences(x, served[i], `${at}[${i}]`));
    }
    if (shown && served && typeof shown === 'object' && typeof served === 'object' && !Array.isArray(served)) {
      const [a, b] = [Object.keys(shown), Object.keys(served)];
      if (a.join() !== b.join()) return [`${at}: shows keys ${a.join()}, served ${b.join()}`];
      return a.flatMap((k) => differences((shown as any)[k], (served as any)[k], `${at}.${k}`));
    }
    return Object.is(shown, served) ? [] : [`${at}: shows ${JSON.stringify(shown)}, served ${JSON.stringify(served)}`];
  }

  it('shows in its 200 examples what the service answers to the example request (long texts cut with "…")', async () => {
    const problems: string[] = [];
    let compared = 0;
    for (const template of Object.keys(doc.paths)) {
      if (template === '/v1/openapi.json') continue; // its example is the document's outline
      if (template === NO_HISTORY) continue;
      const shown = doc.paths[template].get.responses['200'].content['application/json'].example;
      if (shown === undefined) continue;
      // The required parameters only: the answer an example shows is the one to the plainest request.
      const url = requestOf(template, (p) => p.required === true);
      const res = await sample.get(url);
      assert.equal(res.status, 200, url);
      compared++;
      problems.push(
        ...('data' in shown
          ? differences(shown.data, res.body.data, `${url} data`, 'pagination' in shown ? 'collection' : 'list')
          : differences(shown, res.body, `${url} body`)),
      );
    }
    assert.ok(compared >= 20, `${compared} examples compared`);
    assert.deepEqual(problems, []);
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

describe('the rules the document states beyond the schemas', () => {
  it('states the query string limits the service applies', async () => {
    const m = /at most (\d+) characters and (\d+) parameters/.exec(doc.info.description);
    assert.ok(m, 'the introduction states the limits');
    const [chars, params] = [Number(m[1]), Number(m[2])];
    const long = await server.get(`/v1/owners?q=${'a'.repeat(chars - 1)}`);
    assertError(long, 400, { names: new RegExp(`longer than ${chars} characters`) });
    const many = await server.get(`/v1/owners?${Array.from({ length: params + 1 }, (_, i) => `p${i}=1`).join('&')}`);
    assertError(many, 400, { names: new RegExp(`more than ${params} parameters`) });
  });

  it("states q's letter-or-digit rule as a pattern, which the service applies", async () => {
    const schema = (op('/v1/owners').parameters as any[]).find((p) => p.name === 'q').schema;
    const pattern = new RegExp(schema.pattern, 'u');
    for (const text of ['!? -', '㎏', '\u0301', '😀', 'a', 'é', '7', 'Ж', '—x—']) {
      const res = await server.get(`/v1/owners?q=${encodeURIComponent(text)}`);
      assert.equal(res.status === 200, pattern.test(text), `q=${JSON.stringify(text)} answered ${res.status}`);
    }
  });
});
