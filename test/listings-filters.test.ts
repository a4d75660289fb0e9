// /v1/listings filters over HTTP: every filter, alone and combined, returns exactly the listings the source says
// match (generated fixture), and the exact answers on the basic fixture.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BASIC } from './support/files.ts';
import {
  all,
  commonPlace,
  expectedIds,
  ids,
  mostCommon,
  type Params,
  pricesOf,
  quantile,
  useListings,
} from './support/listings.ts';
import { listingText, loadSource, type Rec } from './support/model.ts';
import { useServer } from './support/server.ts';

const { m, big } = useListings();
const basic = useServer();
const bm = loadSource(BASIC); // the basic fixture's source

describe('GET /v1/listings: every filter is respected by every returned record', () => {
  const check = async (p: Params, each: (item: any, src: Rec) => void) => {
    const items = await all(big, p);
    assert.ok(items.length > 0, `the filter ${JSON.stringify(p)} matches something in the fixture`);
    for (const item of items) each(item, m.listingById.get(item.id)!);
    assert.deepEqual(ids(items), expectedIds(m, p), 'exactly the listings the source says match');
    return items;
  };
  const inside = (loc: string) => (_: any, src: Rec) =>
    assert.ok(m.ancestorsOf(src.location_id).includes(loc), `${src.id} lies in ${loc}`);

  it('location_id at province level returns only listings inside the province', async () => {
    const loc = commonPlace(m, 'province');
    await check({ location_id: loc }, inside(loc));
  });
  it('location_id at city level returns only listings inside the city', async () => {
    const loc = commonPlace(m, 'city');
    const items = await check({ location_id: loc }, inside(loc));
    const name = m.locations.get(loc)!.name.en;
    for (const x of items) assert.equal(x.location.city, name);
  });
  it('location_id at neighbourhood level returns only listings inside the neighbourhood', async () => {
    const loc = commonPlace(m, 'neighbourhood');
    await check({ location_id: loc }, inside(loc));
  });
  it("owner_id returns only that owner's listings", async () => {
    const owner = mostCommon(m, (l) => l.owner_id);
    await check({ owner_id: owner }, (x) => assert.equal(x.owner_id, owner));
  });
  it('min_price returns only listings priced at or above it (none without a price)', async () => {
    const v = quantile(pricesOf(m), 0.6);
    await check({ min_price: v }, (x) => assert.ok(x.price_eur !== null && x.price_eur >= v));
  });
  it('max_price returns only listings priced at or below it (none without a price)', async () => {
    const v = quantile(pricesOf(m), 0.3);
    await check({ max_price: v }, (x) => assert.ok(x.price_eur !== null && x.price_eur <= v));
  });
  it('min_price and max_price together bound the price on both sides (inclusive)', async () => {
    const prices = pricesOf(m);
    const lo = quantile(prices, 0.4),
      hi = quantile(prices, 0.6);
    const items = await check({ min_price: lo, max_price: hi }, (x) =>
      assert.ok(x.price_eur >= lo && x.price_eur <= hi),
    );
    assert.ok(
      items.some((x) => x.price_eur === lo),
      'the minimum itself is included',
    );
  });
  it('min_size returns only listings at least that large', async () => {
    await check({ min_size: 100 }, (x) => assert.ok(x.size_m2 !== null && x.size_m2 >= 100));
  });
  it('max_size returns only listings at most that large', async () => {
    await check({ max_size: 50 }, (x) => assert.ok(x.size_m2 !== null && x.size_m2 <= 50));
  });
  it('min_size and max_size together bound the size on both sides', async () => {
    await check({ min_size: 60, max_size: 80 }, (x) => assert.ok(x.size_m2 >= 60 && x.size_m2 <= 80));
  });
  it('min_rooms returns only listings with at least that many rooms', async () => {
    await check({ min_rooms: 4 }, (x) => assert.ok(x.rooms !== null && x.rooms >= 4));
  });
  for (const f of ['SHELL', 'FURNISHED', 'UPHOLSTERED']) {
    it(`furnishing=${f} returns only ${f} listings`, async () => {
      await check({ furnishing: f }, (x) => assert.equal(x.furnishing, f));
    });
  }
  it('property_type returns only listings of that type', async () => {
    const t = mostCommon(m, (l) => (l.property_type === 'apartment' ? null : l.property_type));
    await check({ property_type: t }, (x) => assert.equal(x.property_type, t));
  });
  it('q returns only listings whose text contains every term', async () => {
    await check({ q: 'spacious' }, (_, src) => assert.ok(listingText(m, src).has('spacious')));
  });
  it('q with two terms requires both', async () => {
    await check({ q: 'bright apartment' }, (_, src) => {
      const t = listingText(m, src);
      assert.ok(t.has('bright') && t.has('apartment'));
    });
  });
  it('q matches case- and accent-insensitively', async () => {
    const a = ids(await all(big, { q: 'SPACIOUS' }));
    assert.deepEqual(a, ids(await all(big, { q: 'spacious' })));
  });
  it('combines location, rooms and furnishing (all must hold)', async () => {
    const loc = commonPlace(m, 'city');
    await check({ location_id: loc, min_rooms: 2, furnishing: 'UPHOLSTERED' }, (x, src) => {
      assert.ok(m.ancestorsOf(src.location_id).includes(loc));
      assert.ok(x.rooms >= 2);
      assert.equal(x.furnishing, 'UPHOLSTERED');
    });
  });
  it('combines province, property type, price ceiling and q', async () => {
    const loc = commonPlace(m, 'province');
    const prices = pricesOf(m);
    const p = { location_id: loc, property_type: 'apartment', max_price: quantile(prices, 0.7), q: 'apartment' };
    await check(p, (x) => {
      assert.equal(x.property_type, 'apartment');
      assert.ok(x.price_eur <= p.max_price);
    });
  });
  it('returns an empty page (200) for a filter that matches nothing', async () => {
    const res = await big.get('/v1/listings?min_price=10000000');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, []);
    assert.deepEqual(res.body.pagination, { limit: 20, has_more: false, next_cursor: null });
  });
});

