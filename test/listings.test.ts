// /v1/listings over HTTP: cursor walks, every filter, statistics, similar listings, and the query plans of the
// listing filters. Invariants run on a larger generated fixture; exact facts on the hand-written basic fixture.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { HOT_QUERY_SAMPLES, type ListingFilters, planHasFullScan } from '../snapshot-format/listing-sql.ts';
import { LOCALES } from '../snapshot-format/locales.ts';
import { planOf } from '../src/listings/planner.ts';
import { summariesOf } from '../src/routes/listing-text.ts';
import { prepare } from '../src/routes/listings.ts';
import { copyFixture, FIXTURES } from './support/files.ts';
import {
  assertAscendingIds,
  expectedStats,
  listingText,
  loadSource,
  type Rec,
  type SourceModel,
  tokens,
  walk,
  withParams,
} from './support/model.ts';
import { startServer, type TestServer } from './support/server.ts';
import { assert400, assertError } from './support/shapes.ts';
import { buildTestSnapshot, generatedSource } from './support/snapshots.ts';

let big: TestServer;
let bigPath: string;
let m: SourceModel; // the generated source, to compute expected answers from
let basic: TestServer;
let bm: SourceModel; // the basic fixture's source

before(async () => {
  const src = generatedSource(400, 7);
  m = loadSource(src.dir);
  const built = await buildTestSnapshot(src.dir);
  bigPath = built.path;
  big = await startServer({ SNAPSHOT_PATH: bigPath });
  const b = await buildTestSnapshot();
  bm = loadSource(join(FIXTURES, 'basic'));
  basic = await startServer({ SNAPSHOT_PATH: b.path });
  assert.ok(m.listings.length >= 100, `the generated fixture has enough listings (${m.listings.length})`);
});
after(async () => {
  await big?.close();
  await basic?.close();
});

const ids = (xs: { id: string }[]) => xs.map((x) => x.id);
/** Every listing a search returns, in served order (pages of 100). */
const all = async (s: TestServer, params: Record<string, string | number> = {}) =>
  (await walk(s, withParams('/v1/listings', params), 100)).items;
const stats = async (s: TestServer, params: Record<string, string | number> = {}) => {
  const res = await s.get(withParams('/v1/listings/stats', params));
  assert.equal(res.status, 200, res.text);
  return res.body.data;
};

// ---- model helpers: which listings a filter set should return, computed from the source records
type Params = Record<string, string | number>;
function matches(model: SourceModel, l: Rec, p: Params): boolean {
  const num = (k: string) => Number(p[k]);
  const has = (k: string) => p[k] !== undefined;
  if (has('location_id') && !model.ancestorsOf(l.location_id).includes(String(p.location_id))) return false;
  if (has('owner_id') && l.owner_id !== p.owner_id) return false;
  if (has('furnishing') && l.furnishing !== p.furnishing) return false;
  if (has('property_type') && l.property_type !== p.property_type) return false;
  if (has('min_price') && !(l.price_eur !== null && l.price_eur >= num('min_price'))) return false;
  if (has('max_price') && !(l.price_eur !== null && l.price_eur <= num('max_price'))) return false;
  if (has('min_size') && !(l.size_m2 !== null && l.size_m2 >= num('min_size'))) return false;
  if (has('max_size') && !(l.size_m2 !== null && l.size_m2 <= num('max_size'))) return false;
  if (has('min_rooms') && !(l.rooms !== null && l.rooms >= num('min_rooms'))) return false;
  if (has('q')) {
    const text = listingText(model, l);
    if (!tokens(String(p.q)).every((t) => text.has(t))) return false;
  }
  return true;
}
const expectedIds = (model: SourceModel, p: Params) =>
  model.listings.filter((l) => matches(model, l, p)).map((l) => l.id);

/** The most common value of f over the searchable listings. */
function mostCommon(model: SourceModel, f: (l: Rec) => string | null | undefined): string {
  const n = new Map<string, number>();
  for (const l of model.listings) {
    const k = f(l);
    if (k != null) n.set(k, (n.get(k) ?? 0) + 1);
  }
  return [...n].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
}
const levelOf = (model: SourceModel, type: string) => (l: Rec) =>
  model.ancestorsOf(l.location_id).find((id) => model.locations.get(id)!.type === type);
