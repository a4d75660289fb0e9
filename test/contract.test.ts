// Contract tests over HTTP: every endpoint's envelope and exact field set, 404 and 405 (the 400s are in
// contract-params.test.ts and contract-filters.test.ts). Real snapshot (basic fixture, real compiler), real service, fetch.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixtureRequest } from './support/endpoints.ts';
import { withParams } from './support/model.ts';
import { useServer } from './support/server.ts';
import {
  assertBounded,
  assertCollection,
  assertDetail,
  assertError,
  assertShape,
  ENDPOINTS,
  filled,
  LISTING_DETAIL,
} from './support/shapes.ts';

const server = useServer();
const pathOnly = (p: string) => p.split('?')[0];

describe('success envelopes and field sets', () => {
  it('GET /v1/ping returns exactly {service, status} with no envelope', async () => {
    const res = await server.get('/v1/ping');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assertShape(res.body, { service: 'string', status: 'string' }, 'body');
    assert.match(res.body.service, /-api$/);
    assert.equal(res.body.status, 'ok');
  });

  for (const e of ENDPOINTS) {
    it(`GET ${e.pattern} returns the ${e.kind} envelope with the spec's fields`, async () => {
      const res = await server.get((await fixtureRequest(server, e.pattern))!);
      if (e.kind === 'collection') assertCollection(res, e.shape);
      else if (e.kind === 'bounded') assertBounded(res, e.shape);
      else assertDetail(res, e.shape);
      if (e.min !== undefined)
        assert.ok(
          res.body.data.length >= e.min,
          `at least ${e.min} items (the fixture has them), got ${res.body.data.length}`,
        );
    });
  }

  it('fills every listing detail field with the spec type when the source has every value (lst-001)', async () => {
    const res = await server.get('/v1/listings/lst-001');
    assertShape(res.body.data, filled(LISTING_DETAIL));
    assert.deepEqual(res.body.data.sources, [{ url: 'https://src.example.nl/lst-001', type: 'agency_site' }]);
    assert.deepEqual(res.body.data.images, ['https://img.example.nl/lst-001/1.jpg']);
    assert.deepEqual(res.body.data.attributes, { balcony: true });
  });

  it('returns null, not zero or an empty string, for values the source does not have', async () => {
    const listing = (await server.get('/v1/listings/lst-010')).body.data;
    assert.equal(listing.price_eur, null);
    const owner = (await server.get('/v1/owners/own-2')).body.data;
    for (const k of [
      'website_url',
      'image_url',
      'phone_numbers',
      'emails',
      'areas_served',
      'certifications',
      'description_short',
      'description',
      'updated_at',
    ]) {
      assert.equal(owner[k], null, `owner.${k}`);
    }
    const plan = (await server.get('/v1/internet/plans?provider_id=inet-kpn')).body.data.find(
      (p: any) => p.id === 'plan-1',
    );
    assert.equal(plan.installation_fee_cents, null);
    assert.equal(plan.activation_fee_cents, 0, 'a real zero stays 0');
    const platform = (await server.get('/v1/platforms/plat-funda')).body.data;
    assert.equal(platform.registration_fee_amount, null);
    assert.equal(platform.registration_required, false, 'a real false stays false');
  });

  it('returns integer cents and boolean flags in their spec types', async () => {
    const plans = (await server.get('/v1/internet/plans')).body.data;
    for (const p of plans)
      for (const k of ['regular_monthly_price_cents', 'intro_monthly_price_cents', 'activation_fee_cents']) {
        assert.ok(p[k] === null || Number.isInteger(p[k]), `${p.id}.${k} is an integer`);
      }
    const kamernet = (await server.get('/v1/platforms/plat-kamernet')).body.data;
    assert.equal(kamernet.registration_required, true);
    assert.equal(kamernet.subscription_fee_from, 19.95);
  });

  it('echoes the requested locale in meta.locale on every endpoint', async () => {
    for (const e of ENDPOINTS) {
      const path = (await fixtureRequest(server, e.pattern))!;
      for (const locale of ['nl', 'es']) {
        const res = await server.get(withParams(path, { locale }));
        assert.equal(res.status, 200, `${path} ${locale}: ${res.text.slice(0, 200)}`);
        assert.equal(res.body.meta.locale, locale, `${path} meta.locale`);
      }
    }
  });

  it('gives every response a distinct request id, equal to the X-Request-Id header', async () => {
    const a = await server.get('/v1/listings/stats');
    const b = await server.get('/v1/listings/stats');
    assert.equal(a.body.meta.request_id, a.headers.get('x-request-id'));
    assert.notEqual(a.body.meta.request_id, b.body.meta.request_id);
  });
});

