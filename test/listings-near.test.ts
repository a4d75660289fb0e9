// near=<lat>,<lon> and radius_km on /v1/listings and /v1/listings/stats: against a brute-force great-circle filter
// over every listing of the generated fixture (random points and radii, with and without other filters, paged with
// the cursor), stats against the search, every bad value a 400 naming its parameter, the cursor's scope, and the
// OpenAPI pattern of near against the server over many strings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  all,
  commonPlace,
  expectedIds,
  mostCommon,
  type Params,
  pricesOf,
  quantile,
  stats,
  useListings,
} from './support/listings.ts';
import { expectedStats, type Rec, walk, withParams } from './support/model.ts';
import { assert400 } from './support/shapes.ts';

const { m, big } = useListings();

/** The great-circle distance in km by the haversine formula on the sphere the API states (docs/api-notes.md). */
function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const a =
    Math.sin(((lat2 - lat1) * r) / 2) ** 2 +
    Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(a)));
}
/** A small deterministic generator (mulberry32), so that a failure names a case that can be run again. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Point = { lat: number; lon: number; km: number };
const near = (p: Point): Params => ({ near: `${p.lat},${p.lon}`, radius_km: p.km });
/** Which side of the circle's edge a listing is on: in, out, or within a metre of the edge (either answer is right). */
function side(l: Rec, p: Point): 'in' | 'out' | 'edge' {
  if (l.latitude == null || l.longitude == null) return 'out';
  const d = distanceKm(p.lat, p.lon, l.latitude, l.longitude);
  return Math.abs(d - p.km) <= 0.001 ? 'edge' : d < p.km ? 'in' : 'out';
}
/** The served ids must be exactly the brute force's, but for listings within a metre of the edge. */
function assertSameListings(got: string[], p: Point, other: Params) {
  const served = new Set(got);
  const candidates = new Set(expectedIds(m, other));
  const want = m.listings.filter((l) => candidates.has(l.id) && side(l, p) === 'in').map((l) => l.id);
  const maybe = new Set(m.listings.filter((l) => candidates.has(l.id) && side(l, p) === 'edge').map((l) => l.id));
  const where = `near ${JSON.stringify(p)} with ${JSON.stringify(other)}`;
  for (const id of want) assert.ok(served.has(id), `${where}: ${id} is within the radius but was not served`);
  for (const id of served) assert.ok(want.includes(id) || maybe.has(id), `${where}: ${id} was served but is outside`);
  assert.deepEqual(got, [...got].sort(), `${where}: ascending id order`);
}

/** Random points: most around a listing of the fixture (inside the cities), some anywhere over the country. */
function points(seed: number, n: number): Point[] {
  const r = rng(seed);
  const located = m.listings.filter((l) => l.latitude != null);
  return Array.from({ length: n }, (_, i) => {
    const radius = [0.3, 1, 2, 5, 10, 25, 50][i % 7] * (0.5 + r());
    if (i % 5 === 4) return { lat: 50.8 + r() * 2.6, lon: 3.5 + r() * 3.6, km: Math.min(50, radius) };
    const l = located[Math.floor(r() * located.length)];
    return {
      lat: Math.round((l.latitude + (r() - 0.5) * 0.05) * 1e6) / 1e6,
      lon: Math.round((l.longitude + (r() - 0.5) * 0.08) * 1e6) / 1e6,
      km: Math.min(50, Math.round(radius * 1000) / 1000),
    };
  });
}

