// Similar listings. SimilarIndex (src/listings/similar.ts) against the rule computed by brute force, on random
// columns full of ties: prices and sizes from short lists, unknown sizes and prices, several cities and types, every
// limit. And GET /v1/listings/{id}/similar over HTTP against the rule computed from the source (generated fixture),
// with exact answers on the basic fixture.
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { mulberry32 } from '../generate/random.ts';
import { SimilarIndex } from '../src/listings/similar.ts';
import { copyFixture } from './support/files.ts';
import { ids, useListings } from './support/listings.ts';
import type { Rec } from './support/model.ts';
import { startServer, useServer } from './support/server.ts';
import { assert400, assertError } from './support/shapes.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

/** Random columns as the column store holds them (row = rid - 1, NaN for null, code 0 for null). */
function columns(n: number, seed: number) {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const price = new Float64Array(n),
    size = new Float64Array(n),
    city_id = new Uint16Array(n),
    property_type = new Uint16Array(n);
  for (let r = 0; r < n; r++) {
    price[r] = rnd() < 0.05 ? NaN : pick([750, 800, 900, 950, 1000, 1000, 1000, 1010, 1050, 1200, 1250, 1300, 999.5]);
    size[r] = rnd() < 0.15 ? NaN : pick([30, 40, 45, 50, 50, 55, 60, 62.5, 70]);
    city_id[r] = pick([1, 2, 3]);
    property_type[r] = rnd() < 0.03 ? 0 : pick([1, 2]);
  }
  return { n, price, size, city_id, property_type };
}

/** The rule by brute force: every candidate in the window, sorted by price difference, size difference, row. */
function expected(c: ReturnType<typeof columns>, ref: number, limit: number): number[] {
  const p = c.price[ref];
  if (Number.isNaN(p) || c.property_type[ref] === 0) return [];
  const sizeDiff = (r: number) =>
    Number.isNaN(c.size[r]) || Number.isNaN(c.size[ref]) ? Infinity : Math.abs(c.size[r] - c.size[ref]);
  return [...Array(c.n).keys()]
    .filter(
      (r) =>
        r !== ref &&
        c.city_id[r] === c.city_id[ref] &&
        c.property_type[r] === c.property_type[ref] &&
        c.price[r] >= p * 0.75 &&
        c.price[r] <= p * 1.25,
    )
    .sort((x, y) => Math.abs(c.price[x] - p) - Math.abs(c.price[y] - p) || sizeDiff(x) - sizeDiff(y) || x - y)
    .slice(0, limit);
}

describe('SimilarIndex', () => {
  for (const [n, seed] of [
    [60, 1],
    [400, 2],
    [3000, 3],
  ]) {
    it(`ranks as the rule does, for every reference and limit 1 to 20 (${n} listings)`, () => {
      const c = columns(n, seed);
      const index = new SimilarIndex(c);
      for (let ref = 0; ref < n; ref += n > 500 ? 7 : 1)
        for (const limit of [1, 2, 3, 5, 10, 20])
          assert.deepEqual(index.rank(ref, limit), expected(c, ref, limit), `ref ${ref} limit ${limit}`);
    });
  }
  it('groups every city and type: its priced rows in (price, size, row) order and its unpriced count', () => {
    const c = columns(2000, 5);
    c.city_id[7] = 0; // a listing without a city is a group of its own (code 0)
    const wide = columns(300, 6);
    wide.city_id[0] = 65535; // too many (city, type) pairs for the counting table: each group found by a scan
    wide.property_type[1] = 100;
    for (const cols of [c, wide]) {
      const index = new SimilarIndex(cols);
      const sizeKey = (r: number) => (Number.isNaN(cols.size[r]) ? Infinity : cols.size[r]);
      for (const city of new Set(cols.city_id))
        for (const type of new Set(cols.property_type)) {
          const all = [...Array(cols.n).keys()].filter(
            (r) => cols.city_id[r] === city && cols.property_type[r] === type,
          );
          const priced = all
            .filter((r) => !Number.isNaN(cols.price[r]))
            .sort((x, y) => cols.price[x] - cols.price[y] || sizeKey(x) - sizeKey(y) || x - y);
          const g = index.group(city, type);
          assert.deepEqual([...g.rows], priced, `${city} ${type}`);
          assert.equal(g.unpriced, all.length - priced.length, `${city} ${type}`);
        }
    }
  });
  it('has nothing for a reference without a price or type, or alone in its city and type', () => {
    const c = columns(50, 4);
    c.price[0] = NaN;
    c.property_type[1] = 0;
    c.city_id[2] = 9;
    const index = new SimilarIndex(c);
    for (const ref of [0, 1, 2]) assert.deepEqual(index.rank(ref, 10), []);
  });
});