const quantile = (xs: number[], q: number) => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.floor(q * (a.length - 1))];
};

// ---------------------------------------------------------------------------------------- walks

describe('GET /v1/listings: cursor walks', () => {
  for (const limit of [2, 3]) {
    it(`walks every active published rent listing exactly once, ascending by id, with limit ${limit}; total = stats count`, async () => {
      const { items, pages } = await walk(big, '/v1/listings', limit);
      assertAscendingIds(items);
      assert.deepEqual(
        ids(items),
        m.listings.map((l) => l.id),
      );
      assert.equal(pages, Math.ceil(m.listings.length / limit), 'no empty trailing page');
      assert.equal(items.length, (await stats(big)).count);
    });
  }

  it('walks a filtered search (city + property_type) with limit 2: ascending, no duplicates, total = stats count', async () => {
    const p = { location_id: mostCommon(m, levelOf(m, 'city')), property_type: 'apartment' };
    const { items } = await walk(big, withParams('/v1/listings', p), 2);
    assertAscendingIds(items);
    assert.deepEqual(ids(items), expectedIds(m, p));
    assert.ok(items.length > 4, 'the filter matches several pages');
    assert.equal(items.length, (await stats(big, p)).count);
  });

  it('walks a q search with limit 3: ascending, no duplicates, total = stats count', async () => {
    const p = { q: 'bright' };
    const { items } = await walk(big, withParams('/v1/listings', p), 3);
    assertAscendingIds(items);
    assert.deepEqual(ids(items), expectedIds(m, p));
    assert.equal(items.length, (await stats(big, p)).count);
  });

  it('walks a range-filtered search (min_price + max_size) with limit 3: total = stats count', async () => {
    const prices = m.listings.map((l) => l.price_eur).filter((x) => x !== null);
    const p = { min_price: quantile(prices, 0.5), max_size: 90 };
    const { items } = await walk(big, withParams('/v1/listings', p), 3);
    assertAscendingIds(items);
    assert.deepEqual(ids(items), expectedIds(m, p));
    assert.equal(items.length, (await stats(big, p)).count);
  });

  it('ends with has_more false and next_cursor null when the last page is exactly full', async () => {
    // basic fixture: 9 listings, limit 3 → three full pages, the third with has_more false (no empty fourth page)
    const { items, pages } = await walk(basic, '/v1/listings', 3);
    assert.equal(items.length, 9);
    assert.equal(pages, 3);
  });

  it('returns a single page with has_more false when everything fits', async () => {
    const res = await basic.get('/v1/listings?limit=100');
    assert.equal(res.body.data.length, 9);
    assert.deepEqual(res.body.pagination, { limit: 100, has_more: false, next_cursor: null });
  });

  it('serves 20 listings by default', async () => {
    const res = await big.get('/v1/listings');
    assert.equal(res.body.data.length, 20);
    assert.equal(res.body.pagination.limit, 20);
    assert.equal(res.body.pagination.has_more, true);
  });
});

describe('cursor walks over other resources (generated fixture)', () => {
  const publishedIds = (file: string, f: (r: Rec) => boolean = () => true) =>
    m.all[file]
      .filter((r) => r.published !== false && f(r))
      .map((r) => r.id as string)
      .sort();
  it('walks /v1/owners with limit 3: every published owner once, ascending', async () => {
    const { items } = await walk(big, '/v1/owners', 3);
    assertAscendingIds(items);
    assert.deepEqual(ids(items), publishedIds('owners'));
  });
  it('walks /v1/locations with limit 3: every published location once, ascending', async () => {
    const { items } = await walk(big, '/v1/locations', 3);
    assertAscendingIds(items);
    assert.deepEqual(ids(items), publishedIds('locations'));
  });
  it('walks a filtered /v1/locations?type=neighbourhood with limit 2', async () => {
    const { items } = await walk(big, '/v1/locations?type=neighbourhood', 2);
    assertAscendingIds(items);
    assert.deepEqual(
      ids(items),
      publishedIds('locations', (r) => r.type === 'neighbourhood'),
    );
    for (const x of items) assert.equal(x.type, 'neighbourhood');
  });
  it('walks /v1/internet/plans filtered by provider with limit 2', async () => {
    const provider = m.all.internet_plans.find((p) => p.published)!.provider_id;
    const { items } = await walk(big, `/v1/internet/plans?provider_id=${provider}`, 2);
    assertAscendingIds(items);
    assert.deepEqual(
      ids(items),
      publishedIds('internet_plans', (r) => r.provider_id === provider),
    );
  });
});

