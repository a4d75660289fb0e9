// The snapshot compiler's output for the basic fixture: public filtering, locale tables, closure, cohorts, statistics,
// full-text index, meta and the file's header, and the compiler's own checks of a tampered copy.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { PARALLEL_TABLE, runChecks } from '../build-snapshot/checks.ts';
import { headerStamp, snapshotIdOf } from '../build-snapshot/compile.ts';
import { checkInWorker } from '../build-snapshot/workers.ts';
import { SCHEMA_VERSION } from '../snapshot-format/schema.ts';
import { tempDir } from './support/files.ts';
import { type Built, buildTestSnapshot, fixtureSnapshot, snapshotCopy } from './support/snapshots.ts';

const open = (path: string) => new Database(path, { readonly: true });
const ids = (db: Database.Database, table: string) =>
  db.prepare(`SELECT id FROM ${table} ORDER BY id`).pluck().all() as string[];

/** The compiler's checks of a snapshot file, as the compiler runs them (the parallel table's on a worker). */
const check = (db: Database.Database, file: string) => runChecks(db, checkInWorker(file, PARALLEL_TABLE));

describe('snapshot compiler: content', () => {
  let path: string;
  let db: Database.Database;
  /** The same source built afresh at another time, alone in a folder of its own. */
  let again: Built;
  before(async () => {
    path = (await fixtureSnapshot()).path;
    db = open(path);
    again = await buildTestSnapshot(undefined, undefined, { builtAt: '2026-11-02T00:00:00.000Z' });
  });

  it('stores only active, published rent listings', () => {
    // lst-004 inactive, lst-005 unpublished, lst-006 for sale
    assert.deepEqual(ids(db, 'listings'), [
      'lst-001',
      'lst-002',
      'lst-003',
      'lst-007',
      'lst-008',
      'lst-009',
      'lst-010',
      'lst-011',
      'lst-012',
    ]);
  });

  it('stores only published records of the other resources', () => {
    assert.deepEqual(ids(db, 'owners'), ['own-1', 'own-2', 'own-4', 'own-5']);
    assert.deepEqual(ids(db, 'internet_providers'), ['inet-kpn', 'inet-zig']);
    assert.deepEqual(ids(db, 'internet_plans'), ['plan-1', 'plan-2', 'plan-3']);
    assert.deepEqual(ids(db, 'insurance_providers'), ['ins-centraal']);
    assert.deepEqual(ids(db, 'insurance_products'), ['insp-1', 'insp-2']);
    assert.deepEqual(ids(db, 'platforms'), ['plat-funda', 'plat-kamernet']);
    assert.deepEqual(ids(db, 'articles'), ['art-1']);
  });

  it('stores each listing as three rows with the same rid: filters, the summary, the rest of the text', () => {
    const rows = db
      .prepare(
        `SELECT l.rid, l.id, l.city_id AS a, s.city_id AS b, s.title, s.s_id, t.description
         FROM listings l JOIN listing_summary s ON s.rid = l.rid JOIN listing_text t ON t.rid = l.rid ORDER BY l.rid`,
      )
      .all() as { id: string; a: string; b: string; title: string; s_id: string; description: string | null }[];
    assert.equal(rows.length, ids(db, 'listings').length);
    assert.equal(db.prepare('SELECT count(*) FROM listing_summary').pluck().get(), rows.length);
    assert.equal(db.prepare('SELECT count(*) FROM listing_text').pluck().get(), rows.length);
    for (const r of rows) {
      assert.equal(r.a, r.b);
      assert.equal(r.s_id, JSON.stringify(r.id));
      assert.ok(r.title.length > 0);
    }
    assert.ok(rows.some((r) => (r.description ?? '').length > 0));
    // What a page of summaries reads is apart from the long text: no description, images or sources there.
    const summaryColumns = db.prepare(`SELECT name FROM pragma_table_info('listing_summary')`).pluck().all();
    for (const c of ['description', 'images', 'attributes', 'sources']) assert.ok(!summaryColumns.includes(c), c);
  });

  it("stamps the file header with the build's identity, so that a file written over the served one is told apart", () => {
    const meta = Object.fromEntries(
      db.prepare('SELECT key, value FROM snapshot_meta').raw().all() as [string, string][],
    ) as Record<string, string>;
    assert.equal(db.pragma('user_version', { simple: true }), headerStamp(meta.snapshot_id, meta.built_at));
    // The same source built at another time: the same size and page count, another header.
    const head = (file: string) => readFileSync(file).subarray(0, 100);
    assert.equal(readFileSync(again.path).length, readFileSync(path).length);
    assert.notDeepEqual(head(again.path), head(path));
  });

  it('fails the checks when a listing lacks its text row or the rids are not 1..n', async () => {
    for (const [tamper, want] of [
      [
        'DELETE FROM listing_text WHERE rid = (SELECT max(rid) FROM listing_text)',
        ['consistency: listings without their text row: 1'],
      ],
      [
        'DELETE FROM listing_text WHERE rid = 2',
        ['consistency: listing_text rids not 1..n: 1', 'consistency: listings without their text row: 1'],
      ],
      [
        'DELETE FROM listing_summary WHERE rid = 2',
        ['consistency: listing_summary rids not 1..n: 1', 'consistency: listings without their summary row: 1'],
      ],
      ['UPDATE listing_summary SET rid = 100 WHERE rid = 1', ['consistency: listing_summary rids not 1..n: 92']],
      ['UPDATE listing_text SET rid = 100 WHERE rid = 1', ['consistency: listing_text rids not 1..n: 92']],
      ['UPDATE listings SET rid = 0 WHERE rid = 1', ['consistency: listings rids not 1..n: 1']],
    ] as [string, string[]][]) {
      const copy = await snapshotCopy(path);
      const rw = new Database(copy);
      try {
        assert.deepEqual(await check(rw, copy), [], 'the untouched copy passes');
        rw.exec(tamper);
        assert.deepEqual(
          (await check(rw, copy)).filter((p) => p.startsWith('consistency:') && !p.includes('statistics')),
          want,
          tamper,
        );
      } finally {
        rw.close();
      }
    }
  });

  it('fails the checks when an index does not match its table, in the listings (checked on another thread) or elsewhere', async () => {
    // An index whose definition is rewritten to another column keeps its old entries: its content no longer
    // matches the table. quick_check alone does not look at that; integrity_check does.
    for (const [index, from, to] of [
      ['listings_city', '(city_id)', '(province_id)'],
      ['owners_type', '(type)', '(slug)'],
    ]) {
      const copy = await snapshotCopy(path);
      const rw = new Database(copy);
      rw.unsafeMode(true);
      rw.pragma('writable_schema = ON');
      assert.equal(
        rw.prepare('UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE name = ?').run(from, to, index).changes,
        1,
      );
      rw.close();
      const db = new Database(copy);
      try {
        assert.deepEqual(db.pragma('quick_check'), [{ quick_check: 'ok' }], 'quick_check does not see it');
        const problems = (await check(db, copy)).filter((p) => p.includes('_check')); // a query plan may break too
        const table = index.startsWith('listings') ? 'listings' : 'owners';
        assert.ok(
          problems.length > 0 && problems.every((p) => p.startsWith(`integrity_check("${table}"): `)),
          problems.join('\n'),
        );
        assert.ok(
          problems.some((p) => p.includes(index)),
          problems.join('\n'),
        );
      } finally {
        db.close();
      }
    }
  });

  it('fails the checks when the key order of a WITHOUT ROWID table is broken (quick_check does not see it)', async () => {
    const copy = await snapshotCopy(path);
    // One byte of a key in listing_stats' leaf page: 'location:…' becomes 'zocation:…', out of order.
    const db0 = new Database(copy, { readonly: true });
    const page = db0
      .prepare("SELECT pageno FROM dbstat WHERE name = 'listing_stats' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1")
      .pluck()
      .get() as number;
    const size = db0.pragma('page_size', { simple: true }) as number;
    db0.close();
    const bytes = readFileSync(copy);
    const at = bytes.indexOf('location:', (page - 1) * size);
    assert.ok(at > 0 && at < page * size);
    bytes[at] = 'z'.charCodeAt(0);
    writeFileSync(copy, bytes);
    const db = new Database(copy);
    try {
      assert.deepEqual(db.pragma('quick_check'), [{ quick_check: 'ok' }]);
      const problems = (await check(db, copy)).filter((p) => p.includes('_check'));
      assert.deepEqual(problems, ['integrity_check("listing_stats"): row not in PRIMARY KEY order for listing_stats']);
    } finally {
      db.close();
    }
  });

  it("the check worker reports a file it cannot open, with SQLite's reason", async () => {
    await assert.rejects(
      checkInWorker(join(tempDir(), 'missing.db'), PARALLEL_TABLE),
      /SQLITE_CANTOPEN: unable to open database file/,
    );
  });

  it('assigns rid in ascending id order', () => {
    const rows = db.prepare('SELECT id FROM listings ORDER BY rid').pluck().all();
    assert.deepEqual(rows, ids(db, 'listings'));
  });

  it('keeps only real translations in the locale tables', () => {
    // A listing's title translations are columns of listing_summary; its other text's are rows of listings_i18n.
    const titles = db
      .prepare(
        `SELECT l.id, t.title_nl, t.title_de, t.title_fr, t.title_es FROM listing_summary t JOIN listings l ON l.rid = t.rid
         WHERE coalesce(t.title_nl, t.title_de, t.title_fr, t.title_es) IS NOT NULL ORDER BY l.id`,
      )
      .all();
    assert.deepEqual(titles, [
      { id: 'lst-001', title_nl: 'Lichte woning in De Pijp', title_de: null, title_fr: null, title_es: null },
      { id: 'lst-003', title_nl: null, title_de: 'Studio beim Vondelpark', title_fr: null, title_es: null },
      {
        id: 'lst-007',
        title_nl: 'Appartement centrum Den Haag',
        title_de: null,
        title_fr: 'Appartement centre La Haye',
        title_es: null,
      },
    ]);
    const rows = db
      .prepare(
        'SELECT l.id, t.locale, t.description FROM listings_i18n t JOIN listings l ON l.rid = t.rid ORDER BY l.id, t.locale',
      )
      .all();
    assert.deepEqual(rows, [
      { id: 'lst-002', locale: 'nl', description: 'Beschrijving van lst-002 met tuin' },
      { id: 'lst-003', locale: 'de', description: 'Beschreibung von lst-003 mit Balkon' },
    ]);
    assert.equal(db.prepare("SELECT count(*) FROM listings_i18n WHERE locale = 'en'").pluck().get(), 0);
    const hague = db
      .prepare(
        "SELECT t.locale, t.name FROM locations_i18n t JOIN locations l ON l.rid = t.rid WHERE l.id = 'loc-dh' ORDER BY t.locale",
      )
      .all();
    assert.deepEqual(hague, [
      { locale: 'de', name: 'Den Haag' },
      { locale: 'es', name: 'La Haya' },
      { locale: 'fr', name: 'La Haye' },
      { locale: 'nl', name: 'Den Haag' },
    ]);
  });

  it('builds the location closure including each location with itself', () => {
    const up = db
      .prepare("SELECT ancestor_id, depth FROM location_closure WHERE descendant_id = 'loc-ams-pijp' ORDER BY depth")
      .all();
    assert.deepEqual(up, [
      { ancestor_id: 'loc-ams-pijp', depth: 0 },
      { ancestor_id: 'loc-ams', depth: 1 },
      { ancestor_id: 'loc-nh', depth: 2 },
    ]);
    const down = db
      .prepare("SELECT descendant_id FROM location_closure WHERE ancestor_id = 'loc-nh' ORDER BY descendant_id")
      .pluck()
      .all();
    assert.deepEqual(down, ['loc-ams', 'loc-ams-jordaan', 'loc-ams-pijp', 'loc-nh']);
    const l = db.prepare("SELECT neighbourhood_id, city_id, province_id FROM listings WHERE id = 'lst-001'").get();
    assert.deepEqual(l, { neighbourhood_id: 'loc-ams-pijp', city_id: 'loc-ams', province_id: 'loc-nh' });
  });

  it('computes market cohorts by hand-checked values (inactive counted, small months omitted)', () => {
    const rows = db
      .prepare(
        'SELECT metric_id, city_id, month, value, sample_size FROM market_observations ORDER BY metric_id, city_id, month',
      )
      .all();
    assert.deepEqual(rows, [
      // Amsterdam, Jan 2026: lst-001 2000, lst-002 2400, lst-003 1500 and the INACTIVE lst-004 1000 → median (1500+2000)/2
      { metric_id: 'median_rent', city_id: 'loc-ams', month: '2026-01-01', value: 1750, sample_size: 4 },
      // Amsterdam, Feb 2026 has one priced rent listing (lst-012) < minimum 2 → omitted. The Hague: 1300, 1400, 1350.
      { metric_id: 'median_rent', city_id: 'loc-dh', month: '2026-02-01', value: 1350, sample_size: 3 },
      // per m²: 2000/60=33.33, 2400/90=26.67, 1500/30=50, 1000/50=20 → (26.67+33.33)/2 = 30
      { metric_id: 'median_rent_per_m2', city_id: 'loc-ams', month: '2026-01-01', value: 30, sample_size: 4 },
      // 1300/65=20, 1400/70=20, 1350/60=22.5 → 20
      { metric_id: 'median_rent_per_m2', city_id: 'loc-dh', month: '2026-02-01', value: 20, sample_size: 3 },
      { metric_id: 'new_listings', city_id: 'loc-ams', month: '2026-01-01', value: 4, sample_size: 4 },
      // Feb: lst-010 (no price) and lst-012; the unpublished lst-005 and the sale lst-006 are not supply
      { metric_id: 'new_listings', city_id: 'loc-ams', month: '2026-02-01', value: 2, sample_size: 2 },
      { metric_id: 'new_listings', city_id: 'loc-dh', month: '2026-02-01', value: 3, sample_size: 3 },
      { metric_id: 'new_listings', city_id: 'loc-rdam', month: '2026-02-01', value: 1, sample_size: 1 },
    ]);
  });

  it('precomputes statistics for all listings and each location', () => {
    const all = db.prepare("SELECT * FROM listing_stats WHERE scope = ''").get();
    // priced: 2000 2400 1500 1300 1400 700 1350 2100 → sorted 700 1300 1350 1400 1500 2000 2100 2400
    assert.deepEqual(all, {
      scope: '',
      count: 9,
      min_price_eur: 700,
      max_price_eur: 2400,
      average_price_eur: 1593.75,
      median_price_eur: 1450,
    });
    const zh = db.prepare("SELECT count, median_price_eur FROM listing_stats WHERE scope = 'location:loc-zh'").get();
    assert.deepEqual(zh, { count: 4, median_price_eur: 1325 });
  });

  it('records meta: schema version, snapshot id, build time, counts', () => {
    const meta = Object.fromEntries(
      (db.prepare('SELECT key, value FROM snapshot_meta').all() as { key: string; value: string }[]).map((r) => [
        r.key,
        r.value,
      ]),
    );
    assert.equal(meta.schema_version, String(SCHEMA_VERSION));
    assert.match(meta.snapshot_id, /^snap_[0-9a-f]{24}$/);
    assert.equal(meta.built_at, '2026-11-01T00:00:00.000Z');
    assert.equal(JSON.parse(meta.counts).listings, 9);
  });

  it('makes the snapshot id from the layout version and the source: a new schema version gives new ids, and new ETags', () => {
    const digest = 'ab'.repeat(32);
    const id = snapshotIdOf(digest);
    assert.match(id, /^snap_[0-9a-f]{24}$/);
    assert.notEqual(id, `snap_${digest.slice(0, 24)}`);
    const expected = createHash('sha256').update(`schema ${SCHEMA_VERSION}\n${digest}`).digest('hex').slice(0, 24);
    assert.equal(id, `snap_${expected}`);
    assert.notEqual(
      id,
      `snap_${createHash('sha256')
        .update(`schema ${SCHEMA_VERSION - 1}\n${digest}`)
        .digest('hex')
        .slice(0, 24)}`,
    );
  });

  it('keeps sqlite_stat1 but no sqlite_stat4 samples (which would re-plan statements on every execution)', () => {
    assert.ok((db.prepare('SELECT count(*) FROM sqlite_stat1').pluck().get() as number) > 0);
    assert.equal(db.prepare('SELECT count(*) FROM sqlite_stat4').pluck().get(), 0);
  });

  it('uses a rollback journal and passes integrity_check', () => {
    assert.equal(db.pragma('journal_mode', { simple: true }), 'delete');
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    assert.ok(!existsSync(`${path}-wal`));
    // The compiler writes its last tables in WAL mode (beside the listings' check on a worker): the file's
    // header says rollback journal again (bytes 18 and 19: 1, WAL would be 2), and no WAL file is left.
    // (The shared snapshot's folder is the cache's: the folder of a fresh build is looked at.)
    for (const file of [path, again.path]) assert.deepEqual([...readFileSync(file).subarray(18, 20)], [1, 1]);
    assert.deepEqual(
      readdirSync(dirname(again.path)).filter((f) => f !== 'snapshot.db'),
      [],
    );
  });

  it('indexes q in every locale (FTS)', () => {
    const hit = (term: string) =>
      db.prepare('SELECT count(*) FROM listings_fts WHERE listings_fts MATCH ?').pluck().get(term);
    assert.equal(hit('"lichte"'), 1); // nl title of lst-001
    assert.equal(hit('"haye"'), 3); // fr name of the city of lst-007, lst-008, lst-011
    assert.equal(hit('"sauna"'), 1);
  });

  it('stores a term bitmap holding exactly the rows FTS finds for the term, for every frequent term', () => {
    const n = db.prepare('SELECT count(*) FROM listings').pluck().get() as number;
    const maps = db.prepare('SELECT term, docs, bits FROM listing_term_bitmaps').all() as {
      term: string;
      docs: number;
      bits: Buffer;
    }[];
    assert.ok(maps.length > 5, `bitmaps: ${maps.length}`);
    const rows = db.prepare('SELECT rowid FROM listings_fts WHERE listings_fts MATCH ? ORDER BY rowid').pluck();
    for (const m of maps) {
      const set: number[] = [];
      for (let i = 0; i < n; i++) if (m.bits[i >> 3] & (1 << (i & 7))) set.push(i + 1);
      assert.deepEqual(set, rows.all(`"${m.term}"`), m.term);
      assert.equal(set.length, m.docs, m.term);
    }
  });
});
