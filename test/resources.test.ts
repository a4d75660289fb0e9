// The other resource families over HTTP (owners, internet, insurance, platforms, articles, market, locations):
// public records only, every filter, q, detail values, and cursor walks. Basic fixture, real compiler, real service.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BASIC } from './support/files.ts';
import { assertAscendingIds, loadSource, walk } from './support/model.ts';
import { useServer } from './support/server.ts';
import { assertError } from './support/shapes.ts';

const server = useServer();
const src = loadSource(BASIC);

const ids = async (path: string) => {
  const res = await server.get(path);
  assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 300)}`);
  return (res.body.data as { id: string }[]).map((x) => x.id);
};
const data = async (path: string) => {
  const res = await server.get(path);
  assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 300)}`);
  return res.body.data;
};
/** Published records of a source file, ascending by id. */
const published = (file: string) =>
  src.all[file]
    .filter((r) => r.published !== false)
    .map((r) => r.id as string)
    .sort();

describe('every paginated collection: cursor walks', () => {
  const COLLECTIONS: [string, string][] = [
    ['/v1/owners', 'owners'],
    ['/v1/internet/providers', 'internet_providers'],
    ['/v1/internet/plans', 'internet_plans'],
    ['/v1/insurance/products', 'insurance_products'],
    ['/v1/platforms', 'platforms'],
    ['/v1/locations', 'locations'],
    ['/v1/articles', 'articles'],
    ['/v1/insurance/providers', 'insurance_providers'],
    ['/v1/glossary', 'glossary'],
  ];
  for (const [path, file] of COLLECTIONS) {
    it(`walks ${path} with limit 1: every published record once, ascending, next_cursor null only at the end`, async () => {
      const { items, pages } = await walk(server, path, 1);
      assertAscendingIds(items);
      assert.deepEqual(
        items.map((x) => x.id),
        published(file),
      );
      assert.equal(pages, items.length);
    });
  }
  it('walks /v1/locations with limit 2 and 3 (several pages)', async () => {
    for (const limit of [2, 3]) {
      const { items, pages } = await walk(server, '/v1/locations', limit);
      assertAscendingIds(items);
      assert.deepEqual(
        items.map((x) => x.id),
        published('locations'),
      );
      assert.equal(pages, Math.ceil(7 / limit));
    }
  });
  it('answers every page size and filter set right, past the per-search statement cache (one statement per size)', async () => {
    // 3 filter sets × 100 page sizes × with and without a cursor: more statements than the search keeps.
    const all = published('locations');
    for (const [filter, expected] of [
      ['', all],
      ['&type=neighbourhood', ['loc-ams-jordaan', 'loc-ams-pijp']],
      ['&q=amsterdam', await ids('/v1/locations?q=amsterdam&limit=100')],
    ] as [string, string[]][]) {
      assert.ok(expected.length >= 1, filter);
      for (let limit = 1; limit <= 100; limit++) {
        const first = await server.get(`/v1/locations?limit=${limit}${filter}`);
        assert.equal(first.status, 200, first.text);
        const got = (first.body.data as { id: string }[]).map((x) => x.id);
        assert.deepEqual(got, expected.slice(0, limit), `limit=${limit}${filter}`);
        const cursor = first.body.pagination.next_cursor as string | null;
        assert.equal(cursor !== null, expected.length > limit, `limit=${limit}${filter}`);
        if (cursor === null) continue;
        const second = await server.get(`/v1/locations?limit=${limit}${filter}&cursor=${encodeURIComponent(cursor)}`);
        assert.equal(second.status, 200, second.text);
        assert.deepEqual(
          (second.body.data as { id: string }[]).map((x) => x.id),
          expected.slice(limit, 2 * limit),
          `second page, limit=${limit}${filter}`,
        );
      }
    }
  });
  it('walks a filtered /v1/locations?type=neighbourhood with limit 1', async () => {
    const { items } = await walk(server, '/v1/locations?type=neighbourhood', 1);
    assert.deepEqual(
      items.map((x) => x.id),
      ['loc-ams-jordaan', 'loc-ams-pijp'],
    );
  });
  it('walks a q search on /v1/internet/plans with limit 1', async () => {
    const { items } = await walk(server, '/v1/internet/plans?q=glasvezel', 1);
    assert.deepEqual(
      items.map((x) => x.id),
      ['plan-1', 'plan-2'],
    );
  });
});

