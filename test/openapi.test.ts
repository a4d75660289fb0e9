// GET /v1/openapi.json: a 3.1 document, version 1.0.0, every path and every query parameter each route accepts
// (checked against what the route itself accepts), the error responses of every operation, the field sets of the
// 200 responses, and the rules it states beyond the schemas (checked against real responses).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { docPath, ID_ROUTES, PAGED } from './support/endpoints.ts';
import { useDocument } from './support/openapi.ts';
import { assertError, ENDPOINTS, SHAPES } from './support/shapes.ts';

const { server, doc, PATHS, op, queryParams, deref } = useDocument();
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

describe('GET /v1/openapi.json', () => {
  it('declares OpenAPI 3.1 and version 1.0.0', () => {
    assert.match(doc.openapi, /^3\.1(\.\d+)?$/);
    assert.equal(doc.info.version, '1.0.0');
    assert.equal(typeof doc.info.title, 'string');
  });
  it('lists every endpoint path with {id} templates, and no other', () => {
    assert.deepEqual(Object.keys(doc.paths).sort(), Object.keys(PATHS).sort());
  });
  it("is what the shared tests' endpoint lists are checked against: each list has every path it should", () => {
    const paths = Object.keys(doc.paths).filter((p) => !op(p).security); // data paths (the public ones say security: [])
    const names = (p: string) => queryParams(p).map((q) => q.name);
    const required = (p: string) => queryParams(p).filter((q) => q.required);
    // limit, q and cursor rules (contract-params): every collection that takes all three.
    const paged = paths.filter((p) => ['limit', 'q', 'cursor'].every((n) => names(p).includes(n)));
    assert.deepEqual(PAGED.map(docPath).sort(), paged.sort());
    // path id rules (contract-params): every path with an id and no required query parameter.
    const ids = paths.filter((p) => p.includes('{id}') && required(p).length === 0);
    assert.deepEqual(ID_ROUTES.map(docPath).sort(), ids.sort());
    // envelopes, field sets and locale (contract, contract-params): every data path but /v1/changes (changes.test.ts).
    assert.deepEqual(ENDPOINTS.map((e) => docPath(e.pattern)).sort(), paths.filter((p) => p !== '/v1/changes').sort());
    for (const e of ENDPOINTS)
      assert.ok(e.shape, `${e.pattern} has the spec's item shape in SHAPES (support/shapes.ts)`);
    assert.deepEqual(Object.keys(SHAPES).sort(), ENDPOINTS.map((e) => e.pattern).sort());
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
