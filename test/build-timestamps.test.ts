// The snapshot compiler's reading of what a source export may hold: timestamps written in their own offset, and
// an empty export or a file it does not read (each a warning, not a failure).

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { buildSnapshot } from '../build-snapshot/compile.ts';
import { editRecords } from './support/builds.ts';
import { copyFixture, tempDir } from './support/files.ts';
import { startServer, type TestServer } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

describe('snapshot compiler: timestamps as written in their own offset', () => {
  let server: TestServer;
  let db: Database.Database;
  before(async () => {
    const src = copyFixture();
    const edit = (file: string, f: (r: any) => any) => editRecords(src, file, (rs) => rs.map(f));
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
    const { path } = await fixtureSnapshot(src); // it throws with the problems if the build fails
    db = new Database(path, { readonly: true });
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