// ---------------------------------------------------------------------------------------- values

describe('GET /v1/listings: values are the source values', () => {
  const tr = (text: Record<string, string> | null, locale: string) =>
    text === null ? null : (text[locale] ?? text.en);
  it('maps every summary field from its source record (generated fixture)', async () => {
    for (const x of await all(big)) {
      const l = m.listingById.get(x.id)!;
      const v = (k: string) => l[k] ?? null; // an absent optional source field is null
      assert.deepEqual(x, {
        id: l.id,
        slug: l.slug,
        title: l.title.en,
        price_eur: v('price_eur'),
        size_m2: v('size_m2'),
        rooms: v('rooms'),
        furnishing: v('furnishing'),
        property_type: v('property_type'),
        energy_label: v('energy_label'),
        owner_id: v('owner_id'),
        image_url: v('image_url'),
        created_at: l.created_at,
        updated_at: l.updated_at,
        location: {
          city: m.locations.get(m.cityOf(l.location_id))!.name.en,
          street: v('street'),
          number: v('number'),
          postcode: v('postcode'),
          latitude: v('latitude'),
          longitude: v('longitude'),
        },
      });
    }
  });
  it('maps the detail fields (description, images, attributes, sources) from the source record', async () => {
    for (const l of m.listings.filter((_, i) => i % 10 === 0)) {
      const res = await big.get(`/v1/listings/${l.id}`);
      assert.equal(res.status, 200);
      const d = res.body.data;
      assert.equal(d.description, tr(l.description ?? null, 'en'));
      assert.deepEqual(d.images, l.images ?? null);
      assert.deepEqual(d.attributes, l.attributes ?? null);
      assert.deepEqual(d.sources, l.sources ?? null);
    }
  });
  for (const locale of ['nl', 'de', 'fr', 'es']) {
    it(`serves ${locale} titles and city names where the source has them and English where not (every listing)`, async () => {
      const items = await all(big, { locale });
      assert.equal(items.length, m.listings.length);
      let translated = 0;
      for (const x of items) {
        const l = m.listingById.get(x.id)!;
        assert.equal(x.title, tr(l.title, locale), `${x.id} title`);
        assert.equal(x.location.city, tr(m.locations.get(m.cityOf(l.location_id))!.name, locale), `${x.id} city`);
        if (l.title[locale]) translated++;
      }
      assert.ok(translated > 0, 'the fixture has some translations in this locale');
    });
    it(`falls back field by field in ${locale} listing details`, async () => {
      for (const l of m.listings.filter((_, i) => i % 10 === 0)) {
        const d = (await big.get(`/v1/listings/${l.id}?locale=${locale}`)).body.data;
        assert.equal(d.title, tr(l.title, locale));
        assert.equal(d.description, tr(l.description ?? null, locale));
      }
    });
  }
});