describe('GET /v1/listings?near=…&radius_km=…: exactly the listings within the distance', () => {
  it('matches a brute-force great-circle filter over every listing, for many points and radii (pages of 7)', async () => {
    for (const p of points(43, 28)) {
      const got = (await walk(big, withParams('/v1/listings', near(p)), 7)).items.map((x) => x.id);
      assertSameListings(got, p, {});
    }
  });
  it('combines with every other filter and q, paged with the cursor', async () => {
    const prices = pricesOf(m);
    const others: Params[] = [
      { property_type: mostCommon(m, (l) => l.property_type) },
      { min_price: quantile(prices, 0.3), max_price: quantile(prices, 0.7) },
      {
        property_type: mostCommon(m, (l) => l.property_type),
        min_price: quantile(prices, 0.2),
        max_price: quantile(prices, 0.8),
      },
      { location_id: commonPlace(m, 'city') },
      { owner_id: mostCommon(m, (l) => l.owner_id) },
      { furnishing: 'FURNISHED', min_rooms: 2 },
      { min_size: 40, max_size: 120 },
      { q: 'balcony' },
    ];
    const ps = points(7, others.length * 3);
    for (let i = 0; i < ps.length; i++) {
      const other = others[i % others.length];
      const got = (await walk(big, withParams('/v1/listings', { ...other, ...near(ps[i]) }), 5)).items.map((x) => x.id);
      assertSameListings(got, ps[i], other);
    }
  });
  it('never returns a listing without coordinates, even with a radius covering the whole fixture', async () => {
    const missing = m.listings.filter((l) => l.latitude == null || l.longitude == null);
    assert.ok(missing.length > 0, 'the fixture has listings without coordinates');
    const got = new Set((await all(big, { near: '52.1,5.3', radius_km: 50 })).map((x) => x.id));
    for (const l of missing) assert.ok(!got.has(l.id), `${l.id} has no coordinates`);
  });
  it('answers a request without near exactly as the same filters did (the filters alone)', async () => {
    const p = { property_type: mostCommon(m, (l) => l.property_type) };
    assert.deepEqual(
      (await all(big, p)).map((x) => x.id),
      expectedIds(m, p),
    );
  });
});

describe('GET /v1/listings/stats?near=…&radius_km=…: the same listings the search returns', () => {
  it('count and prices agree with the search, with and without other filters', async () => {
    const prices = pricesOf(m);
    const others: Params[] = [
      {},
      { property_type: mostCommon(m, (l) => l.property_type) },
      { min_price: quantile(prices, 0.25), max_price: quantile(prices, 0.75) },
    ];
    const ps = points(11, 18);
    for (let i = 0; i < ps.length; i++) {
      const p = { ...others[i % others.length], ...near(ps[i]) };
      const items = await all(big, p);
      const s = await stats(big, p);
      const priced = items.map((x) => x.price_eur).filter((x) => x !== null);
      assert.deepEqual(s, { count: items.length, ...expectedStats(priced) }, JSON.stringify(p));
    }
  });
});

describe('near and radius_km: bad values are 400s naming the parameter and the rule', () => {
  const cases: [Params, string, RegExp][] = [
    [{ near: '52.37,4.90' }, 'near', /radius_km/],
    [{ radius_km: 2 }, 'radius_km', /near/],
    [{ near: '90.5,4.9', radius_km: 2 }, 'near', /latitude/],
    [{ near: '-91,4.9', radius_km: 2 }, 'near', /latitude/],
    [{ near: '52.37,180.01', radius_km: 2 }, 'near', /longitude/],
    [{ near: '52.37,-181', radius_km: 2 }, 'near', /longitude/],
    [{ near: '52.37', radius_km: 2 }, 'near', /comma/],
    [{ near: '52.37;4.90', radius_km: 2 }, 'near', /comma/],
    [{ near: 'abc,4.90', radius_km: 2 }, 'near', /decimal degrees/],
    [{ near: '52.37, 4.90', radius_km: 2 }, 'near', /without spaces/],
    [{ near: ' 52.37,4.90', radius_km: 2 }, 'near', /without spaces/],
    [{ near: '52.37,4.90,1', radius_km: 2 }, 'near', /decimal degrees/],
    [{ near: '1e1,4.9', radius_km: 2 }, 'near', /decimal degrees/],
    [{ near: '', radius_km: 2 }, 'near', /decimal degrees/],
    [{ near: '52.37,4.90', radius_km: 0 }, 'radius_km', /greater than 0/],
    [{ near: '52.37,4.90', radius_km: -1 }, 'radius_km', /greater than 0/],
    [{ near: '52.37,4.90', radius_km: 50.001 }, 'radius_km', /at most 50/],
    [{ near: '52.37,4.90', radius_km: 'two' }, 'radius_km', /number/],
    // A decimal above 50 that parses to 50, and the forms near's parts reject (a bare point, an exponent, a sign).
    [{ near: '52.37,4.90', radius_km: '50.00000000000000001' }, 'radius_km', /at most 50/],
    [{ near: '52.37,4.90', radius_km: '5.' }, 'radius_km', /decimal/],
    [{ near: '52.37,4.90', radius_km: '.5' }, 'radius_km', /decimal/],
    [{ near: '52.37,4.90', radius_km: '1e1' }, 'radius_km', /decimal/],
    [{ near: '52.37,4.90', radius_km: '+5' }, 'radius_km', /decimal/],
    [{ near: '52.37,4.90', radius_km: '٥' }, 'radius_km', /decimal/],
    [{ near: `52.3${'0'.repeat(32)},4.90`, radius_km: 2 }, 'near', /at most 40 characters/],
  ];
  for (const path of ['/v1/listings', '/v1/listings/stats'])
    it(`${path}: each bad value`, async () => {
      for (const [p, name, rule] of cases) {
        const res = await big.get(withParams(path, p));
        assert400(res, name);
        assert.match(res.body.error.message, rule, `${JSON.stringify(p)}: ${res.body.error.message}`);
      }
    });
  it('takes radius_km as a plain decimal up to 50 as written, and near up to 40 characters', async () => {
    for (const radius_km of ['50', '50.000', '49.99999999999999999', '0.5', '007', '0.000001'])
      assert.equal((await big.get(withParams('/v1/listings/stats', { near: '52.37,4.9', radius_km }))).status, 200);
    const long = `52.3${'0'.repeat(31)},4.90`; // 40 characters
    assert.equal(long.length, 40);
    assert.equal((await big.get(withParams('/v1/listings/stats', { near: long, radius_km: 2 }))).status, 200);
  });
  it('is not a parameter of the other endpoints', async () => {
    for (const path of ['/v1/owners', '/v1/locations', '/v1/articles']) {
      const res = await big.get(withParams(path, { near: '52.37,4.9', radius_km: 2 }));
      assert400(res, 'near');
    }
  });
});

