// Contract tests over HTTP: every endpoint's envelope and exact field set, every 400 class per endpoint family,
// the error envelope, 404 and 405. Real snapshot (basic fixture, real compiler), real service, fetch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from './support/server.ts';
import {
  ARTICLE,
  assert400,
  assertBounded,
  assertCollection,
  assertDetail,
  assertError,
  assertShape,
  filled,
  INSURANCE_PRODUCT,
  INSURANCE_PROVIDER,
  INTERNET_PLAN,
  INTERNET_PROVIDER_DETAIL,
  INTERNET_PROVIDER_SUMMARY,
  LISTING_DETAIL,
  LISTING_STATS,
  LISTING_SUMMARY,
  LOCATION,
  LOCATION_DETAIL,
  METRIC,
  OBSERVATION,
  OWNER_DETAIL,
  OWNER_SUMMARY,
  PLATFORM_DETAIL,
  PLATFORM_SUMMARY,
  type Shape,
} from './support/shapes.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

let server: TestServer;
before(async () => {
  const { path } = await buildTestSnapshot();
  server = await startServer({ SNAPSHOT_PATH: path });
});
after(async () => {
  await server?.close();
});

const OBS = '/v1/market/metrics/median_rent/observations';
const OBS_OK = `${OBS}?location_id=loc-ams&from=2026-01-01&to=2026-12-31`;
const long = (n: number, c = 'a') => c.repeat(n);

/** The discovery endpoints' shapes (fields the spec leaves open; see docs/api-notes.md). */
const { content: _content, ...ARTICLE_SUMMARY } = ARTICLE;
const GLOSSARY_ENTRY: Shape = {
  id: 'string',
  slug: 'string?',
  term: 'string?',
  definition: 'string?',
  updated_at: 'timestamp?',
};