describe('GET /v1/owners', () => {
  it('returns only published owners', async () => {
    assert.deepEqual(await ids('/v1/owners'), ['own-1', 'own-2', 'own-4', 'own-5']);
  });
  it('filters by type', async () => {
    assert.deepEqual(await ids('/v1/owners?type=agency'), ['own-1']);
    assert.deepEqual(await ids('/v1/owners?type=private_landlord'), ['own-2']);
    assert.deepEqual(await ids('/v1/owners?type=housing_corporation'), []);
  });
  it('searches name, areas served and translated short descriptions with q', async () => {
    assert.deepEqual(await ids('/v1/owners?q=canal'), ['own-1']);
    assert.deepEqual(await ids('/v1/owners?q=amsterdam'), ['own-1']);
    assert.deepEqual(await ids('/v1/owners?q=makelaarskantoor'), ['own-1']);
    assert.deepEqual(await ids('/v1/owners?q=piet'), ['own-2']);
    assert.deepEqual(await ids('/v1/owners?q=gone'), [], 'an unpublished owner is not found by q');
  });
  it('combines q and type', async () => {
    assert.deepEqual(await ids('/v1/owners?q=canal&type=private_landlord'), []);
  });
  it('names the areas served that are locations as the requested locale names them, in the source order', async () => {
    // own-1 serves "Amsterdam" (no translated name), "The Hague" (a city named in every locale), "Randstad" (no
    // location) and "Hidden Quarter" (an unpublished neighbourhood: its Dutch name is never shown).
    const areas = async (path: string) => (await data(path)).areas_served;
    assert.deepEqual(await areas('/v1/owners/own-1'), ['Amsterdam', 'The Hague', 'Randstad', 'Hidden Quarter']);
    assert.deepEqual(await areas('/v1/owners/own-1?locale=nl'), [
      'Amsterdam',
      'Den Haag',
      'Randstad',
      'Hidden Quarter',
    ]);
    assert.deepEqual(await areas('/v1/owners/own-1?locale=fr'), ['Amsterdam', 'La Haye', 'Randstad', 'Hidden Quarter']);
    assert.deepEqual(await areas('/v1/owners/own-1?locale=es'), ['Amsterdam', 'La Haya', 'Randstad', 'Hidden Quarter']);
    const page = (await server.get('/v1/owners?locale=de')).body.data;
    assert.deepEqual(page.find((o: any) => o.id === 'own-1').areas_served, [
      'Amsterdam',
      'Den Haag',
      'Randstad',
      'Hidden Quarter',
    ]);
    assert.equal(page.find((o: any) => o.id === 'own-2').areas_served, null);
    assert.deepEqual(page.find((o: any) => o.id === 'own-5').areas_served, []);
  });
  it('finds an owner by the name of an area served in any language', async () => {
    assert.deepEqual(await ids('/v1/owners?q=haye'), ['own-1', 'own-4']);
    assert.deepEqual(await ids('/v1/owners?q=den%20haag'), ['own-1', 'own-4']);
    assert.deepEqual(await ids('/v1/owners?q=randstad'), ['own-1', 'own-4']);
    assert.deepEqual(await ids('/v1/owners?q=kwartier'), [], "an unpublished location's name is not an area's");
  });
  it('returns the detail with its long description and lists', async () => {
    const o = await data('/v1/owners/own-1');
    assert.equal(o.description, 'A long description of Canal Homes.');
    assert.deepEqual(o.phone_numbers, ['+31 20 000 0001']);
    assert.deepEqual(o.certifications, ['NVM']);
    assert.equal(o.updated_at, '2026-01-02T10:00:00Z');
  });
});

