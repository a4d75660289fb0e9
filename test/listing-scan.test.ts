// The column scan (src/listings/scan.ts) must give exactly what the index plans give, for any filter set.

import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { mulberry32 } from '../generate/random.ts';
import '../src/http/app.ts'; // the route modules are loaded through the app (they import each other)
import type { ListingFilters } from '../snapshot-format/listing-sql.ts';
import { ListingQueries, statsFromPrices } from '../src/listings/planner.ts';
import type { PrimaryHint } from '../src/listings/scan.ts';
import { prepare as prepareListings, stats as routeStats } from '../src/routes/listings.ts';
import { ftsQuery } from '../src/routes/support/full-text.ts';
import { tempDir } from './support/files.ts';
import { fixtureSnapshot, generatedSource } from './support/snapshots.ts';

/** Every column the scan can loop over; a hint for an absent filter falls back to another loop. */
const HINTS: PrimaryHint[] = [
  null,
  'fts',
  'location_id',
  'owner_id',
  'property_type',
  'furnishing',
  'price',
  'size',
  'rooms',
  'near',
];

describe('column scan agrees with the index plans', () => {
  let db: Database.Database;
  let q: ListingQueries;
  const sets: ListingFilters[] = [];

  before(async () => {
    const { path } = await fixtureSnapshot(generatedSource(400, 11).dir);
    db = new Database(path, { readonly: true });
    q = new ListingQueries(db);
    const pick = <T>(r: () => number, xs: T[]) => xs[Math.floor(r() * xs.length)];
    const col = (sql: string) => db.prepare(sql).pluck().all() as string[];
    const locs = db
      .prepare(
        "SELECT id, type FROM locations WHERE type <> 'province' OR id IN (SELECT province_id FROM listings) LIMIT 60",
      )
      .all() as { id: string; type: string }[];
    const owners = [
      ...col('SELECT DISTINCT owner_id FROM listings WHERE owner_id IS NOT NULL LIMIT 30'),
      'own_unknown',
    ];
    const types = [...col('SELECT DISTINCT property_type FROM listings WHERE property_type IS NOT NULL'), 'castle'];
    const words = ['bright', 'balcony', 'sauna', 'garden', 'amsterdam', 'zzzz', 'bright balcony'];
    const points = (
      db.prepare("SELECT s_latitude, s_longitude FROM listing_summary WHERE s_latitude <> 'null'").raw().all() as [
        string,
        string,
      ][]
    ).map(([lat, lon]) => [Number(lat), Number(lon)]);
    const rn = mulberry32(43); // near's own sequence: the other filters' sets stay as they were
    const r = mulberry32(20261122); // seeded: the same random filter sets on every run
    for (let k = 0; k < 300; k++) {
      const f: ListingFilters = {};
      if (r() < 0.35) {
        const l = pick(r, locs);
        f.location_id = l.id;
        f.location_column =
          l.type === 'province' ? 'province_id' : l.type === 'neighbourhood' ? 'neighbourhood_id' : 'city_id';
      }
      if (r() < 0.2) f.owner_id = pick(r, owners);
      if (r() < 0.3) f.property_type = pick(r, types);
      if (r() < 0.3) f.furnishing = pick(r, ['SHELL', 'FURNISHED', 'UPHOLSTERED']);
      if (r() < 0.3) f.min_price = Math.floor(r() * 3000);
      if (r() < 0.3) f.max_price = (f.min_price ?? 0) + Math.floor(r() * 3000);
      if (r() < 0.2) f.min_size = Math.floor(r() * 120);
      if (r() < 0.2) f.max_size = (f.min_size ?? 0) + Math.floor(r() * 150);
      if (r() < 0.2) f.min_rooms = Math.floor(r() * 6);
      if (r() < 0.25) f.fts = ftsQuery(pick(r, words));
      if (rn() < 0.3) {
        const [lat, lon] = pick(rn, points);
        f.near = {
          lat: lat + (rn() - 0.5) * 0.04,
          lon: lon + (rn() - 0.5) * 0.06,
          km: pick(rn, [0.5, 1, 2, 5, 20, 50]),
        };
      }
      sets.push(f);
    }
  });

  it('returns the same pages (first page and a page after a position)', () => {
    for (const f of sets) {
      const viaIndex = (after: number) =>
        q
          .matchingRids(f)
          .filter((rid) => rid > after)
          .slice(0, 21);
      for (const hint of HINTS) {
        assert.deepEqual(q.scan.page(f, 0, 21, hint), viaIndex(0), `${hint} ${JSON.stringify(f)}`);
        assert.deepEqual(q.scan.page(f, 150, 21, hint), viaIndex(150), `${hint} ${JSON.stringify(f)}`);
      }
    }
  });

  it('returns the same count, min, max, average and median', () => {
    let nonEmpty = 0;
    for (const f of sets) {
      const expected = statsFromPrices(q.matchingPrices(f));
      for (const hint of HINTS) assert.deepEqual(q.scan.stats(f, hint), expected, `${hint} ${JSON.stringify(f)}`);
      if (expected.count > 1) nonEmpty++;
    }
    assert.ok(nonEmpty > 50, `enough filter sets match several listings (${nonEmpty})`);
  });

  it("answers near's stats from the cells (alone, with one property type or furnishing, a price band) as the index plans do", () => {
    const centre = db.prepare('SELECT latitude AS lat, longitude AS lon FROM locations WHERE id = ?');
    const cities = db.prepare('SELECT city_id FROM listings GROUP BY city_id ORDER BY count(*) DESC LIMIT 3').pluck();
    const types = db.prepare('SELECT DISTINCT property_type FROM listings WHERE property_type IS NOT NULL').pluck();
    const extras: ListingFilters[] = [{}, { furnishing: 'FURNISHED' }, { furnishing: 'SHELL' }];
    extras.push(
      { min_price: 1000, max_price: 2000 },
      { max_price: 1200 },
      { furnishing: 'FURNISHED', min_price: 1500 },
    );
    for (const t of types.all() as string[])
      extras.push({ property_type: t }, { property_type: t, min_price: 900, max_price: 1900 });
    let fromCells = 0;
    for (const c of cities.all() as string[]) {
      const { lat, lon } = centre.get(c) as { lat: number; lon: number };
      for (const km of [3, 5, 10, 20, 35, 50])
        for (const extra of extras) {
          const f: ListingFilters = { near: { lat: lat + 0.003, lon: lon - 0.004, km }, ...extra };
          const expected = statsFromPrices(q.matchingPrices(f));
          const got = q.scan.nearCellStats(f);
          if (got === null) continue;
          assert.deepEqual(got, expected, JSON.stringify(f));
          assert.deepEqual(q.scan.stats(f), expected, JSON.stringify(f));
          if (expected.count > 1) fromCells++;
        }
    }
    assert.ok(fromCells > 40, `the cells answered ${fromCells} circles with listings`);
  });

  it('precomputes stats for one property type, furnishing or owner equal to computing them', () => {
    const st = prepareListings(db);
    let checked = 0;
    for (const col of ['property_type', 'furnishing', 'owner_id'] as const) {
      const values = db
        .prepare(`SELECT DISTINCT ${col} FROM listings WHERE ${col} IS NOT NULL`)
        .pluck()
        .all() as string[];
      for (const value of [...values, 'no-such-value']) {
        const expected = statsFromPrices(q.matchingPrices({ [col]: value }));
        const got = routeStats(st, { locale: 'en', [col]: value });
        assert.deepEqual(
          got,
          {
            count: expected.count,
            min_price_eur: expected.min,
            max_price_eur: expected.max,
            average_price_eur: expected.average,
            median_price_eur: expected.median,
          },
          `${col}=${value}`,
        );
        checked++;
      }
    }
    assert.ok(checked > 10);
  });

  it('agrees on every stats path: price range alone, the complement of most rows, candidate lists', () => {
    const prices = db
      .prepare('SELECT price_eur FROM listings WHERE price_eur IS NOT NULL ORDER BY price_eur')
      .pluck()
      .all() as number[];
    const sizes = db
      .prepare('SELECT size_m2 FROM listings WHERE size_m2 IS NOT NULL ORDER BY size_m2')
      .pluck()
      .all() as number[];
    const cheap = prices[Math.floor(prices.length * 0.1)];
    const small = sizes[Math.floor(sizes.length * 0.1)];
    const shapes: [string, ListingFilters, PrimaryHint][] = [
      ['everything (complement of nothing)', {}, null],
      ['most rows (complement side is small)', { min_size: small }, 'size'],
      ['most rows, two conditions', { min_size: small, max_price: prices[prices.length - 1] }, null],
      ['broad primary, selective result (candidate lists)', { min_size: 0, max_size: small }, 'size'],
      ['broad loop and q', { min_size: 0, fts: ftsQuery('bright') }, 'size'],
      ['selective loop (candidate lists)', { max_price: cheap, furnishing: 'FURNISHED' }, 'price'],
      [
        'price range alone (binary search)',
        { min_price: cheap, max_price: prices[Math.floor(prices.length * 0.7)] },
        'price',
      ],
      ['price minimum alone', { min_price: cheap }, null],
      ['price maximum alone, no match', { max_price: prices[0] - 1 }, null],
    ];
    for (const [what, f, hint] of shapes) {
      const expected = statsFromPrices(q.matchingPrices(f));
      assert.ok(expected.count > 0 || what.endsWith('no match'), what);
      assert.deepEqual(q.scan.stats(f, hint), expected, what);
    }
  });

  it("pages q through the scan (term bitmaps, or a rare term's short row list), else FTS, right at every position", () => {
    db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, listings_fts, row)');
    const term = (sql: string) => db.prepare(sql).pluck().get() as string;
    const byDocs = (offset: number) =>
      term(
        `SELECT b.term FROM listing_term_bitmaps b JOIN temp.vocab v ON v.term = b.term ORDER BY v.doc DESC, b.term LIMIT 1 OFFSET ${offset}`,
      );
    const [frequent, frequent2] = [byDocs(0), byDocs(1)];
    const rare = term(
      'SELECT term FROM temp.vocab WHERE term NOT IN (SELECT term FROM listing_term_bitmaps) ORDER BY doc DESC, term LIMIT 1',
    );
    const scanned: PrimaryHint[] = [];
    const scanPage = q.scan.page.bind(q.scan);
    const hasBitmap = q.scan.terms.hasBitmap.bind(q.scan.terms);
    q.scan.page = (f, after, limit, hint) => {
      scanned.push(hint ?? null);
      return scanPage(f, after, limit, hint);
    };
    try {
      const max = db.prepare('SELECT max(rid) FROM listings').pluck().get() as number;
      // A frequent term without a bitmap (the compiler keeps at most 1,024) has neither a bitmap nor a short list.
      const noBitmapFor = (t: string) => (x: string) => x !== t && hasBitmap(x);
      for (const [words, viaScan, bitmaps] of [
        [frequent, true, hasBitmap],
        [`${frequent} ${frequent2}`, true, hasBitmap],
        [rare, true, hasBitmap],
        [`${frequent} ${rare}`, true, noBitmapFor(frequent)],
        [frequent, false, noBitmapFor(frequent)],
      ] as const) {
        q.scan.terms.hasBitmap = bitmaps;
        const f: ListingFilters = { fts: ftsQuery(words) };
        assert.equal(q.choose(f, 21).kind, 'fts', `${words}: FTS is the index plan`);
        const all = q.matchingRids(f);
        assert.ok(all.length > 0, words);
        for (const after of [0, all[Math.floor(all.length / 2)], max]) {
          scanned.length = 0;
          const expected = all.filter((rid) => rid > after).slice(0, 21);
          assert.deepEqual(q.page(f, after, 21), expected, `${words} after ${after}`);
          assert.deepEqual(scanned, viaScan ? ['fts'] : [], `${words} after ${after}: ${viaScan ? 'the scan' : 'FTS'}`);
        }
      }
    } finally {
      q.scan.page = scanPage;
      q.scan.terms.hasBitmap = hasBitmap;
    }
    // FTS steps over a term's documents before the position one by one: the deeper, the dearer.
    const one = { fts: ftsQuery(frequent) };
    const merge = (after: number) => q.estimates(one, after).find((e) => e.driver.kind === 'fts')!.merge ?? 0;
    assert.equal(merge(0), 0);
    assert.ok(merge(100) > 0 && merge(200) > merge(100), `${merge(100)} ${merge(200)}`);
  });

  it('agrees for q mixing rare terms (an FTS row list) with frequent ones (bitmaps)', () => {
    db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, listings_fts, row)');
    const rare = db
      .prepare(
        'SELECT term FROM temp.vocab WHERE term NOT IN (SELECT term FROM listing_term_bitmaps) ORDER BY doc DESC, term LIMIT 12',
      )
      .pluck()
      .all() as string[];
    const frequent = db
      .prepare(
        'SELECT b.term FROM listing_term_bitmaps b JOIN temp.vocab v ON v.term = b.term ORDER BY v.doc DESC, b.term LIMIT 4',
      )
      .pluck()
      .all() as string[];
    assert.ok(rare.length >= 6 && frequent.length === 4, 'the fixture has both kinds of term');
    let kept = 0,
      dropped = 0;
    for (const r of rare) {
      for (const words of [
        [r, ...frequent.slice(0, 1)],
        [r, frequent[1], frequent[2]],
        [frequent[3], r, rare[0]],
      ]) {
        const f: ListingFilters = { fts: ftsQuery(words.join(' ')) };
        const expected = q.matchingRids(f);
        if (expected.length) kept++;
        else dropped++;
        for (const extra of [{}, { min_price: 500 }]) {
          const g = { ...f, ...extra };
          const rids = q.matchingRids(g);
          for (const hint of HINTS) {
            assert.deepEqual(q.scan.page(g, 0, 21, hint), rids.slice(0, 21), `${hint} ${words.join(' ')}`);
            assert.deepEqual(q.scan.stats(g, hint), statsFromPrices(q.matchingPrices(g)), `${hint} ${words.join(' ')}`);
          }
        }
      }
    }
    assert.ok(
      kept > 0 && dropped > 0,
      `some rare rows are kept by the frequent terms (${kept}), some are not (${dropped})`,
    );
  });

  it('computes the median of an even count as the mean of the two middle prices', () => {
    const all = db
      .prepare('SELECT price_eur FROM listings WHERE price_eur IS NOT NULL ORDER BY price_eur')
      .pluck()
      .all() as number[];
    const f: ListingFilters = { min_price: all[0], max_price: all[all.length % 2 ? all.length - 2 : all.length - 1] };
    const prices = all.filter((p) => p >= f.min_price! && p <= f.max_price!);
    assert.equal(prices.length % 2, 0);
    const m = prices.length / 2;
    assert.equal(q.scan.stats(f).median, (prices[m - 1] + prices[m]) / 2);
  });
});

