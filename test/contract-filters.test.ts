// Contract tests over HTTP, 400s of the search filters: listing search and stats, similar listings, the other
// collections' filters, and market observations. Basic fixture, real service.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { STRING_FILTERS } from './support/endpoints.ts';
import { useServer } from './support/server.ts';
import { assert400, OBS } from './support/shapes.ts';

const server = useServer();

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
        assert400(await server.get(`${path}?${p}=${'a'.repeat(121)}`), p);
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
  for (const [path, p] of STRING_FILTERS) {
    it(`GET ${path} returns 400 for a ${p} longer than 120 characters or empty`, async () => {
      assert400(await server.get(`${path}?${p}=${'a'.repeat(121)}`), p);
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
    assert400(await obs(`location_id=${'a'.repeat(121)}&from=2026-01-01&to=2026-03-01`), 'location_id');
  });
});
