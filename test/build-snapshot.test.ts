// The snapshot compiler: public filtering, locale tables, closure, cohorts, determinism, and every class of bad input.

import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { PARALLEL_TABLE, runChecks } from '../build-snapshot/checks.ts';
import { buildSnapshot, headerStamp, snapshotIdOf } from '../build-snapshot/compile.ts';
import { IdIndex } from '../build-snapshot/id-index.ts';
import { stopBuilds } from '../build-snapshot/output.ts';
import { LineSplitter, MAX_LINE, OVERLONG, OVERLONG_REASON, Utf8Check } from '../build-snapshot/read-source.ts';
import { checkInWorker } from '../build-snapshot/workers.ts';
import { SCHEMA_VERSION } from '../snapshot-format/schema.ts';
import { copyFixture, FIXTURES, tempDir } from './support/files.ts';
import { startServer, type TestServer } from './support/server.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

const ROOT = join(FIXTURES, '..', '..');
const open = (path: string) => new Database(path, { readonly: true });
const ids = (db: Database.Database, table: string) =>
  db.prepare(`SELECT id FROM ${table} ORDER BY id`).pluck().all() as string[];

/** Dumps every ordinary table (FTS shadow tables excluded) for result comparisons. */
function dump(path: string): Record<string, unknown[]> {
  const db = open(path);
  const tables = db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .pluck()
    .all() as string[];
  const out: Record<string, unknown[]> = {};
  for (const t of tables)
    out[t] = db
      .prepare(`SELECT * FROM ${t}`)
      .raw()
      .all()
      .map((r) => JSON.stringify(r))
      .sort();
  delete out.snapshot_meta; // holds the build time
  db.close();
  return out;
}

/** A copy of a built snapshot in a folder of its own, to tamper with. */
function copyOf(path: string): string {
  const copy = join(tempDir(), 'tampered.db');
  writeFileSync(copy, readFileSync(path));
  return copy;
}

/** The compiler's checks of a snapshot file, as the compiler runs them (the parallel table's on a worker). */
const check = (db: Database.Database, file: string) => runChecks(db, checkInWorker(file, PARALLEL_TABLE));