describe('a page of the column scan reads a first chunk sized from a sample, then on', () => {
  // 3,000 listings, more than the shortest first chunk. In a second build, SHELL is the furnishing of every 128th
  // row only: the sample (every 128th row) sees nothing but matches, so the first chunk, sized for that density,
  // holds a few matches where a page needs more, and the scan must read on.
  let db: Database.Database;
  let q: ListingQueries;
  before(async () => {
    const generated = generatedSource(3000, 5).dir;
    const first = await fixtureSnapshot(generated);
    const built = new Database(first.path, { readonly: true });
    const rowOf = new Map(
      (built.prepare('SELECT id, rid - 1 FROM listings').raw().all() as [string, number][]).map(([id, r]) => [id, r]),
    );
    built.close();
    // The generated folder is shared: the edited source is a copy of it.
    const source = join(tempDir(), 'source');
    cpSync(generated, source, { recursive: true });
    const file = join(source, 'listings.ndjson');
    const lines = readFileSync(file, 'utf8').split('\n');
    const out = lines.map((line) => {
      if (!line.trim()) return line;
      const rec = JSON.parse(line);
      const row = rowOf.get(rec.id);
      if (row !== undefined) rec.furnishing = row % 128 === 0 ? 'SHELL' : 'FURNISHED';
      return JSON.stringify(rec);
    });
    writeFileSync(file, out.join('\n'));
    const { path } = await fixtureSnapshot(source);
    db = new Database(path, { readonly: true });
    q = new ListingQueries(db);
  });

  it('reads on past a first chunk that held too few matches', () => {
    const shell = q.matchingRids({ furnishing: 'SHELL' });
    assert.ok(shell.length >= 12, `${shell.length} SHELL listings`);
    assert.ok(
      shell.every((rid) => (rid - 1) % 128 === 0),
      'SHELL is every 128th row only',
    );
    for (const hint of HINTS)
      for (const limit of [5, 12])
        assert.deepEqual(q.scan.page({ furnishing: 'SHELL' }, 0, limit, hint), shell.slice(0, limit), `${hint}`);
  });

  it('returns the pages the index plans return, at any position and page size', () => {
    const types = db.prepare('SELECT DISTINCT property_type FROM listings WHERE property_type IS NOT NULL').pluck();
    const cities = db.prepare('SELECT city_id FROM listings GROUP BY city_id ORDER BY count(*) DESC LIMIT 4').pluck();
    const sets: ListingFilters[] = [{}, { furnishing: 'FURNISHED' }, { min_rooms: 3 }, { max_price: 1200 }];
    for (const t of types.all() as string[]) sets.push({ property_type: t }, { property_type: t, max_price: 1800 });
    for (const c of cities.all() as string[])
      sets.push(
        { location_column: 'city_id', location_id: c },
        { location_column: 'city_id', location_id: c, furnishing: 'FURNISHED', min_price: 900 },
      );
    // near around the biggest cities' centres: the scan's loop over the latitude band, narrow() testing the circle.
    const centre = db.prepare('SELECT latitude AS lat, longitude AS lon FROM locations WHERE id = ?');
    for (const c of (cities.all() as string[]).slice(0, 2)) {
      const { lat, lon } = centre.get(c) as { lat: number; lon: number };
      for (const km of [2, 10, 50])
        sets.push({ near: { lat, lon, km } }, { near: { lat, lon, km }, furnishing: 'FURNISHED', max_price: 1800 });
    }
    let pages = 0;
    for (const f of sets) {
      const all = q.matchingRids(f);
      for (const after of [0, 1, 127, 700, 1999])
        for (const limit of [1, 5, 21, 101]) {
          const expected = all.filter((rid) => rid > after).slice(0, limit);
          for (const hint of HINTS) assert.deepEqual(q.scan.page(f, after, limit, hint), expected, JSON.stringify(f));
          pages += expected.length;
        }
    }
    assert.ok(pages > 10_000, `only ${pages} rows were paged`);
  });
});