describe('GET /v1/listings: filter facts on the basic fixture', () => {
  const got = async (qs: string) => ids((await basic.get(`/v1/listings?limit=100&${qs}`)).body.data);
  it('location_id=loc-nh (province) returns the Amsterdam listings, its neighbourhoods included', async () => {
    assert.deepEqual(await got('location_id=loc-nh'), ['lst-001', 'lst-002', 'lst-003', 'lst-010', 'lst-012']);
  });
  it('location_id=loc-ams (city) returns the listings in the city and in its neighbourhoods', async () => {
    assert.deepEqual(await got('location_id=loc-ams'), ['lst-001', 'lst-002', 'lst-003', 'lst-010', 'lst-012']);
  });
  it('location_id=loc-ams-pijp (neighbourhood) returns only the De Pijp listing', async () => {
    assert.deepEqual(await got('location_id=loc-ams-pijp'), ['lst-001']);
  });
  it('location_id=loc-zh (province) spans The Hague and Rotterdam', async () => {
    assert.deepEqual(await got('location_id=loc-zh'), ['lst-007', 'lst-008', 'lst-009', 'lst-011']);
  });
  it('never returns inactive, unpublished or for-sale listings', async () => {
    const every = await got('');
    for (const id of ['lst-004', 'lst-005', 'lst-006']) assert.ok(!every.includes(id), id);
    assert.deepEqual(
      every,
      bm.listings.map((l) => l.id),
    );
  });
  it('owner_id=own-1 returns only its public listings', async () => {
    assert.deepEqual(await got('owner_id=own-1'), ['lst-001', 'lst-002', 'lst-010']);
  });
  it('a price filter never matches a listing without a price (min_price=0 excludes lst-010)', async () => {
    const r = await got('min_price=0');
    assert.equal(r.length, 8);
    assert.ok(!r.includes('lst-010'));
  });
  it('q matches a city name in any locale (haag → The Hague listings)', async () => {
    assert.deepEqual(await got('q=haag'), ['lst-007', 'lst-008', 'lst-011']);
    assert.deepEqual(await got('q=The%20Hague'), ['lst-007', 'lst-008', 'lst-011']);
  });
  it('q matches a translated title (woning → lst-001 via its Dutch title)', async () => {
    assert.deepEqual(await got('q=woning'), ['lst-001']);
  });
  it('q meets the text across compatibility forms: m² and m2, the ligature ﬁ and fi, full-width letters', async () => {
    for (const q of ['m²', 'm2', 'ﬁreplace', 'fireplace', 'ＦＩＲＥＰＬＡＣＥ', '15 m²']) {
      assert.deepEqual(await got(`q=${encodeURIComponent(q)}`), ['lst-009'], q);
    }
  });
  it('q matches words of the title and description (sauna, vondelpark)', async () => {
    assert.deepEqual(await got('q=sauna'), ['lst-009']);
    assert.deepEqual(await got('q=Vondelpark'), ['lst-003']);
  });
  it('an unknown location_id returns an empty page, not an error', async () => {
    const res = await basic.get('/v1/listings?location_id=loc-nowhere');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, []);
  });
  it('an unpublished location still filters (loc-hidden → its listing lst-011)', async () => {
    assert.deepEqual(await got('location_id=loc-hidden'), ['lst-011']);
  });
});