describe('snapshot compiler: content', () => {
  let path: string;
  let db: Database.Database;
  before(async () => {
    path = (await buildTestSnapshot()).path;
    db = open(path);
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

  it("stamps the file header with the build's identity, so that a file written over the served one is told apart", async () => {
    const meta = Object.fromEntries(
      db.prepare('SELECT key, value FROM snapshot_meta').raw().all() as [string, string][],
    ) as Record<string, string>;
    assert.equal(db.pragma('user_version', { simple: true }), headerStamp(meta.snapshot_id, meta.built_at));
    // The same source built at another time: the same size and page count, another header.
    const again = await buildTestSnapshot(undefined, undefined, { builtAt: '2026-11-02T00:00:00.000Z' });
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
      const copy = copyOf(path);
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
      const copy = copyOf(path);
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
    const copy = copyOf(path);
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
    const header = readFileSync(path).subarray(18, 20);
    assert.deepEqual([...header], [1, 1]);
    assert.deepEqual(
      readdirSync(dirname(path)).filter((f) => f !== 'snapshot.db'),
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

describe('snapshot compiler: determinism', () => {
  it('gives the same snapshot id and the same rows for the same source', async () => {
    const a = await buildTestSnapshot();
    const b = await buildTestSnapshot();
    assert.equal(a.result.snapshotId, b.result.snapshotId);
    assert.deepEqual(dump(a.path), dump(b.path));
  });

  it('gives another snapshot id when the source changes', async () => {
    const src = copyFixture();
    appendFileSync(
      join(src, 'glossary.ndjson'),
      `${JSON.stringify({
        id: 'gl-2',
        slug: 'servicekosten',
        term: { en: 'Service costs' },
        definition: { en: 'Costs on top of rent.' },
        published: true,
      })}\n`,
    );
    const a = await buildTestSnapshot();
    const b = await buildTestSnapshot(src);
    assert.notEqual(a.result.snapshotId, b.result.snapshotId);
  });

  it('orders rows by id even when the listings file is not sorted', async () => {
    const src = copyFixture();
    const lines = readFileSync(join(src, 'listings.ndjson'), 'utf8').trim().split('\n').reverse();
    writeFileSync(join(src, 'listings.ndjson'), `${lines.join('\n')}\n`);
    const sorted = dump((await buildTestSnapshot()).path);
    const reversed = dump((await buildTestSnapshot(src)).path);
    assert.deepEqual(reversed.listings, sorted.listings);
    assert.deepEqual(reversed.listings_i18n, sorted.listings_i18n);
    const db = open((await buildTestSnapshot(src)).path);
    assert.deepEqual(db.prepare('SELECT id FROM listings ORDER BY rid').pluck().all(), ids(db, 'listings'));
    assert.equal(
      db
        .prepare(
          "SELECT count(*) FROM listings_fts WHERE listings_fts MATCH '\"sauna\"' AND rowid = (SELECT rid FROM listings WHERE id = 'lst-009')",
        )
        .pluck()
        .get(),
      1,
    );
  });

  it('builds the same full-text index in its worker as from the table (the unsorted path), and copies it whole', async () => {
    const src = copyFixture();
    const lines = readFileSync(join(src, 'listings.ndjson'), 'utf8').trim().split('\n').reverse();
    writeFileSync(join(src, 'listings.ndjson'), `${lines.join('\n')}\n`);
    const { path: worker } = await buildTestSnapshot(); // sorted: the full-text worker's file, copied in
    const { path: table } = await buildTestSnapshot(src); // re-ranked: derived from the listings table
    assert.deepEqual(
      readdirSync(dirname(worker)).filter((f) => f.includes('.tmp-')),
      [],
      'the worker file is removed',
    );
    const a = dump(worker),
      b = dump(table);
    assert.ok(a.listing_terms.length > 50 && a.listing_term_bitmaps.length > 50, 'terms and bitmaps were copied');
    assert.deepEqual(a, b); // every table but the full-text ones (compared below) and snapshot_meta
    const matches = (path: string) => {
      const db = open(path);
      const m = db
        .prepare(
          'SELECT l.id FROM listings_fts f JOIN listings l ON l.rid = f.rowid WHERE listings_fts MATCH ? ORDER BY l.id',
        )
        .pluck();
      const out = (db.prepare('SELECT term FROM listing_terms ORDER BY term').pluck().all() as string[]).map(
        (t) => `${t}: ${m.all(`"${t}"`).join()}`,
      );
      db.close();
      return out;
    };
    assert.deepEqual(matches(worker), matches(table));
    // FTS5's own check of the copied index, and no build-time setting left in it.
    const db = new Database(worker);
    db.exec("INSERT INTO listings_fts (listings_fts, rank) VALUES ('integrity-check', 0)");
    assert.deepEqual(db.prepare('SELECT k FROM listings_fts_config ORDER BY k').pluck().all(), ['version']);
    db.close();
  });
});

/** Builds `src` over an existing snapshot; the build must fail and leave it byte-identical, with no temporary file. */
async function refusedBuild(src: string) {
  const { path: out } = await buildTestSnapshot();
  const before = readFileSync(out);
  const result = await buildSnapshot({ source: src, out, log: () => {} });
  assert.equal(result.ok, false, 'the build must fail');
  assert.ok(readFileSync(out).equals(before), 'the existing snapshot must stay byte-identical');
  assert.deepEqual(
    readdirSync(dirname(out)).filter((f) => f.includes('.tmp-')),
    [],
    'no temporary file is left behind',
  );
  return result.problems;
}
/** Applies `edit` to one file of a fixture copy, builds over an existing snapshot and returns the problems. */
async function failingBuild(file: string, edit: (lines: string[]) => string[]) {
  const src = copyFixture();
  const p = join(src, file);
  writeFileSync(p, `${edit(readFileSync(p, 'utf8').trimEnd().split('\n')).join('\n')}\n`);
  return refusedBuild(src);
}
const setLine = (n: number, f: (rec: any) => unknown) => (lines: string[]) =>
  lines.map((l, i) => (i === n - 1 ? JSON.stringify(f(JSON.parse(l))) : l));

describe('snapshot compiler: timestamps as written in their own offset', () => {
  let server: TestServer;
  let db: Database.Database;
  before(async () => {
    const src = copyFixture();
    const edit = (file: string, f: (r: any) => any) => {
      const p = join(src, file);
      writeFileSync(
        p,
        `${readFileSync(p, 'utf8')
          .trimEnd()
          .split('\n')
          .map((l) => JSON.stringify(f(JSON.parse(l))))
          .join('\n')}\n`,
      );
    };
    // lst-012 (Amsterdam, 2,100 EUR) first seen at 00:30 on 1 February local time: still 31 January in UTC.
    // Without seconds (ISO 8601 allows that); the API serves RFC 3339, which needs them.
    edit('listings.ndjson', (r) =>
      r.id === 'lst-012'
        ? { ...r, first_seen_at: '2026-02-01T00:30+01:00', updated_at: '2026-10-01T09:15+02:00' }
        : r.id === 'lst-001'
          ? { ...r, updated_at: '2026-10-01T00:00:00.250Z' }
          : r,
    );
    edit('owners.ndjson', (r) => (r.id === 'own-1' ? { ...r, updated_at: '2026-01-02T10:00-05:30' } : r));
    const { path, result } = await buildTestSnapshot(src);
    assert.ok(result.ok, result.ok ? '' : result.problems.join('\n'));
    db = open(path);
    server = await startServer({ SNAPSHOT_PATH: path });
  });
  after(async () => {
    db?.close();
    await server?.close();
  });

  it('serves a timestamp without seconds with :00 added, in its own offset, and others as written', async () => {
    assert.equal((await server.get('/v1/listings/lst-012')).body.data.updated_at, '2026-10-01T09:15:00+02:00');
    assert.equal((await server.get('/v1/listings/lst-001')).body.data.updated_at, '2026-10-01T00:00:00.250Z');
    assert.equal((await server.get('/v1/owners/own-1')).body.data.updated_at, '2026-01-02T10:00:00-05:30');
    const page = (await server.get('/v1/listings?location_id=loc-ams')).body.data as {
      id: string;
      updated_at: string;
    }[];
    assert.equal(page.find((l) => l.id === 'lst-012')?.updated_at, '2026-10-01T09:15:00+02:00');
  });

  it('counts a listing in the month of its first-seen date as written, not the UTC one', () => {
    const ams = db
      .prepare(
        "SELECT month, sample_size FROM market_observations WHERE metric_id = 'new_listings' AND city_id = 'loc-ams' ORDER BY month",
      )
      .all();
    // February keeps lst-010 and lst-012; in UTC lst-012 would be January's fifth and February's median-free single.
    assert.deepEqual(ams, [
      { month: '2026-01-01', sample_size: 4 },
      { month: '2026-02-01', sample_size: 2 },
    ]);
    assert.deepEqual(
      db
        .prepare("SELECT month, value FROM market_observations WHERE metric_id = 'median_rent' AND city_id = 'loc-ams'")
        .all(),
      [{ month: '2026-01-01', value: 1750 }],
    );
  });
});

describe('snapshot compiler: an empty export of a resource other than listings and locations', () => {
  it('builds, serving none of it, and warns naming each empty file', async () => {
    const src = copyFixture();
    for (const f of ['platforms.ndjson', 'articles.ndjson']) writeFileSync(join(src, f), '');
    const r = await buildSnapshot({ source: src, out: join(tempDir(), 'empty-parts.db'), log: () => {} });
    assert.equal(r.ok, true, r.problems.join('\n'));
    for (const f of ['platforms.ndjson', 'articles.ndjson'])
      assert.ok(
        r.warnings.includes(`warning: ${f}: has no records (an empty export?); the snapshot serves none`),
        r.warnings.join('\n'),
      );
    assert.ok(!r.warnings.some((w) => w.includes('owners.ndjson')), 'only the empty ones');
  });
  it('warns of a .ndjson file it does not read (a misnamed export), once, and builds', async () => {
    const src = copyFixture();
    writeFileSync(join(src, 'owner.ndjson'), readFileSync(join(src, 'owners.ndjson')));
    writeFileSync(join(src, 'notes.txt'), 'not an export');
    const r = await buildSnapshot({ source: src, out: join(tempDir(), 'extra-file.db'), log: () => {} });
    assert.equal(r.ok, true, r.problems.join('\n'));
    const extra = r.warnings.filter((w) => !w.includes('lacking some translation'));
    assert.equal(extra.length, 1, extra.join('\n'));
    assert.match(
      extra[0],
      /^warning: owner\.ndjson: not a source file of the snapshot, not read \(the files are locations\.ndjson, owners\.ndjson, listings\.ndjson, .*metrics\.ndjson.*\)$/,
    );
  });
});

describe('snapshot compiler: bad input fails with file:line and leaves the old snapshot untouched', () => {
  it('malformed JSON', async () => {
    const p = await failingBuild('owners.ndjson', (l) => [l[0], '{"id": "own-x", ', ...l.slice(1)]);
    assert.equal(p.length, 1);
    assert.match(p[0], /^owners\.ndjson:2: \(record\): malformed JSON: /);
  });
  it('a broken line that names its id does not make every reference to it a second problem', async () => {
    const p = await failingBuild('owners.ndjson', (l) =>
      l.map((x) => (x.includes('"id":"own-1"') ? x.slice(0, -5) : x)),
    );
    assert.equal(p.length, 1, p.join('\n')); // own-1 owns three listings: no "unknown owner" lines
    assert.match(p[0], /^owners\.ndjson:1: \(record\): malformed JSON: /);
  });
  it('a location line with a problem of its own is not reported again as the unknown parent of its children', async () => {
    const p = await failingBuild(
      'locations.ndjson',
      setLine(3, (r) => ({ ...r, published: 'yes' })),
    );
    assert.deepEqual(p, ['locations.ndjson:3: published: expected boolean (got "yes")']);
  });
  it('an empty locations file: one problem naming it, not one for every listing', async () => {
    const p = await failingBuild('locations.ndjson', () => []);
    assert.deepEqual(p, ['locations.ndjson:0: (file): has no records; every listing needs its location']);
  });
  it('attributes with a key an object does not keep (__proto__, constructor): refused, not dropped', async () => {
    for (const key of ['__proto__', 'constructor']) {
      const p = await failingBuild('listings.ndjson', (l) =>
        l.map((x, i) => (i === 1 ? x.replace(/\}$/, `,"attributes":{"${key}":{"a":1},"floor":2}}`) : x)),
      );
      assert.deepEqual(
        p,
        ['listings.ndjson:2: attributes: must not have the keys __proto__, prototype, constructor'],
        key,
      );
    }
  });
  it('missing required field', async () => {
    const p = await failingBuild(
      'listings.ndjson',
      setLine(3, ({ title, ...rest }) => rest),
    );
    assert.deepEqual(p, ['listings.ndjson:3: title: required field is missing']);
  });
  it('wrong type', async () => {
    const p = await failingBuild(
      'listings.ndjson',
      setLine(1, (r) => ({ ...r, rooms: 'three' })),
    );
    assert.deepEqual(p, ['listings.ndjson:1: rooms: expected number (got "three")']);
  });
  it('negative price', async () => {
    const p = await failingBuild(
      'listings.ndjson',
      setLine(2, (r) => ({ ...r, price_eur: -5 })),
    );
    assert.deepEqual(p, ['listings.ndjson:2: price_eur: must not be negative']);
  });
  it('bad date', async () => {
    const p = await failingBuild(
      'listings.ndjson',
      setLine(4, (r) => ({ ...r, first_seen_at: '2026-13-45' })),
    );
    assert.equal(p.length, 1);
    assert.match(p[0], /^listings\.ndjson:4: first_seen_at: must be an ISO 8601 timestamp/);
  });
  it('a timestamp on an impossible time of day or offset', async () => {
    for (const t of [
      '2026-01-31T25:00:00Z',
      '2026-01-31T23:60:00Z',
      '2026-01-31T23:59:60Z',
      '2026-01-31T12:00:00+24:00',
    ]) {
      const p = await failingBuild(
        'listings.ndjson',
        setLine(4, (r) => ({ ...r, updated_at: t })),
      );
      assert.equal(p.length, 1, t);
      assert.match(
        p[0],
        /^listings\.ndjson:4: updated_at: must be an ISO 8601 timestamp with time zone on a real date and time of day/,
        t,
      );
    }
  });
  it('unknown locale key', async () => {
    const p = await failingBuild(
      'listings.ndjson',
      setLine(1, (r) => ({ ...r, title: { ...r.title, it: 'Appartamento' } })),
    );
    assert.deepEqual(p, ['listings.ndjson:1: title.it: unknown locale key (allowed: en, nl, de, fr, es)']);
  });
  it('unknown field', async () => {
    const p = await failingBuild(
      'owners.ndjson',
      setLine(2, (r) => ({ ...r, nickname: 'P' })),
    );
    assert.deepEqual(p, ['owners.ndjson:2: nickname: unknown field']);
  });
  it('duplicate id', async () => {
    const p = await failingBuild('listings.ndjson', (l) => [...l, l[0]]);
    assert.deepEqual(p, ['listings.ndjson:13: id: duplicate id "lst-001" (first at line 1)']);
  });
  it('unknown owner', async () => {
    const p = await failingBuild(
      'listings.ndjson',
      setLine(2, (r) => ({ ...r, owner_id: 'own-404' })),
    );
    assert.deepEqual(p, ['listings.ndjson:2: owner_id: unknown owner "own-404"']);
  });
  it('unknown location', async () => {
    const p = await failingBuild(
      'listings.ndjson',
      setLine(2, (r) => ({ ...r, location_id: 'loc-404' })),
    );
    assert.deepEqual(p, ['listings.ndjson:2: location_id: unknown location "loc-404"']);
  });
  it('listing placed in a province', async () => {
    const p = await failingBuild(
      'listings.ndjson',
      setLine(2, (r) => ({ ...r, location_id: 'loc-nh' })),
    );
    assert.deepEqual(p, [
      'listings.ndjson:2: location_id: "loc-nh" is a province; a listing lies in a city or neighbourhood',
    ]);
  });
  it('unknown provider', async () => {
    const p = await failingBuild(
      'internet_plans.ndjson',
      setLine(3, (r) => ({ ...r, provider_id: 'inet-404' })),
    );
    assert.deepEqual(p, ['internet_plans.ndjson:3: provider_id: unknown internet provider "inet-404"']);
  });
  it('unknown parent location', async () => {
    const p = await failingBuild(
      'locations.ndjson',
      setLine(6, (r) => ({ ...r, parent_id: 'loc-404' })),
    );
    assert.deepEqual(p, ['locations.ndjson:6: parent_id: unknown location "loc-404"']);
  });
  it('parent of the wrong level', async () => {
    const p = await failingBuild(
      'locations.ndjson',
      setLine(6, (r) => ({ ...r, parent_id: 'loc-nh' })),
    );
    assert.deepEqual(p, [
      'locations.ndjson:6: parent_id: the parent of neighbourhood "loc-ams-pijp" must be a city, "loc-nh" is a province',
    ]);
  });
  it('a missing source file', async () => {
    const src = copyFixture();
    rmSync(join(src, 'platforms.ndjson'));
    const { path: out } = await buildTestSnapshot();
    const before = readFileSync(out);
    const r = await buildSnapshot({ source: src, out, log: () => {} });
    assert.equal(r.ok, false);
    assert.match(r.problems[0], /^platforms\.ndjson:0: \(file\): missing source file/);
    assert.ok(readFileSync(out).equals(before));
  });
  it('reports many problems, capped, with a count of the rest', async () => {
    const p = await failingBuild('listings.ndjson', (_l) => Array.from({ length: 80 }, () => '{oops'));
    assert.equal(p.length, 51);
    assert.equal(p[50], '… and 30 more problems');
  });
});

describe('snapshot compiler: command line', () => {
  const cli = (args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'build-snapshot/main.ts', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
    });

  it('exits 0 and prints a one-line summary on success', () => {
    const out = join(tempDir(), 'ok.db');
    const r = cli(['--source', join(FIXTURES, 'basic'), '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /build-snapshot: OK snap_[0-9a-f]{24} → .*ok\.db \([\d.]+ MiB\) in [\d.]+s; stored\/valid: locations 8\/8, owners 4\/5, listings 9\/12/,
    );
    assert.ok(existsSync(out));
  });

  it('exits 1, prints file:line problems and leaves no output on bad data', () => {
    const src = copyFixture();
    writeFileSync(
      join(src, 'metrics.ndjson'),
      '{"id":"m","name":{"en":"M"},"unit":"EUR","aggregation":"mode","min_sample_size":0}\n',
    );
    const out = join(tempDir(), 'bad.db');
    const r = cli(['--source', src, '--out', out]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /metrics\.ndjson:1: aggregation: /);
    assert.match(r.stderr, /metrics\.ndjson:1: min_sample_size: must be at least 1/);
    assert.match(r.stderr, /FAILED with 2 problems after .* was not changed/);
    assert.ok(!existsSync(out));
  });

  it('writes control characters of the source data in a problem line as escapes, never raw to the terminal', () => {
    const src = copyFixture();
    writeFileSync(
      join(src, 'metrics.ndjson'),
      '{"id":"m","name":{"en":"M"},"unit":"EUR","aggregation":"\\u001b]0;PWNED\\u0007\\u001b[2J","min_sample_size":1}\n',
    );
    const r = cli(['--source', src, '--out', join(tempDir(), 'bad.db')]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /metrics\.ndjson:1: aggregation: .*\\u001b\]0;PWNED\\u0007\\u001b\[2J/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the raw escape must not be there
    assert.doesNotMatch(r.stderr, /[\u0000-\u0008\u000b-\u001f\u007f]/);
  });

  it('removes its temporary file when interrupted (SIGINT, SIGTERM), leaving the target as it was', async () => {
    const { spawn } = await import('node:child_process');
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const src = copyFixture();
      rmSync(join(src, 'listings.ndjson'));
      // A FIFO nobody writes: the build stops at listings.ndjson, with its temporary file written.
      assert.equal(spawnSync('mkfifo', [join(src, 'listings.ndjson')]).status, 0, 'mkfifo');
      const { path: out } = await buildTestSnapshot();
      const before = readFileSync(out);
      const temps = () => readdirSync(dirname(out)).filter((f) => f.includes('.tmp-'));
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'build-snapshot/main.ts', '--source', src, '--out', out],
        { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, s) => r(s)));
      for (const until = Date.now() + 20_000; temps().length === 0 && Date.now() < until; )
        await new Promise((r) => setTimeout(r, 50));
      assert.ok(temps().length > 0, 'the build got as far as its temporary file');
      child.kill(signal);
      assert.equal(await exited, signal, `ends by ${signal} (a shell's status 128 + its number): ${stderr}`);
      assert.match(stderr, new RegExp(`interrupted \\(${signal}\\); .* was not changed`));
      assert.deepEqual(temps(), [], 'no temporary file is left behind');
      assert.ok(readFileSync(out).equals(before), 'the target is byte-identical');
    }
  });

  // listings.ndjson is read by the parser thread, the other files by the main thread (which then must not
  // block in a read: the signal handler runs on it).
  for (const fifo of ['listings.ndjson', 'owners.ndjson'])
    it(`stops on SIGTERM also while the build waits in a read of ${fifo} (a FIFO nobody writes)`, async () => {
      const { spawn } = await import('node:child_process');
      const src = copyFixture();
      rmSync(join(src, fifo));
      assert.equal(spawnSync('mkfifo', [join(src, fifo)]).status, 0, 'mkfifo');
      const out = join(tempDir(), 'snapshot.db');
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'build-snapshot/main.ts', '--source', src, '--out', out],
        { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, s) => r(s)));
      try {
        for (
          const until = Date.now() + 20_000;
          !readdirSync(dirname(out)).some((f) => f.includes('.tmp-')) && Date.now() < until;
        )
          await new Promise((r) => setTimeout(r, 50));
        // By now the parser thread is blocked opening the FIFO.
        await new Promise((r) => setTimeout(r, 3000));
        child.kill('SIGTERM');
        assert.equal(
          await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running after 15 s'), 15_000))]),
          'SIGTERM',
        );
        assert.deepEqual(
          readdirSync(dirname(out)).filter((f) => f.includes('.tmp-')),
          [],
        );
      } finally {
        child.kill('SIGKILL'); // a failed assertion must not leave a build blocked on the FIFO
      }
    });

  it('does not replace the target when stopped during its last synchronous stretch (ANALYZE, integrity_check)', async () => {
    const { path: out } = await buildTestSnapshot();
    const before = readFileSync(out);
    // What a signal handler does when the signal arrived while integrity_check ran.
    const r = await buildSnapshot({
      source: join(FIXTURES, 'basic'),
      out,
      log: (l) => {
        if (l.endsWith('] checking')) stopBuilds();
      },
    });
    assert.equal(r.ok, false);
    assert.match(r.problems.join('\n'), /\(interrupted\): stopped by a signal before the snapshot replaced the target/);
    assert.ok(readFileSync(out).equals(before), 'the target is byte-identical');
    assert.deepEqual(
      readdirSync(dirname(out)).filter((f) => f.includes('.tmp-')),
      [],
    );
    const again = await buildSnapshot({ source: join(FIXTURES, 'basic'), out, log: () => {} });
    assert.equal(again.ok, true, 'a later build in the same process is not stopped');
  });
  it('tells the truth about the target when SIGTERM arrives as the build finishes', async () => {
    const { spawn } = await import('node:child_process');
    const dir = tempDir();
    const source = join(dir, 'src');
    assert.equal(
      spawnSync(process.execPath, ['--import', 'tsx', 'generate/main.ts', '--listings', '8000', '--out', source], {
        cwd: ROOT,
      }).status,
      0,
    );
    const { path: out } = await buildTestSnapshot(join(FIXTURES, 'basic'), join(dir, 'snapshot.db'));
    const before = readFileSync(out);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'build-snapshot/main.ts', '--source', source, '--out', out],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, s) => r(s)));
    // The signal is sent when the last phase starts: it arrives while integrity_check runs, or just after.
    child.stderr.on('data', (d) => {
      stderr += d;
      if (/\] checking/.test(stderr)) child.kill('SIGTERM');
    });
    const signal = await exited;
    const changed = !readFileSync(out).equals(before);
    // Whichever moment the signal met, what the build says and how it ends match what happened to the file.
    if (signal === null)
      assert.ok(changed && /build-snapshot: OK/.test(stderr), `finished before the signal: ${stderr}`);
    else {
      assert.equal(signal, 'SIGTERM');
      assert.doesNotMatch(stderr, /build-snapshot: OK/, 'no success line for an interrupted build');
      if (changed)
        assert.match(
          stderr,
          /interrupted \(SIGTERM\) after the build had finished: .* was replaced with the new snapshot/,
        );
      else assert.match(stderr, /interrupted \(SIGTERM\); .* was not changed/);
    }
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('.tmp-')),
      [],
    );
  });
  it('exits 2 on unknown arguments', () => {
    const r = cli(['--sauce', 'x']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^build-snapshot: unknown option --sauce\nusage: npm run build-snapshot/);
  });
  it('exits 2 on a repeated option (parseArgs would keep the last one silently)', () => {
    const r = cli(['--out', join(tempDir(), 'a.db'), '--out', join(tempDir(), 'b.db')]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--out is given more than once\n.*usage: npm run build-snapshot/s);
  });
  it('exits 2 on an empty --out or --source (a variable that was not set)', () => {
    for (const [flag, args] of [
      ['out', ['--out', '']],
      ['source', ['--source', ' ']],
    ] as const) {
      const r = cli([...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`--${flag} is empty\\n.*usage: npm run build-snapshot`, 's'));
    }
  });
});