describe('GET /v1/internet/providers and /v1/internet/plans', () => {
  it('returns only published providers', async () => {
    assert.deepEqual(await ids('/v1/internet/providers'), ['inet-kpn', 'inet-zig']);
  });
  it('searches providers with q', async () => {
    assert.deepEqual(await ids('/v1/internet/providers?q=telecom'), ['inet-kpn']);
    assert.deepEqual(await ids('/v1/internet/providers?q=ziggo'), ['inet-zig']);
  });
  it('returns the provider detail with support details, strengths and considerations', async () => {
    const p = await data('/v1/internet/providers/inet-kpn');
    assert.equal(p.support_details, 'Phone support 8-22');
    assert.deepEqual(p.strengths, ['Fibre coverage', 'Stable']);
    assert.deepEqual(p.considerations, ['Pricier']);
    assert.deepEqual(p.support_languages, ['nl', 'en']);
  });
  it('returns only published plans', async () => {
    assert.deepEqual(await ids('/v1/internet/plans'), ['plan-1', 'plan-2', 'plan-3']);
  });
  it('filters plans by provider_id and connection_type', async () => {
    assert.deepEqual(await ids('/v1/internet/plans?provider_id=inet-kpn'), ['plan-1', 'plan-2']);
    assert.deepEqual(await ids('/v1/internet/plans?connection_type=cable'), ['plan-3']);
    assert.deepEqual(await ids('/v1/internet/plans?provider_id=inet-old'), []);
  });
  it('filters plans by min_download_mbps (inclusive)', async () => {
    assert.deepEqual(await ids('/v1/internet/plans?min_download_mbps=500'), ['plan-2', 'plan-3']);
    assert.deepEqual(await ids('/v1/internet/plans?min_download_mbps=100'), ['plan-1', 'plan-2', 'plan-3']);
    assert.deepEqual(await ids('/v1/internet/plans?min_download_mbps=100.5'), ['plan-2', 'plan-3']);
    // Digits on one side of the point are enough, either side; an exponent is a number too.
    assert.deepEqual(await ids('/v1/internet/plans?min_download_mbps=500.'), ['plan-2', 'plan-3']);
    assert.deepEqual(await ids('/v1/internet/plans?min_download_mbps=.5'), ['plan-1', 'plan-2', 'plan-3']);
    assert.deepEqual(await ids('/v1/internet/plans?min_download_mbps=5e2'), ['plan-2', 'plan-3']);
  });
  it('filters plans by max_monthly_price_cents on the regular price (inclusive)', async () => {
    assert.deepEqual(await ids('/v1/internet/plans?max_monthly_price_cents=5500'), ['plan-1', 'plan-3']);
    assert.deepEqual(
      await ids('/v1/internet/plans?max_monthly_price_cents=2500'),
      [],
      'an introductory price does not count',
    );
  });
  it('combines plan filters', async () => {
    assert.deepEqual(await ids('/v1/internet/plans?provider_id=inet-kpn&min_download_mbps=500'), ['plan-2']);
    assert.deepEqual(await ids('/v1/internet/plans?connection_type=fiber&max_monthly_price_cents=5000&q=glasvezel'), [
      'plan-1',
    ]);
  });
  it("searches plans by name and by their provider's name with q", async () => {
    assert.deepEqual(await ids('/v1/internet/plans?q=glasvezel'), ['plan-1', 'plan-2']);
    // The source has the ligature ("Fast ﬁbre"): the index holds "fibre", and a query in either form finds it.
    assert.deepEqual(await ids('/v1/internet/plans?q=fibre'), ['plan-1']);
    assert.deepEqual(await ids(`/v1/internet/plans?q=${encodeURIComponent('ﬁbre')}`), ['plan-1']);
    assert.deepEqual(await ids('/v1/internet/plans?q=kpn'), ['plan-1', 'plan-2']);
  });
});

describe('GET /v1/insurance/products and /v1/insurance/providers/{id}', () => {
  it('returns only published products', async () => {
    assert.deepEqual(await ids('/v1/insurance/products'), ['insp-1', 'insp-2']);
  });
  it('filters by provider_id, insurance_type and availability', async () => {
    assert.deepEqual(await ids('/v1/insurance/products?provider_id=ins-centraal'), ['insp-1', 'insp-2']);
    assert.deepEqual(await ids('/v1/insurance/products?provider_id=ins-hidden'), []);
    assert.deepEqual(await ids('/v1/insurance/products?insurance_type=contents'), ['insp-1']);
    assert.deepEqual(await ids('/v1/insurance/products?availability=limited'), ['insp-2']);
    assert.deepEqual(await ids('/v1/insurance/products?insurance_type=contents&availability=limited'), []);
  });
  it('searches products with q (summary, official name)', async () => {
    assert.deepEqual(await ids('/v1/insurance/products?q=theft'), ['insp-1']);
    assert.deepEqual(await ids('/v1/insurance/products?q=inboedelverzekering'), ['insp-1']);
  });
  it('returns the provider detail', async () => {
    const p = await data('/v1/insurance/providers/ins-centraal');
    assert.equal(p.name, 'Centraal Beheer');
    assert.equal(p.complaints_url, 'https://www.centraalbeheer.nl/klachten');
    assert.equal(p.logo_url, null);
  });
});