// ---------------------------------------------------------------------------------------- 404 / 405

describe('404 for unknown and non-public records', () => {
  const UNKNOWN = [
    '/v1/listings/lst-999',
    '/v1/listings/lst-999/similar',
    '/v1/owners/own-999',
    '/v1/internet/providers/inet-999',
    '/v1/insurance/providers/ins-999',
    '/v1/platforms/plat-999',
    '/v1/articles/art-999',
    '/v1/locations/loc-999',
    '/v1/glossary/gl-999',
    '/v1/market/metrics/no_such_metric/observations?location_id=loc-ams&from=2026-01-01&to=2026-03-01',
  ];
  for (const path of UNKNOWN) {
    it(`GET ${pathOnly(path)} returns 404 not_found for an unknown id`, async () => {
      assertError(await server.get(path), 404, { code: 'not_found' });
    });
  }
  const HIDDEN: [string, string][] = [
    ['/v1/listings/lst-004', 'an inactive listing'],
    ['/v1/listings/lst-005', 'an unpublished listing'],
    ['/v1/listings/lst-006', 'a listing for sale, not rent'],
    ['/v1/listings/lst-004/similar', 'similar to an inactive listing'],
    ['/v1/owners/own-3', 'an unpublished owner'],
    ['/v1/internet/providers/inet-old', 'an unpublished internet provider'],
    ['/v1/insurance/providers/ins-hidden', 'an unpublished insurance provider'],
    ['/v1/platforms/plat-hidden', 'an unpublished platform'],
    ['/v1/articles/art-2', 'an unpublished article'],
    ['/v1/locations/loc-hidden', 'an unpublished location'],
  ];
  for (const [path, what] of HIDDEN) {
    it(`GET ${path} returns 404 for ${what}`, async () => {
      assertError(await server.get(path), 404, { code: 'not_found' });
    });
  }
  it('does not match a listing by its slug (ids only)', async () => {
    assertError(await server.get('/v1/listings/lst-001-slug'), 404);
  });
});

describe('404 for unknown routes', () => {
  const ROUTES = [
    '/v1/nope',
    '/v2/listings',
    '/v1',
    '/v1/listings/lst-001/similar/extra',
    '/v1/internet/plans/plan-1',
    '/v1/insurance/products/insp-1',
    '/v1/insurance/providers/ins-centraal/products',
    '/v1/articles/art-1/related',
    '/v1/glossary/gl-huurtoeslag/terms',
    '/v1/market/metrics/median_rent',
    // Paths are exact and lower-case (polka's string patterns would match these case-insensitively; the app gives it RegExps).
    '/V1/LISTINGS',
    '/v1/Listings/lst-001',
    '/v1/PING',
    // A route's `.` is a dot, not any character.
    '/v1/openapiXjson',
    '/v1/openapi/json',
  ];
  for (const path of ROUTES) {
    it(`GET ${path} returns 404 not_found with the error envelope`, async () => {
      assertError(await server.get(path), 404, { code: 'not_found' });
    });
  }
});

describe('405 for other methods on known paths', () => {
  const KNOWN = [
    '/v1/listings',
    '/v1/listings/lst-001',
    '/v1/listings/stats',
    '/v1/owners/own-1',
    '/v1/ping',
    '/v1/glossary',
    '/v1/articles',
  ];
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    for (const path of KNOWN) {
      it(`${method} ${path} returns 405 with an Allow header containing GET`, async () => {
        const res = await server.get(path, { method });
        assertError(res, 405);
        assert.match(res.headers.get('allow') ?? '', /\bGET\b/);
      });
    }
  }
  it("POST to /v1/openapiXjson (not the document's path) is 404, not 405", async () => {
    assertError(await server.get('/v1/openapiXjson', { method: 'POST' }), 404, { code: 'not_found' });
  });
  it('POST to an unknown path is 404, not 405', async () => {
    assertError(await server.get('/v1/nope', { method: 'POST' }), 404, { code: 'not_found' });
  });
});