describe('IdIndex (the duplicate-id check of the listings parser)', () => {
  it('finds every repeat with the line of its first occurrence, across growth and hash collisions', () => {
    const index = new IdIndex();
    const first = new Map<string, number>();
    const ids: string[] = [];
    const r = (() => {
      let a = 7;
      return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = Math.imul(a ^ (a >>> 15), a | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
      };
    })();
    for (let line = 1; line <= 60_000; line++) {
      // A mix of sequential ids, random ids of varying length, and repeats of earlier ones.
      const id =
        r() < 0.2 && ids.length
          ? ids[Math.floor(r() * ids.length)]
          : r() < 0.5
            ? `lst_${line}`
            : `x${Math.floor(r() * 1e9).toString(36)}:${line % 7}`;
      const got = index.firstLine(id, line);
      assert.equal(got, first.get(id), `${id} at line ${line}`);
      if (!first.has(id)) {
        first.set(id, line);
        ids.push(id);
      }
    }
    assert.equal(index.size, first.size);
    assert.ok(first.size > 40_000, `${first.size} distinct ids`);
  });
});

describe('snapshot compiler: overlong lines', () => {
  it('Utf8Check says per chunk whether the lines it completes are valid UTF-8, for any chunking (property test)', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const valid = [Buffer.from('a'), Buffer.from('é'), Buffer.from('€'), Buffer.from('🏠'), Buffer.from('\n')];
    const invalid = [Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0x80])];
    // Mostly valid lines (a bad byte 1 piece in 40), cut anywhere: also inside characters.
    const piece = () => (rnd(40) === 0 ? invalid[rnd(invalid.length)] : valid[rnd(valid.length)]);
    for (let round = 0; round < 500; round++) {
      const data = Buffer.concat(Array.from({ length: 1 + rnd(60) }, piece));
      const cuts = [...new Set(Array.from({ length: rnd(12) }, () => rnd(data.length + 1)))].sort((a, b) => a - b);
      const check = new Utf8Check();
      let from = 0;
      for (const to of [...cuts, data.length]) {
        const got = to === data.length && from === data.length ? null : check.push(data.subarray(from, to));
        // The reference: every line that ends (with its newline) inside this chunk, checked whole.
        const ends: number[] = [];
        for (let i = from; i < to; i++) if (data[i] === 0x0a) ends.push(i);
        if (got !== null) {
          const lineStart = (end: number) => data.lastIndexOf(0x0a, end - 1) + 1;
          const want = ends.every((e) => isUtf8(data.subarray(lineStart(e), e + 1)));
          assert.equal(got, want, `round ${round}, chunk ${from}-${to} of ${data.toString('hex')}`);
        }
        from = to;
      }
      const lastLine = data.subarray(data.lastIndexOf(0x0a) + 1);
      assert.equal(check.end(), isUtf8(lastLine), `round ${round}: the last line`);
    }
  });

  it('LineSplitter yields lines across chunks, an overlong line once (wherever it is found), and the last line', () => {
    const split = (chunks: string[], max: number) => {
      const s = new LineSplitter(max);
      const out: (string | symbol)[] = [];
      for (const c of chunks) for (const l of s.push(c)) out.push(l);
      for (const l of s.end()) out.push(l);
      return out;
    };
    assert.deepEqual(split(['ab', 'c\nd', 'e\n', 'f'], 5), ['abc', 'de', 'f']);
    assert.deepEqual(split(['abcdefgh\nx\n'], 5), [OVERLONG, 'x'], 'over the cap within one chunk');
    assert.deepEqual(
      split(['abc', 'def', 'ghi', '\nx'], 5),
      [OVERLONG, 'x'],
      'over the cap across chunks: reported once',
    );
    assert.deepEqual(split(['abcde\n', 'abcdef'], 5), ['abcde', OVERLONG], 'at the cap is fine; an overlong last line');
    assert.deepEqual(split(['\n\n'], 5), ['', ''], 'blank lines are lines');
  });
  it('reports a line over the cap as file:line and goes on with the next lines (main thread and listings parser)', async () => {
    const dir = copyFixture();
    const huge = JSON.stringify({ id: 'x', text: 'a'.repeat(MAX_LINE) }); // what a whole JSON array on one line looks like
    for (const file of ['owners.ndjson', 'listings.ndjson']) {
      const lines = readFileSync(join(dir, file), 'utf8').split('\n');
      lines.splice(2, 0, huge, 'not json');
      writeFileSync(join(dir, file), lines.join('\n'));
    }
    const r = await buildSnapshot({ source: dir, out: join(tempDir(), 'snapshot.db'), log: () => {} });
    assert.equal(r.ok, false);
    for (const file of ['owners.ndjson', 'listings.ndjson']) {
      assert.ok(r.problems.includes(`${file}:3: (record): ${OVERLONG_REASON}`), r.problems.join('\n'));
      assert.ok(
        r.problems.some((p) => p.startsWith(`${file}:4: (record): malformed JSON`)),
        'the line after it is read, with its own number',
      );
    }
  });
});