describe('GET /v1/platforms', () => {
  it('returns only published platforms', async () => {
    assert.deepEqual(await ids('/v1/platforms'), ['plat-funda', 'plat-kamernet']);
  });
  it('filters by type and category', async () => {
    assert.deepEqual(await ids('/v1/platforms?type=listing_site'), ['plat-funda', 'plat-kamernet']);
    assert.deepEqual(await ids('/v1/platforms?category=rooms'), ['plat-kamernet']);
    assert.deepEqual(await ids('/v1/platforms?category=general'), ['plat-funda']);
    assert.deepEqual(await ids('/v1/platforms?type=listing_site&category=rooms'), ['plat-kamernet']);
  });
  it('searches with q', async () => {
    assert.deepEqual(await ids('/v1/platforms?q=funda'), ['plat-funda']);
    assert.deepEqual(await ids('/v1/platforms?q=grootste'), ['plat-funda'], 'a translated headline is searchable');
  });
  it('returns the detail with attributes and Markdown content as stored', async () => {
    const p = await data('/v1/platforms/plat-funda');
    assert.deepEqual(p.attributes, { founded: 2001 });
    assert.equal(p.content, '# Funda\nLong **Markdown** content.');
    assert.equal(p.pricing_details, 'Free for tenants');
    assert.deepEqual(p.features, ['Alerts', 'Map search']);
  });
});

describe('GET /v1/articles/{id}', () => {
  it('returns the article with its Markdown content and location_id', async () => {
    const a = await data('/v1/articles/art-1');
    assert.deepEqual(a, {
      id: 'art-1',
      slug: 'renting-in-amsterdam',
      title: 'Renting in Amsterdam',
      description: 'A guide',
      content: '## Tips\nStart early.',
      category: 'guide',
      location_id: 'loc-ams',
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-02-01T00:00:00Z',
    });
  });
});

describe('GET /v1/market/metrics and observations', () => {
  const obs = (metric: string, qs: string) => data(`/v1/market/metrics/${metric}/observations?${qs}`);
  it('lists the metric definitions by id', async () => {
    const ms = await data('/v1/market/metrics');
    assert.deepEqual(
      ms.map((x: any) => x.id),
      ['median_rent', 'median_rent_per_m2', 'new_listings'],
    );
    assert.deepEqual(ms[0], {
      id: 'median_rent',
      name: 'Median asking rent',
      description: 'Median monthly asking rent of listings first seen in the month.',
      unit: 'EUR',
      min_sample_size: 2,
    });
  });
  it('returns the median asking rent of a city by first-seen month, omitting months below the minimum sample', async () => {
    // January (Amsterdam): 2000, 2400, 1500 and the now-inactive 1000 → median 1750; February has one priced listing (< 2)
    assert.deepEqual(await obs('median_rent', 'location_id=loc-ams&from=2026-01-01&to=2026-12-31'), [
      { date: '2026-01-01', value: 1750, sample_size: 4 },
    ]);
  });
  it('counts now-inactive listings but not unpublished or for-sale ones', async () => {
    // January: lst-001, 002, 003 and inactive 004; February: 010 and 012 (005 unpublished, 006 for sale)
    assert.deepEqual(await obs('new_listings', 'location_id=loc-ams&from=2026-01-01&to=2026-12-31'), [
      { date: '2026-01-01', value: 4, sample_size: 4 },
      { date: '2026-02-01', value: 2, sample_size: 2 },
    ]);
  });
  it('computes the median price per m² (mean of the two middle values for an even sample)', async () => {
    // 1000/50 = 20, 2400/90 = 26.67, 2000/60 = 33.33, 1500/30 = 50 → (26.67 + 33.33) / 2 = 30
    assert.deepEqual(await obs('median_rent_per_m2', 'location_id=loc-ams&from=2026-01-01&to=2026-01-31'), [
      { date: '2026-01-01', value: 30, sample_size: 4 },
    ]);
  });
  it("groups a city's neighbourhoods, including unpublished ones, into the city cohort", async () => {
    // The Hague, February: lst-007 1300, lst-008 1400, lst-011 (in the unpublished loc-hidden) 1350
    assert.deepEqual(await obs('median_rent', 'location_id=loc-dh&from=2026-02-01&to=2026-02-28'), [
      { date: '2026-02-01', value: 1350, sample_size: 3 },
    ]);
  });
  it('includes every month from the month of from to the month of to', async () => {
    assert.deepEqual(await obs('new_listings', 'location_id=loc-ams&from=2026-02-15&to=2026-02-16'), [
      { date: '2026-02-01', value: 2, sample_size: 2 },
    ]);
    assert.deepEqual(await obs('new_listings', 'location_id=loc-ams&from=2025-12-31&to=2026-01-01'), [
      { date: '2026-01-01', value: 4, sample_size: 4 },
    ]);
  });
  it('returns an empty array (200) for a range without observations', async () => {
    assert.deepEqual(await obs('median_rent', 'location_id=loc-ams&from=2025-01-01&to=2025-12-31'), []);
  });
  it('gives the same observations in every locale', async () => {
    const en = await obs('new_listings', 'location_id=loc-ams&from=2026-01-01&to=2026-12-31');
    for (const l of ['nl', 'de', 'fr', 'es'])
      assert.deepEqual(await obs('new_listings', `location_id=loc-ams&from=2026-01-01&to=2026-12-31&locale=${l}`), en);
  });
  it('returns 404 for an unknown metric even with valid parameters', async () => {
    assertError(
      await server.get('/v1/market/metrics/rent_index/observations?location_id=loc-ams&from=2026-01-01&to=2026-02-01'),
      404,
      { code: 'not_found' },
    );
  });
});

