// The query plans of the listings routes: no listing filter (sample values, real values, combinations) makes the
// planner scan the listings table, and the page, detail and similar statements fetch rows by key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { HOT_QUERY_SAMPLES, type ListingFilters, planHasFullScan } from '../snapshot-format/listing-sql.ts';
import { LOCALES } from '../snapshot-format/locales.ts';
import { planOf } from '../src/listings/planner.ts';
import { prepare } from '../src/routes/listings.ts';
import { commonPlace, LISTINGS, mostCommon, pricesOf, quantile } from './support/listings.ts';
import { generated, tokens } from './support/model.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

const { model: m, snapshot } = generated(...LISTINGS); // its snapshot file only: no service

describe('listing filters: the planner never scans the listings table', () => {
  let db: Database.Database;
  before(async () => {
    db = new Database((await snapshot()).path, { readonly: true, fileMustExist: true });
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
    const prices = pricesOf(m);
    const sizes = m.listings.map((l) => l.size_m2).filter((x) => x !== null);
    return {
      'a real province': { location_column: 'province_id', location_id: commonPlace(m, 'province') },
      'a real city': { location_column: 'city_id', location_id: commonPlace(m, 'city') },
      'a real neighbourhood': {
        location_column: 'neighbourhood_id',
        location_id: commonPlace(m, 'neighbourhood'),
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
        location_id: commonPlace(m, 'city'),
        min_price: quantile(prices, 0.4),
        max_price: quantile(prices, 0.6),
      },
      'furnishing + property_type': { furnishing: 'FURNISHED', property_type: 'studio' },
      'q + min_rooms': { fts: fts('bright'), min_rooms: 3 },
      'owner + max_price': { owner_id: mostCommon(m, (l) => l.owner_id), max_price: quantile(prices, 0.5) },
      'province + furnishing + min_size': {
        location_column: 'province_id',
        location_id: commonPlace(m, 'province'),
        furnishing: 'SHELL',
        min_size: 50,
      },
      'neighbourhood + q': {
        location_column: 'neighbourhood_id',
        location_id: commonPlace(m, 'neighbourhood'),
        fts: fts('apartment'),
      },
      'every filter at once': {
        fts: fts('apartment'),
        location_column: 'city_id',
        location_id: commonPlace(m, 'city'),
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
    const { path } = await fixtureSnapshot();
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
  it('the page, detail and similar statements, in every locale', async () => {
    const db = new Database((await snapshot()).path, { readonly: true, fileMustExist: true });
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
