// The snapshot compiler's determinism: the same source gives the same snapshot id and rows (compiled twice: once
// here, once for the shared cache), another source another id, and the order of the source lines does not matter.

import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { copyFixture } from './support/files.ts';
import { buildTestSnapshot, fixtureSnapshot } from './support/snapshots.ts';

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

/** The basic fixture with its listings file in reverse order (not sorted by id), compiled once (shared, read-only). */
function reversed() {
  const src = copyFixture();
  const lines = readFileSync(join(src, 'listings.ndjson'), 'utf8').trim().split('\n').reverse();
  writeFileSync(join(src, 'listings.ndjson'), `${lines.join('\n')}\n`);
  return fixtureSnapshot(src);
}

describe('snapshot compiler: determinism', () => {
  it('gives the same snapshot id and the same rows for the same source', async () => {
    const a = await fixtureSnapshot();
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
    const a = await fixtureSnapshot();
    const b = await buildTestSnapshot(src);
    assert.notEqual(a.result.snapshotId, b.result.snapshotId);
  });

  it('orders rows by id even when the listings file is not sorted', async () => {
    const sorted = dump((await fixtureSnapshot()).path);
    const { path } = await reversed();
    const unsorted = dump(path);
    assert.deepEqual(unsorted.listings, sorted.listings);
    assert.deepEqual(unsorted.listings_i18n, sorted.listings_i18n);
    const db = open(path);
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
    db.close();
  });

  it('builds the same full-text index in its worker as from the table (the unsorted path), and copies it whole', async () => {
    const { path: worker } = await buildTestSnapshot(); // sorted: the full-text worker's file, copied in
    const { path: table } = await reversed(); // re-ranked: derived from the listings table
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