describe('GET /v1/locations', () => {
  it('returns only published locations, ascending by id', async () => {
    assert.deepEqual(await ids('/v1/locations?limit=100'), [
      'loc-ams',
      'loc-ams-jordaan',
      'loc-ams-pijp',
      'loc-dh',
      'loc-nh',
      'loc-rdam',
      'loc-zh',
    ]);
  });
  it('filters by type', async () => {
    assert.deepEqual(await ids('/v1/locations?type=city'), ['loc-ams', 'loc-dh', 'loc-rdam']);
    assert.deepEqual(await ids('/v1/locations?type=province'), ['loc-nh', 'loc-zh']);
  });
  it('filters by parent_id', async () => {
    assert.deepEqual(await ids('/v1/locations?parent_id=loc-ams'), ['loc-ams-jordaan', 'loc-ams-pijp']);
    assert.deepEqual(
      await ids('/v1/locations?parent_id=loc-dh'),
      [],
      'the unpublished child of The Hague is not listed',
    );
    assert.deepEqual(await ids('/v1/locations?parent_id=loc-zh&type=city'), ['loc-dh', 'loc-rdam']);
  });
  it('searches names in every locale and slugs with q', async () => {
    assert.deepEqual(await ids('/v1/locations?q=haag'), ['loc-dh']);
    assert.deepEqual(await ids('/v1/locations?q=La%20Haya'), ['loc-dh']);
    assert.deepEqual(await ids('/v1/locations?q=amsterdam'), ['loc-ams']);
    assert.deepEqual(await ids('/v1/locations?q=pijp'), ['loc-ams-pijp']);
    assert.deepEqual(await ids('/v1/locations?q=hidden'), []);
  });
  it('returns a location with its parent chain from the province down', async () => {
    const l = await data('/v1/locations/loc-ams-pijp');
    assert.equal(l.type, 'neighbourhood');
    assert.equal(l.parent_id, 'loc-ams');
    assert.deepEqual(l.parents, [
      { id: 'loc-nh', slug: 'noord-holland', type: 'province', name: 'North Holland' },
      { id: 'loc-ams', slug: 'amsterdam', type: 'city', name: 'Amsterdam' },
    ]);
  });
  it('returns a province with no parents', async () => {
    const l = await data('/v1/locations/loc-zh');
    assert.equal(l.parent_id, null);
    assert.deepEqual(l.parents, []);
  });
  it('returns the ids that the listing filter accepts (location_id from /v1/locations works in /v1/listings)', async () => {
    for (const loc of await ids('/v1/locations?type=city')) {
      const res = await server.get(`/v1/listings?location_id=${loc}&limit=1`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.length, 1, `${loc} has listings`);
    }
  });
});