type Kind = 'collection' | 'bounded' | 'detail';
/** Every data endpoint with a request that succeeds on the basic fixture, and the shape of its items. */
const ENDPOINTS: { path: string; kind: Kind; shape: Shape; min?: number }[] = [
  { path: '/v1/listings', kind: 'collection', shape: LISTING_SUMMARY, min: 9 },
  { path: '/v1/listings/lst-001', kind: 'detail', shape: filled(LISTING_DETAIL) },
  { path: '/v1/listings/lst-001/similar', kind: 'bounded', shape: LISTING_SUMMARY, min: 1 },
  { path: '/v1/listings/stats', kind: 'detail', shape: filled(LISTING_STATS) },
  { path: '/v1/owners', kind: 'collection', shape: OWNER_SUMMARY, min: 2 },
  { path: '/v1/owners/own-1', kind: 'detail', shape: OWNER_DETAIL },
  { path: '/v1/internet/providers', kind: 'collection', shape: INTERNET_PROVIDER_SUMMARY, min: 2 },
  { path: '/v1/internet/providers/inet-kpn', kind: 'detail', shape: INTERNET_PROVIDER_DETAIL },
  { path: '/v1/internet/plans', kind: 'collection', shape: INTERNET_PLAN, min: 3 },
  { path: '/v1/insurance/products', kind: 'collection', shape: INSURANCE_PRODUCT, min: 2 },
  { path: '/v1/insurance/providers/ins-centraal', kind: 'detail', shape: INSURANCE_PROVIDER },
  { path: '/v1/platforms', kind: 'collection', shape: PLATFORM_SUMMARY, min: 2 },
  { path: '/v1/platforms/plat-funda', kind: 'detail', shape: PLATFORM_DETAIL },
  { path: '/v1/articles', kind: 'collection', shape: ARTICLE_SUMMARY, min: 1 },
  { path: '/v1/articles/art-1', kind: 'detail', shape: ARTICLE },
  { path: '/v1/insurance/providers', kind: 'collection', shape: INSURANCE_PROVIDER, min: 1 },
  { path: '/v1/glossary', kind: 'collection', shape: GLOSSARY_ENTRY, min: 1 },
  { path: '/v1/glossary/gl-huurtoeslag', kind: 'detail', shape: GLOSSARY_ENTRY },
  { path: OBS_OK, kind: 'bounded', shape: OBSERVATION, min: 1 },
  { path: '/v1/locations', kind: 'collection', shape: LOCATION, min: 7 },
  { path: '/v1/locations/loc-ams-pijp', kind: 'detail', shape: LOCATION_DETAIL },
  { path: '/v1/market/metrics', kind: 'bounded', shape: METRIC, min: 3 },
];
const withLocale = (path: string, locale: string) => `${path + (path.includes('?') ? '&' : '?')}locale=${locale}`;
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
    it(`GET ${e.path} returns the ${e.kind} envelope with the spec's fields`, async () => {
      const res = await server.get(e.path);
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
      for (const locale of ['nl', 'es']) {
        const res = await server.get(withLocale(e.path, locale));
        assert.equal(res.status, 200, `${e.path} ${locale}: ${res.text.slice(0, 200)}`);
        assert.equal(res.body.meta.locale, locale, `${e.path} meta.locale`);
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

// ---------------------------------------------------------------------------------------- 400

/** Endpoints that take locale (every data endpoint) with a base request that otherwise succeeds. */
const LOCALE_ENDPOINTS = ENDPOINTS.map((e) => e.path);
const join = (path: string, qs: string) => path + (path.includes('?') ? '&' : '?') + qs;

describe('400 for any endpoint: unknown, repeated and unsupported parameters', () => {
  it('GET /v1/ping with an unknown parameter returns 400 naming it', async () => {
    assert400(await server.get('/v1/ping?verbose=1'), 'verbose');
  });
  it('GET /v1/openapi.json with an unknown parameter returns 400 naming it', async () => {
    assert400(await server.get('/v1/openapi.json?format=yaml'), 'format');
  });
  for (const path of LOCALE_ENDPOINTS) {
    it(`GET ${pathOnly(path)} returns 400 naming an unknown parameter`, async () => {
      assert400(await server.get(join(path, 'colour=red')), 'colour');
    });
    it(`GET ${pathOnly(path)} returns 400 naming a repeated parameter`, async () => {
      assert400(await server.get(join(path, 'locale=en&locale=nl')), 'locale');
    });
    it(`GET ${pathOnly(path)} returns 400 for an unsupported locale`, async () => {
      assert400(await server.get(join(path, 'locale=it')), 'locale');
    });
  }
  it('rejects a locale in another case or with a region (EN, nl-NL) and an empty locale', async () => {
    for (const l of ['EN', 'nl-NL', '']) assert400(await server.get(`/v1/listings?locale=${l}`), 'locale');
  });
  it('treats a repeated parameter as repeated even when both values are equal', async () => {
    assert400(await server.get('/v1/owners?limit=5&limit=5'), 'limit');
  });
  it('rejects a parameter name that differs only in case as unknown', async () => {
    assert400(await server.get('/v1/listings?Locale=en'), 'Locale');
  });
  it('rejects names of Object.prototype members (__proto__, constructor, toString) as unknown parameters', async () => {
    for (const path of ['/v1/listings', '/v1/ping', '/v1/owners/own_00001', '/v1/listings/stats']) {
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
        const res = await server.get(`${path}?${name}=1`);
        assert400(res, name);
        assert.match(res.body.error.message, /^Unknown parameter/, `${path} ${name}`);
      }
    }
  });
  it('rejects a badly percent-encoded query value naming the parameter', async () => {
    assert400(await server.get('/v1/listings?q=%E0%A4%A'), 'q');
  });
  it('rejects an oversized query string (more than 32 parameters) with 400', async () => {
    const qs = Array.from({ length: 33 }, (_, i) => `p${i}=1`).join('&');
    assertError(await server.get(`/v1/listings?${qs}`), 400, { code: 'invalid_request' });
  });
  it('does not count empty parts ("&&") as parameters', async () => {
    assert.equal((await server.get(`/v1/listings?${'&'.repeat(40)}limit=1${'&'.repeat(40)}`)).status, 200);
  });
});

describe('400 on paginated collections: limit, q and cursor rules', () => {
  const COLLECTIONS = [
    '/v1/listings',
    '/v1/owners',
    '/v1/internet/providers',
    '/v1/internet/plans',
    '/v1/insurance/products',
    '/v1/platforms',
    '/v1/locations',
    '/v1/articles',
    '/v1/insurance/providers',
    '/v1/glossary',
  ];
  for (const path of COLLECTIONS) {
    it(`GET ${path} returns 400 for a malformed limit ("abc", "1.5", empty)`, async () => {
      for (const v of ['abc', '1.5', '']) assert400(await server.get(`${path}?limit=${v}`), 'limit');
    });
    it(`GET ${path} returns 400 for an out-of-range limit (0, 101, -1)`, async () => {
      for (const v of ['0', '101', '-1']) assert400(await server.get(`${path}?limit=${v}`), 'limit');
    });
    it(`GET ${path} accepts limit 1 and 100`, async () => {
      for (const v of [1, 100]) assert.equal((await server.get(`${path}?limit=${v}`)).body.pagination.limit, v);
    });
    it(`GET ${path} returns 400 for a q of 201 characters or an empty q`, async () => {
      assert400(await server.get(`${path}?q=${long(201)}`), 'q');
      assert400(await server.get(`${path}?q=`), 'q');
    });
    it(`GET ${path} accepts a q of exactly 200 characters`, async () => {
      assert.equal((await server.get(`${path}?q=${long(200)}`)).status, 200);
    });
    it(`GET ${path} counts q in characters (code points): 200 emoji pass, 201 do not`, async () => {
      const emoji = (n: number) => encodeURIComponent(`a${'\u{1F600}'.repeat(n - 1)}`); // a letter, so q has a term
      assert.equal((await server.get(`${path}?q=${emoji(200)}`)).status, 200);
      assert400(await server.get(`${path}?q=${emoji(201)}`), 'q');
    });
    it(`GET ${path} returns 400 for a cursor over 4096 characters or an empty cursor`, async () => {
      assert400(await server.get(`${path}?cursor=${long(4097)}`), 'cursor');
      assert400(await server.get(`${path}?cursor=`), 'cursor');
    });
    it(`GET ${path} returns 400 for a q with no letter or digit`, async () => {
      assert400(await server.get(`${path}?q=${encodeURIComponent('!? -')}`), 'q');
    });
  }
});

describe('400 on detail endpoints: path id rules', () => {
  const DETAILS = [
    '/v1/listings/:id',
    '/v1/listings/:id/similar',
    '/v1/owners/:id',
    '/v1/internet/providers/:id',
    '/v1/insurance/providers/:id',
    '/v1/platforms/:id',
    '/v1/articles/:id',
    '/v1/locations/:id',
    '/v1/glossary/:id',
  ];
  for (const path of DETAILS) {
    it(`GET ${path} returns 400 for a path id of 121 characters`, async () => {
      assert400(await server.get(path.replace(':id', long(121, 'x'))), 'id');
    });
    it(`GET ${path} answers 404, not 400, for an unknown id of exactly 120 characters`, async () => {
      assertError(await server.get(path.replace(':id', long(120, 'x'))), 404, { code: 'not_found' });
    });
    it(`GET ${path} counts the path id in characters: 120 emoji are a 404, 121 a 400`, async () => {
      assertError(await server.get(path.replace(':id', encodeURIComponent('\u{1F3E0}'.repeat(120)))), 404, {
        code: 'not_found',
      });
      assert400(await server.get(path.replace(':id', encodeURIComponent('\u{1F3E0}'.repeat(121)))), 'id');
    });
  }
  it('GET /v1/market/metrics/{id}/observations returns 400 for a metric id of 121 characters', async () => {
    assert400(await server.get(OBS_OK.replace('median_rent', long(121, 'm'))), 'id');
  });
  it('decodes a percent-encoded path id once (lst%2D001 is lst-001; lst%252D001 is not)', async () => {
    assert.equal((await server.get('/v1/listings/lst%2D001')).body.data.id, 'lst-001');
    assertError(await server.get('/v1/listings/lst%252D001'), 404, { code: 'not_found' });
    assertError(await server.get('/v1/listings/100%25'), 404, { code: 'not_found' });
  });
  it('returns 400 for a path id that is not percent-encoded UTF-8, as for a query value', async () => {
    for (const path of [...DETAILS, '/v1/market/metrics/:id/observations']) {
      for (const bad of ['%FF', 'lst%E0%A4%A', 'a%C3']) {
        const res = await server.get(
          path.replace(':id', bad) + (path.includes('observations') ? OBS_OK.slice(OBS.length) : ''),
        );
        assert400(res, 'id');
        assert.match(res.body.error.message, /^Path parameter "id" is not correctly percent-encoded\.$/, path);
      }
    }
    // A "%" that is itself encoded is part of the id: a 404 for an unknown one.
    assertError(await server.get('/v1/listings/100%25FF'), 404, { code: 'not_found' });
  });
  it('counts a percent-encoded path id by its decoded length', async () => {
    assert400(await server.get(`/v1/listings/${long(119, 'x')}%41%41`), 'id');
    assertError(await server.get(`/v1/listings/${long(119, 'x')}%41`), 404);
  });
});

describe('400 on listing search and stats filters', () => {
  for (const path of ['/v1/listings', '/v1/listings/stats']) {
    it(`GET ${path} returns 400 for lowercase furnishing`, async () => {
      assert400(await server.get(`${path}?furnishing=furnished`), 'furnishing');
    });
    it(`GET ${path} returns 400 for an unknown furnishing value`, async () => {
      assert400(await server.get(`${path}?furnishing=PARTLY`), 'furnishing');
    });
    it(`GET ${path} accepts each furnishing value SHELL, FURNISHED and UPHOLSTERED`, async () => {
      for (const f of ['SHELL', 'FURNISHED', 'UPHOLSTERED'])
        assert.equal((await server.get(`${path}?furnishing=${f}`)).status, 200);
    });
    for (const p of ['min_price', 'max_price', 'min_size', 'max_size', 'min_rooms']) {
      it(`GET ${path} returns 400 for a malformed or non-integer ${p} ("abc", "1.5", "1e", empty, "1e2", "10.0", ".5e1", a decimal just above the maximum)`, async () => {
        for (const v of [
          'abc',
          '1.5',
          '1e',
          '',
          '1e2',
          '10.0',
          '.5e1',
          '100.0000000000000001',
          '10000000.00000000001',
        ]) {
          const res = await server.get(`${path}?${p}=${v}`);
          assert400(res, p);
          const rule = `must be an integer from 0 to ${p === 'min_rooms' ? 100 : 10000000} (got `;
          assert.ok(res.body.error.message.includes(rule), `${p}=${v}: ${res.body.error.message}`);
        }
      });
    }
    for (const [p, bad] of [
      ['min_price', ['-1', '10000001']],
      ['max_price', ['-1', '10000001']],
      ['min_size', ['-1', '10000001']],
      ['max_size', ['-1', '10000001']],
      ['min_rooms', ['-1', '101']],
    ] as const) {
      it(`GET ${path} returns 400 for an out-of-range ${p} (${bad.join(', ')})`, async () => {
        for (const v of bad) assert400(await server.get(`${path}?${p}=${v}`), p);
      });
    }
    it(`GET ${path} accepts the range bounds (0 and 10000000; min_rooms 100)`, async () => {
      assert.equal(
        (await server.get(`${path}?min_price=0&max_price=10000000&min_size=0&max_size=10000000&min_rooms=100`)).status,
        200,
      );
    });
    it(`GET ${path} returns 400 when min_price is above max_price, naming both values`, async () => {
      const res = await server.get(`${path}?min_price=2000&max_price=1000`);
      assert400(res, 'min_price');
      assert.match(res.body.error.message, /must not be greater than max_price, which is 1000 \(got "2000"\)/);
    });
    it(`GET ${path} returns 400 when min_size is above max_size, naming both values`, async () => {
      const res = await server.get(`${path}?min_size=80&max_size=40`);
      assert400(res, 'min_size');
      assert.match(res.body.error.message, /must not be greater than max_size, which is 40 \(got "80"\)/);
    });
    it(`GET ${path} accepts a minimum equal to its maximum`, async () => {
      assert.equal((await server.get(`${path}?min_price=2000&max_price=2000&min_size=60&max_size=60`)).status, 200);
    });
    it(`GET ${path} returns 400 for string filters longer than 120 characters or empty`, async () => {
      for (const p of ['location_id', 'owner_id', 'property_type']) {
        assert400(await server.get(`${path}?${p}=${long(121)}`), p);
        assert400(await server.get(`${path}?${p}=`), p);
      }
    });
  }
  it('GET /v1/listings/stats returns 400 for limit and cursor (stats take neither)', async () => {
    assert400(await server.get('/v1/listings/stats?limit=10'), 'limit');
    assert400(await server.get('/v1/listings/stats?cursor=abc'), 'cursor');
  });
});

describe('400 on similar listings', () => {
  it('returns 400 for limit 21 and 0', async () => {
    assert400(await server.get('/v1/listings/lst-001/similar?limit=21'), 'limit');
    assert400(await server.get('/v1/listings/lst-001/similar?limit=0'), 'limit');
  });
  it('returns 400 for a malformed limit ("abc", "1.5")', async () => {
    assert400(await server.get('/v1/listings/lst-001/similar?limit=abc'), 'limit');
    assert400(await server.get('/v1/listings/lst-001/similar?limit=1.5'), 'limit');
  });
  it('returns 400 for search parameters it does not take (cursor, q, location_id)', async () => {
    assert400(await server.get('/v1/listings/lst-001/similar?cursor=abc'), 'cursor');
    assert400(await server.get('/v1/listings/lst-001/similar?q=flat'), 'q');
    assert400(await server.get('/v1/listings/lst-001/similar?location_id=loc-ams'), 'location_id');
  });
});

describe('400 on the other search filters', () => {
  it('GET /v1/internet/plans returns 400 for a malformed or out-of-range min_download_mbps', async () => {
    for (const v of ['abc', '-1', '100001', '.', '5.5.', '5e', '0x10', ' 5']) {
      const res = await server.get(`/v1/internet/plans?min_download_mbps=${encodeURIComponent(v)}`);
      assert400(res, 'min_download_mbps');
      assert.match(res.body.error.message, / must be a number from 0 to 100000 \(got /, v);
    }
  });
  it('GET /v1/internet/plans accepts a fractional min_download_mbps (a number, not an integer)', async () => {
    assert.equal((await server.get('/v1/internet/plans?min_download_mbps=99.5')).status, 200);
  });
  it('GET /v1/internet/plans returns 400 for a fractional or out-of-range max_monthly_price_cents', async () => {
    for (const v of ['1.5', 'abc', '-1', '10000001'])
      assert400(await server.get(`/v1/internet/plans?max_monthly_price_cents=${v}`), 'max_monthly_price_cents');
  });
  const STRING_FILTERS: [string, string][] = [
    ['/v1/internet/plans', 'provider_id'],
    ['/v1/internet/plans', 'connection_type'],
    ['/v1/owners', 'type'],
    ['/v1/insurance/products', 'provider_id'],
    ['/v1/insurance/products', 'insurance_type'],
    ['/v1/insurance/products', 'availability'],
    ['/v1/platforms', 'type'],
    ['/v1/platforms', 'category'],
    ['/v1/locations', 'parent_id'],
  ];
  for (const [path, p] of STRING_FILTERS) {
    it(`GET ${path} returns 400 for a ${p} longer than 120 characters or empty`, async () => {
      assert400(await server.get(`${path}?${p}=${long(121)}`), p);
      assert400(await server.get(`${path}?${p}=`), p);
    });
  }
  it('GET /v1/locations returns 400 for a type outside province, city, neighbourhood (case-sensitive)', async () => {
    assert400(await server.get('/v1/locations?type=City'), 'type');
    assert400(await server.get('/v1/locations?type=country'), 'type');
  });
});

describe('400 on market observations', () => {
  const obs = (qs: string) => server.get(`${OBS}?${qs}`);
  it('returns 400 for a bad date (month 13, 30 February, wrong format, words)', async () => {
    assert400(await obs('location_id=loc-ams&from=2026-13-01&to=2026-12-01'), 'from');
    assert400(await obs('location_id=loc-ams&from=2026-01-01&to=2026-02-30'), 'to');
    assert400(await obs('location_id=loc-ams&from=2026/01/01&to=2026-02-01'), 'from');
    assert400(await obs('location_id=loc-ams&from=yesterday&to=2026-02-01'), 'from');
    assert400(await obs('location_id=loc-ams&from=2026-01-01T00:00:00Z&to=2026-02-01'), 'from');
  });
  it('returns 400 when from is after to', async () => {
    assert400(await obs('location_id=loc-ams&from=2026-03-01&to=2026-02-28'), 'from');
  });
  it('returns 400 for a range over 24 months', async () => {
    const res = await obs('location_id=loc-ams&from=2024-01-01&to=2026-01-01');
    assert400(res, 'from');
    assert.match(
      res.body.error.message,
      /^Parameter "from" must be at most 23 months before to: the range spans at most 24 calendar months, both included/,
    );
    assert400(await obs('location_id=loc-ams&from=2020-01-01&to=2026-01-01'), 'from');
  });
  it('accepts a range of exactly 24 calendar months', async () => {
    assert.equal((await obs('location_id=loc-ams&from=2024-02-01&to=2026-01-31')).status, 200);
    assert.equal((await obs('location_id=loc-ams&from=2026-01-15&to=2026-01-15')).status, 200);
  });
  it('returns 400 when location_id is a province or a neighbourhood, not a city', async () => {
    assert400(await obs('location_id=loc-nh&from=2026-01-01&to=2026-03-01'), 'location_id');
    assert400(await obs('location_id=loc-ams-pijp&from=2026-01-01&to=2026-03-01'), 'location_id');
  });
  it('returns 400 when location_id names no known location (or an unpublished one)', async () => {
    assert400(await obs('location_id=nowhere&from=2026-01-01&to=2026-03-01'), 'location_id');
    assert400(await obs('location_id=loc-hidden&from=2026-01-01&to=2026-03-01'), 'location_id');
  });
  for (const missing of ['location_id', 'from', 'to']) {
    it(`returns 400 saying the required parameter ${missing} is missing`, async () => {
      const params: Record<string, string> = { location_id: 'loc-ams', from: '2026-01-01', to: '2026-03-01' };
      delete params[missing];
      const res = await obs(new URLSearchParams(params).toString());
      assert400(res, missing);
      assert.match(res.body.error.message, /required/i);
    });
  }
  it('returns 400 for a location_id longer than 120 characters', async () => {
    assert400(await obs(`location_id=${long(121)}&from=2026-01-01&to=2026-03-01`), 'location_id');
  });
});

describe('error messages echo bad values readably', () => {
  it('truncates a long bad value with "..." (not a stray "?")', async () => {
    const res = await server.get(`/v1/listings?q=${long(201)}`);
    assert400(res, 'q');
    assert.ok(res.body.error.message.includes(`(got "${long(40)}...")`), res.body.error.message);
  });
  it('shows letters and symbols of any script as they are', async () => {
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent('gemeubileerd€ Zoë 🏠')}`);
    assert400(res, 'furnishing');
    assert.ok(res.body.error.message.includes('(got "gemeubileerd€ Zoë 🏠")'), res.body.error.message);
  });
  it('shows what a reader cannot see (controls, zero-width, bidi overrides) as \\u escapes', async () => {
    const value = 'a\u0009b\u200bc\u202ed\u2028e\u{E0041}';
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent(value)}`);
    assert400(res, 'furnishing');
    assert.ok(
      res.body.error.message.includes('(got "a\\u0009b\\u200Bc\\u202Ed\\u2028e\\u{E0041}")'),
      res.body.error.message,
    );
  });
  it('escapes what cannot be told from a space or is ignorable (no-break space, variation selector, filler), a combining mark at the start, and doubles a typed backslash', async () => {
    const value = '\u0301a\u00a0b\ufe0fc\u3164d\\u200B';
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent(value)}`);
    assert400(res, 'furnishing');
    assert.ok(
      res.body.error.message.includes('(got "\\u0301a\\u00A0b\\uFE0Fc\\u3164d\\\\u200B")'),
      res.body.error.message,
    );
  });
  it('shows emoji with their variation selectors and joiners as they are, and escapes those two elsewhere', async () => {
    const value = '❤️ 👨‍👩‍👧 👍🏽 a\ufe0fb\u200dc🏠\u200d';
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent(value)}`);
    assert400(res, 'furnishing');
    assert.ok(
      res.body.error.message.includes('(got "❤️ 👨‍👩‍👧 👍🏽 a\\uFE0Fb\\u200Dc🏠\\u200D")'),
      res.body.error.message,
    );
  });
  it('cuts a long value after 40 characters, never inside a character', async () => {
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent('🏠'.repeat(41))}`);
    assert400(res, 'furnishing');
    assert.ok(res.body.error.message.includes(`(got "${'🏠'.repeat(40)}...")`), res.body.error.message);
  });
  it('names an unknown parameter as it was sent', async () => {
    const res = await server.get(`/v1/listings?${encodeURIComponent('prijs€')}=1`);
    assert400(res, 'prijs€');
    assert.ok(res.body.error.message.startsWith('Unknown parameter "prijs€".'), res.body.error.message);
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
    // Paths are exact and lower-case (polka alone would match these case-insensitively).
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