// ---------------------------------------------------------------------------------------- over HTTP

describe('GET /v1/listings/{id}/similar', () => {
  const { m, big } = useListings();
  const basic = useServer();
  const sizeDiff = (a: Rec, ref: Rec) =>
    a.size_m2 === null || ref.size_m2 === null ? Infinity : Math.abs(a.size_m2 - ref.size_m2);
  /** The spec's rule, computed from the source: same city and type, price within 25 %, by price difference then size. */
  function expectedSimilar(ref: Rec, n: number): string[] {
    if (ref.price_eur === null || ref.property_type === null) return [];
    const p = ref.price_eur,
      city = m.cityOf(ref.location_id);
    return m.listings
      .filter(
        (l) =>
          l.id !== ref.id &&
          l.property_type === ref.property_type &&
          m.cityOf(l.location_id) === city &&
          l.price_eur !== null &&
          l.price_eur >= p * 0.75 &&
          l.price_eur <= p * 1.25,
      )
      .sort(
        (a, b) =>
          Math.abs(a.price_eur - p) / p - Math.abs(b.price_eur - p) / p ||
          sizeDiff(a, ref) - sizeDiff(b, ref) ||
          0 ||
          (a.id < b.id ? -1 : 1),
      )
      .slice(0, n)
      .map((l) => l.id);
  }
  /** References with a price and at least one alternative, spread over the fixture. */
  const references = () =>
    m.listings
      .filter((l) => l.price_eur !== null && expectedSimilar(l, 1).length > 0)
      .filter((_, i) => i % 3 === 0)
      .slice(0, 40);
  /** True when another candidate has exactly the reference's price (see the regression test below). */
  const hasPriceTwin = (ref: Rec) =>
    m.listings.some(
      (l) =>
        l.id !== ref.id &&
        l.price_eur === ref.price_eur &&
        l.property_type === ref.property_type &&
        m.cityOf(l.location_id) === m.cityOf(ref.location_id),
    );
  const similar = async (id: string, qs = '') => {
    const res = await big.get(`/v1/listings/${id}/similar${qs}`);
    assert.equal(res.status, 200, res.text);
    return res.body.data as any[];
  };

  it('returns only listings in the same city and of the same property type as the reference', async () => {
    for (const ref of references()) {
      for (const x of await similar(ref.id, '?limit=20')) {
        const src = m.listingById.get(x.id)!;
        assert.equal(m.cityOf(src.location_id), m.cityOf(ref.location_id), `${x.id} is in the city of ${ref.id}`);
        assert.equal(x.property_type, ref.property_type);
      }
    }
  });
  it('returns only listings priced within 25 % of the reference', async () => {
    for (const ref of references()) {
      for (const x of await similar(ref.id, '?limit=20')) {
        assert.ok(
          x.price_eur !== null && Math.abs(x.price_eur - ref.price_eur) <= 0.25 * ref.price_eur + 1e-9,
          `${x.id} ${x.price_eur} vs ${ref.id} ${ref.price_eur}`,
        );
      }
    }
  });
  it('never returns the reference listing itself', async () => {
    for (const ref of references()) assert.ok(!ids(await similar(ref.id, '?limit=20')).includes(ref.id));
  });
  it('orders by relative price difference, then by size difference', async () => {
    for (const ref of references()) {
      const xs = await similar(ref.id, '?limit=20');
      for (let i = 1; i < xs.length; i++) {
        const [a, b] = [xs[i - 1], xs[i]];
        const da = Math.abs(a.price_eur - ref.price_eur) / ref.price_eur,
          db = Math.abs(b.price_eur - ref.price_eur) / ref.price_eur;
        assert.ok(da <= db, `${ref.id}: ${a.id} before ${b.id} by price difference`);
        if (da === db)
          assert.ok(sizeDiff(a, ref) <= sizeDiff(b, ref), `${ref.id}: ${a.id} before ${b.id} by size difference`);
      }
    }
  });
  it('returns the best-ranked alternatives, as computed from the source', async () => {
    const refs = references();
    assert.ok(refs.length >= 10);
    for (const ref of refs) {
      for (const n of [3, 10])
        assert.deepEqual(ids(await similar(ref.id, `?limit=${n}`)), expectedSimilar(ref, n), `${ref.id} limit ${n}`);
    }
  });
  it('returns 10 listings by default and respects limit 1 and 20', async () => {
    const ref = m.listings
      .filter((l) => l.price_eur !== null)
      .sort((a, b) => expectedSimilar(b, 25).length - expectedSimilar(a, 25).length)[0];
    assert.ok(expectedSimilar(ref, 25).length > 20, 'a reference with more than 20 alternatives');
    assert.equal((await similar(ref.id)).length, 10);
    assert.equal((await similar(ref.id, '?limit=1')).length, 1);
    assert.equal((await similar(ref.id, '?limit=20')).length, 20);
  });
  it('returns 400 for limit 21', async () => {
    assert400(await big.get(`/v1/listings/${m.listings[0].id}/similar?limit=21`), 'limit');
  });
  it('returns 404 for an unknown id', async () => {
    assertError(await big.get('/v1/listings/no-such-listing/similar'), 404, { code: 'not_found' });
  });
  it('returns 404 for a listing that is not active', async () => {
    assertError(await basic.get('/v1/listings/lst-004/similar'), 404, { code: 'not_found' });
  });
  it('returns an empty array (200) for a reference without a price', async () => {
    const res = await basic.get('/v1/listings/lst-010/similar');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, []);
  });
  it("returns the basic fixture's Amsterdam apartments for lst-001, nearest price first", async () => {
    // lst-001: 2000; lst-012 2100 (5 %), lst-003 1500 (25 %, on the boundary); lst-002 is a house, lst-010 has no price
    assert.deepEqual(ids((await basic.get('/v1/listings/lst-001/similar')).body.data), ['lst-012', 'lst-003']);
  });
  it("follows the locale for the summaries' translated fields", async () => {
    const res = await basic.get('/v1/listings/lst-008/similar?locale=fr');
    assert.equal(res.body.meta.locale, 'fr');
    const x = res.body.data.find((d: any) => d.id === 'lst-007');
    assert.equal(x.title, 'Appartement centre La Haye');
    assert.equal(x.location.city, 'La Haye');
  });
  // Regression: a row priced exactly at the reference price was read by both the upward and the downward band,
  // counted twice when the boundary difference was computed, and valid candidates were dropped.
  it('keeps every candidate when one is priced exactly at the reference price', async () => {
    // Rotterdam flats: A (reference) 1000, B 1000 (0 %), C 1010 (1 %), D 950 (5 %).
    const dir = copyFixture();
    const flat = (id: string, price: number) =>
      JSON.stringify({
        id,
        slug: id,
        offer_type: 'rent',
        active: true,
        published: true,
        title: { en: `Flat ${id}` },
        price_eur: price,
        size_m2: 50,
        rooms: 2,
        furnishing: 'SHELL',
        property_type: 'flat',
        location_id: 'loc-rdam',
        first_seen_at: '2026-03-01T00:00:00Z',
        created_at: '2026-03-01T00:00:00Z',
        updated_at: '2026-03-01T00:00:00Z',
      });
    appendFileSync(
      join(dir, 'listings.ndjson'),
      `${[flat('sim-a', 1000), flat('sim-b', 1000), flat('sim-c', 1010), flat('sim-d', 950)].join('\n')}\n`,
    );
    const s = await startServer({ SNAPSHOT_PATH: (await fixtureSnapshot(dir)).path });
    try {
      const got = async (n: number) => ids((await s.get(`/v1/listings/sim-a/similar?limit=${n}`)).body.data);
      assert.deepEqual(await got(10), ['sim-b', 'sim-c', 'sim-d']);
      assert.deepEqual(await got(2), ['sim-b', 'sim-c']); // was ['sim-b']
      assert.deepEqual(await got(3), ['sim-b', 'sim-c', 'sim-d']); // was ['sim-b', 'sim-c']
    } finally {
      await s.close();
    }
    // and on the generated fixture, every reference with an exact-price twin
    const twins = m.listings.filter((l) => l.price_eur !== null && hasPriceTwin(l));
    for (const ref of twins) {
      for (const n of [2, 3, 10])
        assert.deepEqual(ids(await similar(ref.id, `?limit=${n}`)), expectedSimilar(ref, n), `${ref.id} limit ${n}`);
    }
  });
});