// ---------------------------------------------------------------------------------------- filters

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
    const loc = mostCommon(m, levelOf(m, 'province'));
    await check({ location_id: loc }, inside(loc));
  });
  it('location_id at city level returns only listings inside the city', async () => {
    const loc = mostCommon(m, levelOf(m, 'city'));
    const items = await check({ location_id: loc }, inside(loc));
    const name = m.locations.get(loc)!.name.en;
    for (const x of items) assert.equal(x.location.city, name);
  });
  it('location_id at neighbourhood level returns only listings inside the neighbourhood', async () => {
    const loc = mostCommon(m, levelOf(m, 'neighbourhood'));
    await check({ location_id: loc }, inside(loc));
  });
  it("owner_id returns only that owner's listings", async () => {
    const owner = mostCommon(m, (l) => l.owner_id);
    await check({ owner_id: owner }, (x) => assert.equal(x.owner_id, owner));
  });
  it('min_price returns only listings priced at or above it (none without a price)', async () => {
    const v = quantile(
      m.listings.map((l) => l.price_eur).filter((x) => x !== null),
      0.6,
    );
    await check({ min_price: v }, (x) => assert.ok(x.price_eur !== null && x.price_eur >= v));
  });
  it('max_price returns only listings priced at or below it (none without a price)', async () => {
    const v = quantile(
      m.listings.map((l) => l.price_eur).filter((x) => x !== null),
      0.3,
    );
    await check({ max_price: v }, (x) => assert.ok(x.price_eur !== null && x.price_eur <= v));
  });
  it('min_price and max_price together bound the price on both sides (inclusive)', async () => {
    const prices = m.listings.map((l) => l.price_eur).filter((x) => x !== null);
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
    const loc = mostCommon(m, levelOf(m, 'city'));
    await check({ location_id: loc, min_rooms: 2, furnishing: 'UPHOLSTERED' }, (x, src) => {
      assert.ok(m.ancestorsOf(src.location_id).includes(loc));
      assert.ok(x.rooms >= 2);
      assert.equal(x.furnishing, 'UPHOLSTERED');
    });
  });
  it('combines province, property type, price ceiling and q', async () => {
    const loc = mostCommon(m, levelOf(m, 'province'));
    const prices = m.listings.map((l) => l.price_eur).filter((x) => x !== null);
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

// ---------------------------------------------------------------------------------------- stats

describe('GET /v1/listings/stats', () => {
  const fromWalk = async (s: TestServer, p: Params) => {
    const items = await all(s, p);
    return { count: items.length, ...expectedStats(items.map((x) => x.price_eur).filter((x) => x !== null)) };
  };
  it('equals the figures computed from a full walk, unfiltered', async () => {
    assert.deepEqual(await stats(big), await fromWalk(big, {}));
  });
  for (const level of ['province', 'city', 'neighbourhood']) {
    it(`equals the figures of a full walk for a ${level}-level location_id`, async () => {
      const p = { location_id: mostCommon(m, levelOf(m, level)) };
      assert.deepEqual(await stats(big, p), await fromWalk(big, p));
    });
  }
  const FILTERED: Params[] = [
    { property_type: 'apartment' },
    { furnishing: 'FURNISHED', min_rooms: 3 },
    { q: 'bright' },
    { min_price: 1000, max_price: 2000 },
    { min_size: 40, max_size: 70, property_type: 'apartment' },
  ];
  for (const p of FILTERED) {
    it(`equals the figures of a full walk for ${new URLSearchParams(p as Record<string, string>)}`, async () => {
      const s = await stats(big, p);
      assert.ok(s.count > 1, 'the filter matches several listings');
      assert.deepEqual(s, await fromWalk(big, p));
    });
  }
  it('equals the walk for a location_id combined with another filter', async () => {
    const p = { location_id: mostCommon(m, levelOf(m, 'city')), min_rooms: 2 };
    assert.deepEqual(await stats(big, p), await fromWalk(big, p));
  });
  it('counts listings without a price, computing the price figures from priced listings only', async () => {
    assert.deepEqual(await stats(basic), {
      count: 9,
      min_price_eur: 700,
      max_price_eur: 2400,
      average_price_eur: 1593.75,
      median_price_eur: 1450,
    });
  });
  it('takes the median of an even count as the mean of the two middle prices', async () => {
    // loc-ams: 1500, 2000, 2100, 2400 (and lst-010 without a price)
    assert.deepEqual(await stats(basic, { location_id: 'loc-ams' }), {
      count: 5,
      min_price_eur: 1500,
      max_price_eur: 2400,
      average_price_eur: 2000,
      median_price_eur: 2050,
    });
  });
  it('takes the middle price as the median of an odd count and rounds the average to cents', async () => {
    // own-2: 1400, 1500, 2100 → average 1666.666… → 1666.67
    assert.deepEqual(await stats(basic, { owner_id: 'own-2' }), {
      count: 3,
      min_price_eur: 1400,
      max_price_eur: 2100,
      average_price_eur: 1666.67,
      median_price_eur: 1500,
    });
  });
  it('rounds every average to cents on the generated fixture', async () => {
    for (const p of [{}, ...FILTERED]) {
      const a = (await stats(big, p)).average_price_eur;
      assert.ok(Math.abs(a * 100 - Math.round(a * 100)) < 1e-6, `${a} has at most two decimals`);
    }
  });
  it('returns count 0 and every price figure null when nothing matches', async () => {
    const none = {
      count: 0,
      min_price_eur: null,
      max_price_eur: null,
      average_price_eur: null,
      median_price_eur: null,
    };
    assert.deepEqual(await stats(basic, { min_price: 10_000_000 }), none);
    assert.deepEqual(await stats(basic, { location_id: 'loc-nowhere' }), none);
    assert.deepEqual(await stats(basic, { q: 'zzzunknownword' }), none);
    assert.deepEqual(await stats(basic, { furnishing: 'SHELL', property_type: 'room' }), none);
  });
  it('returns the price figures as null, with the count, when no matching listing has a price', async () => {
    assert.deepEqual(await stats(basic, { owner_id: 'own-1', max_size: 45 }), {
      count: 1,
      min_price_eur: null,
      max_price_eur: null,
      average_price_eur: null,
      median_price_eur: null,
    });
  });
  it('gives the same figures in every locale', async () => {
    const en = await stats(basic, { location_id: 'loc-zh' });
    for (const locale of ['nl', 'de', 'fr', 'es'])
      assert.deepEqual(await stats(basic, { location_id: 'loc-zh', locale }), en);
  });
});

// ---------------------------------------------------------------------------------------- similar

describe('GET /v1/listings/{id}/similar', () => {
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
    const s = await startServer({ SNAPSHOT_PATH: (await buildTestSnapshot(dir)).path });
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

// ---------------------------------------------------------------------------------------- query plans

describe('listing filters: the planner never scans the listings table', () => {
  let db: Database.Database;
  before(() => {
    db = new Database(bigPath, { readonly: true, fileMustExist: true });
  });
  after(() => db?.close());
  const fts = (q: string) => ({
    expr: tokens(q)
      .map((t) => `"${t}"`)
      .join(' '),
    terms: tokens(q),
  });
  const plan = (f: ListingFilters) => {
    const p = planOf(db, f);
    assert.ok(!planHasFullScan(p), `plan scans listings: ${p.join(' | ')}`);
    return p;
  };
  for (const [name, f] of Object.entries(HOT_QUERY_SAMPLES)) {
    it(`uses an index for ${name} (a value that matches nothing)`, () => {
      plan(f);
    });
  }
  const real = (): Record<string, ListingFilters> => {
    const prices = m.listings.map((l) => l.price_eur).filter((x) => x !== null);
    const sizes = m.listings.map((l) => l.size_m2).filter((x) => x !== null);
    return {
      'a real province': { location_column: 'province_id', location_id: mostCommon(m, levelOf(m, 'province')) },
      'a real city': { location_column: 'city_id', location_id: mostCommon(m, levelOf(m, 'city')) },
      'a real neighbourhood': {
        location_column: 'neighbourhood_id',
        location_id: mostCommon(m, levelOf(m, 'neighbourhood')),
      },
      'a real owner': { owner_id: mostCommon(m, (l) => l.owner_id) },
      'furnishing=SHELL': { furnishing: 'SHELL' },
      'furnishing=UPHOLSTERED (the most common value)': { furnishing: 'UPHOLSTERED' },
      'property_type=apartment (the most common value)': { property_type: 'apartment' },
      'a high min_price': { min_price: quantile(prices, 0.95) },
      'a low max_price': { max_price: quantile(prices, 0.05) },
      'a narrow price band': { min_price: quantile(prices, 0.5), max_price: quantile(prices, 0.52) },
      'a high min_size': { min_size: quantile(sizes, 0.95) },
      'a low max_size': { max_size: quantile(sizes, 0.05) },
      'min_rooms=6': { min_rooms: 6 },
      'a common q term': { fts: fts('apartment') },
      'a rare q term': { fts: fts('penthouse') },
      'city + price band': {
        location_column: 'city_id',
        location_id: mostCommon(m, levelOf(m, 'city')),
        min_price: quantile(prices, 0.4),
        max_price: quantile(prices, 0.6),
      },
      'furnishing + property_type': { furnishing: 'FURNISHED', property_type: 'studio' },
      'q + min_rooms': { fts: fts('bright'), min_rooms: 3 },
      'owner + max_price': { owner_id: mostCommon(m, (l) => l.owner_id), max_price: quantile(prices, 0.5) },
      'province + furnishing + min_size': {
        location_column: 'province_id',
        location_id: mostCommon(m, levelOf(m, 'province')),
        furnishing: 'SHELL',
        min_size: 50,
      },
      'neighbourhood + q': {
        location_column: 'neighbourhood_id',
        location_id: mostCommon(m, levelOf(m, 'neighbourhood')),
        fts: fts('apartment'),
      },
      'every filter at once': {
        fts: fts('apartment'),
        location_column: 'city_id',
        location_id: mostCommon(m, levelOf(m, 'city')),
        owner_id: mostCommon(m, (l) => l.owner_id),
        min_price: 500,
        max_price: 5000,
        min_size: 20,
        max_size: 200,
        min_rooms: 1,
        furnishing: 'FURNISHED',
        property_type: 'apartment',
      },
    };
  };
  it('uses an index for each single filter with real values, and for combinations', () => {
    const bad: string[] = [];
    for (const [name, f] of Object.entries(real())) {
      const p = planOf(db, f);
      if (planHasFullScan(p)) bad.push(`${name}: ${p.join(' | ')}`);
    }
    assert.deepEqual(bad, []);
  });
  it('uses an index on the basic fixture snapshot too', async () => {
    const { path } = await buildTestSnapshot();
    const small = new Database(path, { readonly: true });
    try {
      for (const [name, f] of Object.entries({
        ...HOT_QUERY_SAMPLES,
        'city loc-ams': { location_column: 'city_id', location_id: 'loc-ams' } as ListingFilters,
        'furnishing FURNISHED': { furnishing: 'FURNISHED' },
      })) {
        const p = planOf(small, f);
        assert.ok(!planHasFullScan(p), `${name}: ${p.join(' | ')}`);
      }
    } finally {
      small.close();
    }
  });
});

describe('listing rows are fetched by key: no statement of the listings routes scans a table', () => {
  it('the page, detail and similar statements, in every locale', () => {
    const db = new Database(bigPath, { readonly: true, fileMustExist: true });
    try {
      const st = prepare(db);
      const statements: [string, { source: string }, Record<string, unknown> | unknown[]][] = [
        ...LOCALES.flatMap((l): [string, { source: string }, Record<string, unknown>][] => [
          [`page rows (${l})`, st.byRids[l], { rids: '[1,2,3]' }],
          [`detail (${l})`, st.byId[l], { id: 'x' }],
        ]),
        ['rid at or before an id', st.ridAtOrBefore, ['x']],
        ['similar: reference', st.ridOf, ['x']],
      ];
      const scans: string[] = [];
      for (const [name, s, args] of statements) {
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${s.source}`).all(args as never) as { detail: string }[]).map(
          (r) => r.detail,
        );
        assert.ok(plan.length > 0, name);
        // json_each (the page's rid list, aliased j where it drives the join) is the only thing a plan may scan.
        for (const d of plan)
          if (/^SCAN /.test(d) && !/^SCAN (json_each|j) VIRTUAL TABLE/.test(d)) scans.push(`${name}: ${d}`);
      }
      assert.deepEqual(scans, []);
      // similar's reference is found in the id index alone: its rule's columns are the scan's, in memory.
      const ref = (db.prepare(`EXPLAIN QUERY PLAN ${st.ridOf.source}`).all('x') as { detail: string }[]).map(
        (r) => r.detail,
      );
      assert.match(ref.join(' | '), /USING COVERING INDEX/);
    } finally {
      db.close();
    }
  });
});

describe('a page of summaries is put together by SQLite in the order of the rids given', () => {
  it('keeps any order of the rids (similar ranks them), in every locale, and names the last id', () => {
    const db = new Database(bigPath, { readonly: true, fileMustExist: true });
    try {
      const st = prepare(db);
      const idOf = db.prepare('SELECT id FROM listings WHERE rid = ?').pluck();
      const n = db.prepare('SELECT count(*) FROM listings').pluck().get() as number;
      let seed = 7;
      const rnd = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      for (let round = 0; round < 20; round++) {
        const rids = [...new Set(Array.from({ length: 1 + (round % 12) * 4 }, () => 1 + Math.floor(rnd() * n)))];
        if (round % 2 === 0) rids.reverse();
        for (const l of LOCALES) {
          const ctx = { lang: 0, meta: { locale: l } };
          const page = summariesOf(st, rids, ctx);
          const items = JSON.parse(`[${page.json}]`) as { id: string }[];
          assert.deepEqual(
            items.map((x) => x.id),
            rids.map((r) => idOf.get(r)),
            `${l}: ${rids.join(',')}`,
          );
          assert.equal(page.lastId, items[items.length - 1].id);
        }
      }
      assert.deepEqual(summariesOf(st, [], { lang: 0, meta: { locale: 'en' } }), { json: '' });
    } finally {
      db.close();
    }
  });
});

describe('pre-serialised summaries carry awkward text exactly', () => {
  it('quotes, backslashes, control characters, separators, emoji and U+2028 in every text field', async () => {
    const dir = copyFixture();
    const file = join(dir, 'listings.ndjson');
    const odd = 'He said "hi" \\ back\\slash \u0001\u0002 tab\t nl\n \u2028 \u00e9\u00df \ud83c\udfe0 </script>';
    const base = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]);
    const rec = {
      ...base,
      id: 'lst-odd',
      slug: `slug ${odd}`,
      title: { en: `T ${odd}`, nl: `NL ${odd}` },
      description: { en: `D ${odd}`, de: `DE ${odd}` },
      street: odd,
      number: '1"a',
      postcode: '1015 AB',
      energy_label: null,
      image_url: 'https://img.example.nl/a"b.jpg',
      // biome-ignore lint/correctness/noPrecisionLoss: more digits than a double holds, on purpose
      latitude: 52.123456789012345,
      longitude: -0.1,
      price_eur: 1234.5,
      size_m2: 0,
      rooms: 2.5,
      attributes: { note: odd, nested: { list: [odd, 1, null, true] } },
      images: [`https://img.example.nl/${encodeURIComponent(odd)}.jpg`],
    };
    appendFileSync(file, `${JSON.stringify(rec)}\n`);
    const built = await buildTestSnapshot(dir);
    const server = await startServer({ SNAPSHOT_PATH: built.path });
    try {
      for (const locale of ['en', 'nl', 'de']) {
        const want = {
          id: rec.id,
          slug: rec.slug,
          title: rec.title[locale as 'en'] ?? rec.title.en,
          price_eur: 1234.5,
          size_m2: 0,
          rooms: 2.5,
          furnishing: rec.furnishing,
          property_type: rec.property_type,
          energy_label: null,
          owner_id: rec.owner_id,
          image_url: rec.image_url,
          created_at: rec.created_at,
          updated_at: rec.updated_at,
        };
        const d = await server.get(`/v1/listings/lst-odd?locale=${locale}`);
        assert.equal(d.status, 200);
        const { location, description, images, attributes, sources, ...rest } = d.body.data;
        assert.deepEqual(rest, want, locale);
        assert.equal(location.street, odd);
        assert.equal(location.number, '1"a');
        // biome-ignore lint/correctness/noPrecisionLoss: the same literal as the source record
        assert.equal(location.latitude, 52.123456789012345);
        assert.equal(description, (rec.description as Record<string, string>)[locale] ?? rec.description.en);
        assert.deepEqual(images, rec.images);
        assert.deepEqual(attributes, rec.attributes);
        assert.deepEqual(sources, rec.sources ?? null);
        const s = await server.get(`/v1/listings?q=back&locale=${locale}`);
        assert.equal(s.status, 200);
        const item = s.body.data.find((x: { id: string }) => x.id === 'lst-odd');
        assert.ok(item, `found by q in ${locale}`);
        assert.deepEqual({ ...item, location: undefined }, { ...want, location: undefined });
        assert.deepEqual(item.location, { ...location });
      }
    } finally {
      await server.close();
    }
  });
});