describe('snapshot compiler: reading listings in 4 MiB chunks', () => {
  it('keeps a multi-byte character that straddles a chunk boundary, and counts lines across chunks', async () => {
    const dir = copyFixture();
    const file = join(dir, 'listings.ndjson');
    const base = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]);
    const CHUNK = 4 << 20;
    const title = (i: number) => `Woning ${i} € 🏠 ${'é€'.repeat(200)}`; // 2-, 3- and 4-byte characters
    const lines: string[] = [];
    let bytes = Buffer.byteLength(readFileSync(file));
    for (let i = 0; bytes < CHUNK + 200_000; i++) {
      const line = JSON.stringify({ ...base, id: `lst-z${String(i).padStart(6, '0')}`, title: { en: title(i) } });
      lines.push(line);
      bytes += Buffer.byteLength(line) + 1;
    }
    // Shift the content with spaces (allowed in JSON) until the byte at the boundary is inside a
    // multi-byte character, not at its first byte.
    const original = readFileSync(file);
    let text = '';
    for (let pad = 0; pad < 8; pad++) {
      text = `${original.toString('utf8') + ' '.repeat(pad) + lines.join('\n')}\n`;
      const b = Buffer.from(text)[CHUNK];
      if ((b & 0xc0) === 0x80) break; // a continuation byte
    }
    assert.equal(Buffer.from(text)[CHUNK] & 0xc0, 0x80, 'a character straddles the boundary');
    writeFileSync(file, text);
    const built = await buildTestSnapshot(dir);
    const db = new Database(built.path, { readonly: true });
    try {
      const titles = db
        .prepare(
          "SELECT l.id, t.title FROM listings l JOIN listing_summary t ON t.rid = l.rid WHERE l.id LIKE 'lst-z%' ORDER BY l.id",
        )
        .all() as { id: string; title: string }[];
      assert.equal(titles.length, lines.length);
      for (const [i, row] of titles.entries()) assert.equal(row.title, title(i), row.id);
    } finally {
      db.close();
    }
    // Line numbers run on across chunks: a bad record after the boundary is reported at its own line.
    const firstBad =
      original
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '').length +
      1 +
      lines.length;
    writeFileSync(file, `${text}{"id": "lst-bad"\n`);
    const r = await buildSnapshot({ source: dir, out: join(tempDir(), 'x.db'), log: () => {} });
    assert.equal(r.ok, false);
    assert.ok(
      r.problems.some((p) => p.startsWith(`listings.ndjson:${firstBad}:`)),
      r.problems.join('\n'),
    );
  });
});

