// /v1/listings and other collections walked page by page with next_cursor: every record once, ascending, totals
// equal to the stats count. Invariants on a larger generated fixture; exact facts on the basic fixture.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commonPlace, expectedIds, ids, pricesOf, quantile, stats, useListings } from './support/listings.ts';
import { assertAscendingIds, type Rec, walk, withParams } from './support/model.ts';
import { useServer } from './support/server.ts';

const { m, big } = useListings();
const basic = useServer();

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
    const p = { location_id: commonPlace(m, 'city'), property_type: 'apartment' };
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
    const prices = pricesOf(m);
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
