// GET /v1/listings/stats: the figures of a full walk for every filter (generated fixture), and the exact count,
// minimum, maximum, average and median on the basic fixture.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { all, commonPlace, type Params, stats, useListings } from './support/listings.ts';
import { expectedStats } from './support/model.ts';
import { type TestServer, useServer } from './support/server.ts';

const { m, big } = useListings();
const basic = useServer();

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
      const p = { location_id: commonPlace(m, level) };
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
    const p = { location_id: commonPlace(m, 'city'), min_rooms: 2 };
    assert.deepEqual(await stats(big, p), await fromWalk(big, p));
  });
  /** The stats of a search: its count, then minimum, maximum, average and median price. */
  const figures = (count: number, ...[min, max, average, median]: (number | null)[]) => ({
    count,
    min_price_eur: min,
    max_price_eur: max,
    average_price_eur: average,
    median_price_eur: median,
  });
  const EXACT: [string, Params, ReturnType<typeof figures>][] = [
    [
      'counts listings without a price, computing the price figures from priced listings only',
      {},
      figures(9, 700, 2400, 1593.75, 1450),
    ],
    [
      // loc-ams: 1500, 2000, 2100, 2400 (and lst-010 without a price)
      'takes the median of an even count as the mean of the two middle prices',
      { location_id: 'loc-ams' },
      figures(5, 1500, 2400, 2000, 2050),
    ],
    [
      // own-2: 1400, 1500, 2100 → average 1666.666… → 1666.67
      'takes the middle price as the median of an odd count and rounds the average to cents',
      { owner_id: 'own-2' },
      figures(3, 1400, 2100, 1666.67, 1500),
    ],
    [
      'returns the price figures as null, with the count, when no matching listing has a price',
      { owner_id: 'own-1', max_size: 45 },
      figures(1, null, null, null, null),
    ],
  ];
  for (const [what, p, want] of EXACT)
    it(what, async () => {
      assert.deepEqual(await stats(basic, p), want);
    });
  it('rounds every average to cents on the generated fixture', async () => {
    for (const p of [{}, ...FILTERED]) {
      const a = (await stats(big, p)).average_price_eur;
      assert.ok(Math.abs(a * 100 - Math.round(a * 100)) < 1e-6, `${a} has at most two decimals`);
    }
  });
  it('returns count 0 and every price figure null when nothing matches', async () => {
    const none = figures(0, null, null, null, null);
    assert.deepEqual(await stats(basic, { min_price: 10_000_000 }), none);
    assert.deepEqual(await stats(basic, { location_id: 'loc-nowhere' }), none);
    assert.deepEqual(await stats(basic, { q: 'zzzunknownword' }), none);
    assert.deepEqual(await stats(basic, { furnishing: 'SHELL', property_type: 'room' }), none);
  });
  it('gives the same figures in every locale', async () => {
    const en = await stats(basic, { location_id: 'loc-zh' });
    for (const locale of ['nl', 'de', 'fr', 'es'])
      assert.deepEqual(await stats(basic, { location_id: 'loc-zh', locale }), en);
  });
});