describe('snapshot compiler: operator mistakes', () => {
  const refused = refusedBuild;
  /** Puts a Latin-1 "é" (one byte 0xE9, not UTF-8) right after the first `marker` of line `n`. */
  function latin1(file: string, n: number, marker: string) {
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const at = lines[n - 1].indexOf(marker) + marker.length;
    const before = [...lines.slice(0, n - 1), lines[n - 1].slice(0, at)].join('\n');
    const after = `${[lines[n - 1].slice(at), ...lines.slice(n)].join('\n')}\n`;
    writeFileSync(file, Buffer.concat([Buffer.from(before), Buffer.from([0xe9]), Buffer.from(after)]));
  }

  it('reports bytes that are not UTF-8 at their line (listings and a small file), instead of storing U+FFFD', async () => {
    const src = copyFixture();
    latin1(join(src, 'listings.ndjson'), 2, '"en":"');
    latin1(join(src, 'platforms.ndjson'), 1, '"name":"');
    const p = await refused(src);
    assert.ok(
      p.includes(
        'listings.ndjson:2: (record): not valid UTF-8 (a Latin-1 or Windows-1252 export?); save the file as UTF-8',
      ),
      p.join('\n'),
    );
    assert.ok(
      p.some((l) => l.startsWith('platforms.ndjson:1: (record): not valid UTF-8')),
      p.join('\n'),
    );
    assert.equal(p.filter((l) => /not valid UTF-8/.test(l)).length, 2, 'only the lines with the bad bytes');
  });
  it('names a byte-order mark at the start of a file', async () => {
    const src = copyFixture();
    writeFileSync(join(src, 'articles.ndjson'), `\ufeff${readFileSync(join(src, 'articles.ndjson'), 'utf8')}`);
    assert.deepEqual(await refused(src), [
      'articles.ndjson:1: (record): the file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without one',
    ]);
  });
  it('refuses an empty or blank listings file rather than replacing every listing with none', async () => {
    for (const content of ['', '\n\n']) {
      const src = copyFixture();
      writeFileSync(join(src, 'listings.ndjson'), content);
      assert.deepEqual(await refused(src), [
        'listings.ndjson:0: (file): has no records; refusing to build a snapshot without listings',
      ]);
    }
  });
  it('reports a source "file" that is a folder as a problem line, not a crash', async () => {
    const src = copyFixture();
    const { rmSync, mkdirSync } = await import('node:fs');
    rmSync(join(src, 'owners.ndjson'));
    mkdirSync(join(src, 'owners.ndjson'));
    assert.deepEqual(await refused(src), ['owners.ndjson:0: (file): is a folder, not a file']);
  });
  it('says in one line that --source is missing or not a folder, not once per source file', async () => {
    const missing = join(tempDir(), 'nosuch');
    assert.deepEqual(await refused(missing), [`${missing}:0: (source): the source folder does not exist`]);
    const file = join(copyFixture(), 'owners.ndjson');
    assert.deepEqual(await refused(file), [
      `${file}:0: (source): is not a folder (--source names the folder of the .ndjson files)`,
    ]);
  });
  it('refuses to replace a file at --out that is not a snapshot (a key store, a text file), and a folder', async () => {
    const dir = tempDir();
    const { openKeyStore } = await import('../src/access/key-store.ts');
    const keys = join(dir, 'keys.db');
    openKeyStore(keys, { create: true }).close();
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'operator notes');
    for (const out of [keys, text]) {
      const before = readFileSync(out);
      const r = await buildSnapshot({ source: join(FIXTURES, 'basic'), out, log: () => {} });
      assert.equal(r.ok, false);
      assert.match(r.problems[0], /:0: \(out\): exists and is not a snapshot of this service/);
      assert.ok(readFileSync(out).equals(before), `${out} untouched`);
    }
    const r = await buildSnapshot({ source: join(FIXTURES, 'basic'), out: dir, log: () => {} });
    assert.match(r.problems[0], /:0: \(out\): is a folder/);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('.tmp-')),
      [],
    );
  });
  it("names the system's reason when the output folder refuses a new file, even to root (sysfs)", {
    skip: !existsSync('/sys/kernel') && 'needs Linux sysfs',
  }, async () => {
    const r = await buildSnapshot({ source: join(FIXTURES, 'basic'), out: '/sys/kernel/snapshot.db', log: () => {} });
    assert.equal(r.ok, false);
    // access(W_OK) says yes to root, and SQLite's own error was only "unable to open database file".
    assert.deepEqual(r.problems, [
      process.getuid?.() === 0
        ? '/sys/kernel/snapshot.db:0: (out): cannot create a file in the folder /sys/kernel (EACCES: permission denied; the new snapshot is written beside the target, then renamed)'
        : '/sys/kernel/snapshot.db:0: (out): the folder /sys/kernel is not writable (EACCES: permission denied; the new snapshot is written beside the target, then renamed)',
    ]);
  });
  it('removes temporary files of earlier builds whose process is gone, and keeps those of a running one', async () => {
    const { path: out } = await buildTestSnapshot();
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    const dead = join(dirname(out), `.snapshot.db.tmp-${gone}`);
    const alive = join(dirname(out), `.snapshot.db.tmp-${process.ppid}`);
    for (const f of [dead, `${dead}-journal`, `${dead}-wal`, `${dead}-shm`, `${dead}-fts`, alive, `${alive}-fts`])
      writeFileSync(f, 'x');
    const r = await buildSnapshot({ source: join(FIXTURES, 'basic'), out, log: () => {} });
    assert.equal(r.ok, true, r.problems.join('\n'));
    for (const f of [dead, `${dead}-journal`, `${dead}-wal`, `${dead}-shm`, `${dead}-fts`])
      assert.ok(!existsSync(f), `a dead build's files (its WAL and the full-text worker's too) are removed: ${f}`);
    assert.ok(existsSync(alive) && existsSync(`${alive}-fts`), "a running build's files are kept");
  });
  it('fails cleanly when a write is refused (a file-size limit, as a full disk would) during the listings load or after it: a (build) problem naming the likely cause, no temporary files, the target untouched', async () => {
    // 8,000 generated listings: the load outgrows the build's 4 MiB page cache, so SQLite writes during it.
    const dir = tempDir();
    const source = join(dir, 'src');
    const gen = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'generate/main.ts', '--listings', '8000', '--out', source],
      { cwd: ROOT, encoding: 'utf8' },
    );
    assert.equal(gen.status, 0, gen.stderr);
    const { path: out } = await buildTestSnapshot(join(FIXTURES, 'basic'), join(dir, 'snapshot.db'));
    const before = readFileSync(out);
    const runner = join(FIXTURES, 'build-under-file-limit.ts');
    const seen: string[] = [];
    // A file may grow to 3 MB (fails while listings are written) or 8 MB (fails after them).
    for (const kib of [3000, 8000]) {
      const run = spawnSync(
        'bash',
        ['-c', `ulimit -f ${kib} && exec "$0" --import tsx "$@"`, process.execPath, runner, source, out],
        { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
      );
      assert.equal(run.status, 0, run.stderr);
      const r = JSON.parse(run.stdout) as { ok: boolean; problems: string[]; lastPhase: string };
      assert.equal(r.ok, false, `${kib} KiB: the build must fail`);
      assert.deepEqual(
        r.problems,
        [
          `${out}:0: (build): disk I/O error (a write was refused: a file-size limit such as ulimit -f, or a failing disk or file system)`,
        ],
        `${kib} KiB`,
      );
      seen.push(r.lastPhase);
      assert.ok(readFileSync(out).equals(before), 'the previous snapshot is untouched');
      assert.deepEqual(
        readdirSync(dir).filter((f) => f.includes('.tmp-')),
        [],
        'no temporary files left',
      );
    }
    assert.equal(seen[0], 'reading listings.ndjson', 'the small limit is hit during the listings load');
    assert.notEqual(seen[1], 'reading listings.ndjson', 'the larger limit is hit after it');
  });
  it('reports a full-text file that cannot be created as a build problem, not as an unreadable source, and keeps the target', async () => {
    const { path: out } = await buildTestSnapshot();
    const before = readFileSync(out);
    // A folder where this build's full-text file goes (a leftover of an earlier process with the same pid).
    const blocked = join(dirname(out), `.snapshot.db.tmp-${process.pid}-fts`);
    mkdirSync(blocked);
    try {
      const r = await buildSnapshot({ source: join(FIXTURES, 'basic'), out, log: () => {} });
      assert.equal(r.ok, false);
      assert.deepEqual(
        r.problems.filter((p) => p.includes('listings.ndjson')),
        [],
        'the source file is not blamed',
      );
      assert.match(r.problems.join('\n'), /:0: \(build\): .*-fts/);
      assert.ok(readFileSync(out).equals(before), 'the previous snapshot is untouched');
      assert.ok(
        !existsSync(join(dirname(out), `.snapshot.db.tmp-${process.pid}`)),
        'the temporary snapshot is removed',
      );
    } finally {
      rmSync(blocked, { recursive: true, force: true });
    }
  });
});