describe('near and radius_km in the cursor scope', () => {
  it('a cursor refuses a changed near or radius_km', async () => {
    const p = { near: '52.3676,4.9041', radius_km: 50 };
    const first = await big.get(withParams('/v1/listings', { ...p, limit: 2 }));
    assert.equal(first.status, 200);
    const cursor = first.body.pagination.next_cursor;
    assert.ok(cursor, 'a second page');
    for (const changed of [
      { ...p, near: '52.3676,4.9042' },
      { ...p, radius_km: 49 },
    ]) {
      const res = await big.get(withParams('/v1/listings', { ...changed, limit: 2, cursor }));
      assert400(res, 'cursor');
    }
    const same = await big.get(withParams('/v1/listings', { ...p, limit: 2, cursor }));
    assert.equal(same.status, 200);
  });
});

describe("the OpenAPI document's pattern for near", () => {
  /** Strings near the rule's edges: forms, signs, ranges, spaces, extra parts. */
  function candidates(): string[] {
    const nums = [
      '0',
      '-0',
      '00',
      '5',
      '52',
      '52.',
      '52.3676',
      '.5',
      '-.5',
      '+52',
      '90',
      '90.0',
      '90.000',
      '90.0001',
      '-90',
      '-90.5',
      '89.999999',
      '91',
      '099',
      '180',
      '180.0',
      '-180',
      '180.5',
      '179.99',
      '181',
      '1e1',
      '999',
      ' 52',
      '52 ',
      'NaN',
      'Infinity',
      '0x1F',
      '１２',
      '٥٢',
      '5٢.3',
      '52.3६',
      '৪',
    ];
    const out = new Set<string>([
      '',
      ',',
      '52.37',
      '52.37,4.90,1',
      '52.37,,4.90',
      '52.37;4.90',
      '52.37 4.90',
      ',4.9',
      '52.37,',
    ]);
    for (const a of nums) for (const b of nums) out.add(`${a},${b}`);
    const r = rng(5);
    for (let i = 0; i < 200; i++) {
      const lat = ((r() * 2 - 1) * 95).toFixed(Math.floor(r() * 7));
      const lon = ((r() * 2 - 1) * 190).toFixed(Math.floor(r() * 7));
      out.add(`${lat},${lon}`);
    }
    return [...out];
  }
  it('accepts exactly what the server accepts (read as Python reads it, non-ASCII digits included)', async () => {
    const doc = (await big.get('/v1/openapi.json')).body;
    for (const path of ['/v1/listings', '/v1/listings/stats']) {
      const param = doc.paths[path].get.parameters.find((x: { name: string }) => x.name === 'near');
      // Read as Python's re reads it (Schemathesis): \d there matches every Unicode decimal digit.
      const pattern = new RegExp(param.schema.pattern.replaceAll('\\d', '\\p{Nd}'), 'u');
      for (const s of candidates()) {
        const res = await big.get(
          withParams(path, { near: s, radius_km: 1, ...(path === '/v1/listings' ? { limit: 1 } : {}) }),
        );
        assert.equal(
          res.status === 200,
          pattern.test(s),
          `${path} near=${JSON.stringify(s)}: ${res.status} but the pattern says ${pattern.test(s)}`,
        );
      }
    }
  });
});
