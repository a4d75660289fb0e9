// The operator's snapshot command (spawned like npm run snapshot): inspect one file, diff two fixture snapshots.
import assert from 'node:assert/strict';
import {
  appendFileSync,
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  readFileSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../snapshot-format/schema.ts';
import { SnapshotSource } from '../src/snapshot/source.ts';
import { otherSqlite, truncatedCopy, walCopy } from './support/bad-snapshots.ts';
import { editRecords } from './support/builds.ts';
import { copyFixture, tempDir } from './support/files.ts';
import { type Ran, runScript } from './support/processes.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

/** The command, run to its end (several may run at once). */
const snapshot = (...args: string[]) => runScript('src/cli/snapshot.ts', args);

/** A failure is one line naming the file and the reason: no usage text, no stack trace. */
function assertFails(r: Pick<Ran, 'code' | 'stderr'>, reason: RegExp) {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, reason);
  assert.doesNotMatch(r.stderr, /\n\s+at\s|\.ts:\d+/);
}

const byId = (id: string, change: (r: any) => void) => (rs: any[]) => {
  for (const r of rs) if (r.id === id) change(r);
  return rs;
};

let oldPath: string;
let newPath: string;
let oldId: string;
let stored: Record<string, number>;

before(async () => {
  // Both sides: lst-012 (after the removed lst-008, so its rid and translation keys move) gets a Dutch title.
  const base = copyFixture();
  editRecords(
    base,
    'listings.ndjson',
    byId('lst-012', (r) => (r.title.nl = 'Woning 12')),
  );
  const old = await fixtureSnapshot(base); // both sides are shared, read-only
  oldPath = old.path;
  oldId = old.result.snapshotId!;
  stored = Object.fromEntries(Object.entries(old.result.counts!).map(([k, c]) => [k, c.stored]));

  // The new side: lst-008 (The Hague, 1,400) removed, lst-013 (Amsterdam, 2,600) added, lst-002 (Amsterdam)
  // from 2,400 to 3,000, lst-007 only its Dutch title changed, own-1 only its Dutch description removed.
  editRecords(base, 'listings.ndjson', (rs) => {
    const added = { ...rs.find((r) => r.id === 'lst-012'), id: 'lst-013', slug: 'lst-013-slug', price_eur: 2600 };
    return [...rs.filter((r) => r.id !== 'lst-008'), added].map((r) => {
      if (r.id === 'lst-002') r.price_eur = 3000;
      if (r.id === 'lst-007') r.title.nl = 'Nieuwe titel';
      return r;
    });
  });
  editRecords(
    base,
    'owners.ndjson',
    byId('own-1', (r) => delete r.description_short.nl),
  );
  newPath = (await fixtureSnapshot(base)).path;
});

// Each case runs its own processes over the shared snapshots (read only): the cases run at once.
describe('npm run snapshot -- inspect', { concurrency: true }, () => {
  it('prints the id, build time, schema version, records per resource and the checks of a fixture snapshot', async () => {
    const r = await snapshot('inspect', oldPath);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`snapshot id +${oldId}\n`));
    assert.match(r.stdout, /built at +2026-11-01T00:00:00.000Z\n/);
    assert.match(r.stdout, new RegExp(`schema version +${SCHEMA_VERSION} \\(read by this server\\)\n`));
    assert.match(r.stdout, /\nlistings +9 +9\n/);
    assert.match(r.stdout, /\nquick_check +ok +\d+ ms\n/);
    assert.doesNotMatch(r.stdout, /integrity_check|FAILED/);
  });

  it('--json prints one object whose counts are the fixture records stored, and --full runs integrity_check', async () => {
    const r = await snapshot('inspect', oldPath, '--json', '--full');
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.snapshot_id, oldId);
    assert.equal(j.schema_version, SCHEMA_VERSION);
    assert.equal(j.readable_by_server, true);
    assert.equal(j.ok, true);
    assert.deepEqual(j.problems, []);
    assert.equal(j.file_bytes, j.page_count * j.page_size);
    assert.deepEqual(
      Object.fromEntries(j.resources.map((x: any) => [x.resource, x.rows])),
      stored,
      'rows per table are the compiler stored counts',
    );
    assert.ok(j.resources.every((x: any) => x.rows === x.meta_count));
    assert.equal(stored.listings, 9);
    assert.deepEqual(
      j.checks.map((c: any) => [c.name, c.ok]),
      ['schema version', 'counts', 'file size', 'integrity_check'].map((n) => [n, true]),
    );
  });

  it('fails (exit 1, the reason on stderr) for another schema version, wrong counts and a truncated file', async () => {
    const other = join(tempDir(), 'other.db');
    copyFileSync(oldPath, other);
    const db = new Database(other);
    db.prepare("UPDATE snapshot_meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION - 1));
    db.prepare("UPDATE snapshot_meta SET value = json_set(value, '$.owners', 5) WHERE key = 'counts'").run();
    db.close();
    const r = await snapshot('inspect', other, '--json');
    assert.equal(r.code, 1);
    const j = JSON.parse(r.stdout);
    assert.equal(j.readable_by_server, false);
    assert.deepEqual(j.problems, [
      `schema version: version ${SCHEMA_VERSION - 1}; this server reads version ${SCHEMA_VERSION}: rebuild it with npm run build-snapshot`,
      'counts: owners: 4 rows, snapshot_meta says 5',
    ]);
    assertFails(r, /other\.db fails: schema version: version \d+; this server reads version \d+/);

    const cut = join(tempDir(), 'cut.db');
    copyFileSync(oldPath, cut);
    // Bytes beyond the pages SQLite's header counts (a copy gone wrong) are read without an error: the size check finds them.
    const read = new Database(oldPath, { readonly: true });
    const pages = read.pragma('page_count', { simple: true }) as number;
    read.close();
    appendFileSync(cut, Buffer.alloc(1000));
    assertFails(
      await snapshot('inspect', cut),
      new RegExp(
        `cut\\.db fails: file size: ${pages * 4096 + 1000} bytes, but the header counts ${pages} pages of 4096 bytes`,
      ),
    );
    // A file cut short is named as such, before SQLite would call it malformed (it cannot read its snapshot_meta).
    truncateSync(cut, (pages - 3) * 4096);
    for (const r of await Promise.all([snapshot('inspect', cut), snapshot('diff', oldPath, cut)]))
      assertFails(
        r,
        new RegExp(`cannot open .*cut\\.db: it is truncated \\(${(pages - 3) * 4096} of ${pages * 4096} bytes\\)`),
      );
  });

  it('refuses a snapshot switched to WAL mode by hand, and writes nothing beside it', async () => {
    const wal = join(tempDir(), 'wal.db');
    copyFileSync(oldPath, wal);
    const db = new Database(wal);
    db.pragma('journal_mode = WAL');
    db.close();
    for (const r of await Promise.all([snapshot('inspect', wal), snapshot('diff', oldPath, wal)]))
      assertFails(r, /wal\.db is in WAL mode .*PRAGMA journal_mode=DELETE/);
    assert.ok(!existsSync(`${wal}-wal`) && !existsSync(`${wal}-shm`), 'no -wal or -shm file');
  });

  it('refuses a missing file, a file that is not SQLite and an SQLite file that is not a snapshot (exit 1)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'text.db'), 'not a database\n'.repeat(400));
    new Database(join(dir, 'keys.db')).exec('CREATE TABLE api_keys (id TEXT)').close();
    const cases: [string, RegExp][] = [
      [join(dir, 'missing.db'), /missing\.db: there is no file at this path$/m],
      [join(dir, 'text.db'), /text\.db is not an SQLite database, not a snapshot$/m],
      [join(dir, 'keys.db'), /keys\.db is not a snapshot \(no snapshot_meta table/],
      [dir, /: it is a folder, not a snapshot file$/m],
    ];
    const runs = await Promise.all(cases.map(([file]) => snapshot('inspect', file)));
    for (const [i, [, reason]] of cases.entries()) assertFails(runs[i], reason);
  });

  it('says of a file that is no snapshot what the server says when it refuses to start on it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'text.db'), 'not a database\n'.repeat(400));
    writeFileSync(join(dir, 'empty.db'), '');
    const files = [
      join(dir, 'missing.db'),
      dir,
      join(dir, 'empty.db'),
      join(dir, 'text.db'),
      otherSqlite(),
      walCopy(oldPath),
      truncatedCopy(oldPath),
    ];
    const runs = await Promise.all(files.map((file) => snapshot('inspect', file)));
    for (const [i, file] of files.entries()) {
      let server = '';
      try {
        new SnapshotSource(file).close();
      } catch (e) {
        server = (e as Error).message;
      }
      assert.ok(server.includes(file), `the server names ${file}: ${server}`);
      assert.equal(runs[i].stderr, `snapshot: ${server}\n`, file);
    }
  });

  it('fails with one line, not a stack trace, when its report cannot be written (stdout on a full disk)', async () => {
    const full = openSync('/dev/full', 'w');
    try {
      const r = await runScript('src/cli/snapshot.ts', ['inspect', oldPath], { stdout: full });
      assertFails(r, /could not write to stdout: ENOSPC/);
    } finally {
      closeSync(full);
    }
  });
  it('exits 2 with the usage on bad arguments', async () => {
    const cases = [
      [],
      ['check', oldPath],
      ['inspect'],
      ['inspect', oldPath, oldPath],
      ['inspect', oldPath, '--ids', '3'],
      ['inspect', oldPath, '--verbose'],
      ['inspect', oldPath, '--json', '--json'],
      ['diff', oldPath],
      ['diff', oldPath, newPath, '--ids', 'five'],
      ['diff', oldPath, newPath, '--ids', '-1'],
      ['diff', oldPath, newPath, '--full'],
    ];
    const runs = await Promise.all(cases.map((args) => snapshot(...args)));
    for (const [i, args] of cases.entries()) {
      const r = runs[i];
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^snapshot: [^\n]+\n(.+\n)*\nUsage: npm run -s snapshot/, args.join(' '));
    }
    // An unknown option by its name alone (node's own message advises a "--" that npm run has taken).
    assert.match(runs[5].stderr, /^snapshot: unknown option --verbose\n\n/);
  });
});

describe('npm run snapshot -- diff', { concurrency: true }, () => {
  it('reports exactly the records added, removed and changed, a translation-only change as changed', async () => {
    const r = await snapshot('diff', oldPath, newPath, '--json');
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.old.snapshot_id, oldId);
    assert.notEqual(j.new.snapshot_id, oldId);
    const changes = Object.fromEntries(
      j.resources
        .filter((x: any) => x.added.count + x.removed.count + x.changed.count > 0)
        .map((x: any) => [x.resource, [x.old_count, x.new_count, x.added.ids, x.removed.ids, x.changed.ids]]),
    );
    // lst-009..lst-012 moved one rid down (and lst-012's translation key with it): not changes.
    assert.deepEqual(changes, {
      listings: [9, 9, ['lst-013'], ['lst-008'], ['lst-002', 'lst-007']],
      owners: [4, 4, [], [], ['own-1']],
    });
    for (const x of j.resources)
      for (const k of ['added', 'removed', 'changed']) assert.equal(x[k].count, x[k].ids.length);
  });

  it('reports the median asking rent of the cities whose listings changed, largest change first', async () => {
    const [all, first] = await Promise.all([
      snapshot('diff', oldPath, newPath, '--json'),
      snapshot('diff', oldPath, newPath, '--json', '--cities', '1', '--ids', '1'),
    ]);
    const j = JSON.parse(all.stdout);
    // Amsterdam: 1,500 2,000 2,100 2,400 (and one unpriced) -> 1,500 2,000 2,100 2,600 3,000.
    // The Hague: 1,300 1,350 1,400 -> 1,300 1,350. Rotterdam unchanged.
    assert.deepEqual(j.median_price_by_city, {
      cities: 3,
      changed: 2,
      top: [
        {
          city_id: 'loc-ams',
          name: 'Amsterdam',
          old_median: 2050,
          new_median: 2100,
          change: 50,
          old_listings: 5,
          new_listings: 6,
        },
        {
          city_id: 'loc-dh',
          name: 'The Hague',
          old_median: 1350,
          new_median: 1325,
          change: -25,
          old_listings: 3,
          new_listings: 2,
        },
      ],
    });
    const one = JSON.parse(first.stdout);
    assert.deepEqual(
      one.median_price_by_city.top.map((c: any) => c.city_id),
      ['loc-ams'],
    );
    assert.deepEqual(one.resources.find((x: any) => x.resource === 'listings').changed, { count: 2, ids: ['lst-002'] });
  });

  it('prints aligned tables, and nothing changed against itself; neither file is written', async () => {
    const before = [readFileSync(oldPath), readFileSync(newPath)];
    const [r, same] = await Promise.all([
      snapshot('diff', oldPath, newPath),
      snapshot('diff', newPath, newPath, '--json'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\nlistings +9 +9 +1 +1 +2\n/);
    assert.match(r.stdout, /\nlistings changed \(2\): lst-002, lst-007\n/);
    assert.match(r.stdout, /\nloc-ams +Amsterdam +2050\.00 +2100\.00 +\+50\.00 +5 +6\n/);
    assert.equal(same.code, 0, same.stderr);
    const j = JSON.parse(same.stdout);
    assert.ok(j.resources.every((x: any) => x.added.count + x.removed.count + x.changed.count === 0));
    assert.deepEqual(j.median_price_by_city, { cities: 3, changed: 0, top: [] });
    assert.deepEqual([readFileSync(oldPath), readFileSync(newPath)], before);
  });

  it('refuses a file that is not a snapshot and two snapshots of different schema versions (exit 1)', async () => {
    assertFails(
      await snapshot('diff', join(tempDir(), 'none.db'), newPath),
      /none\.db: there is no file at this path$/m,
    );
    const other = join(tempDir(), 'other.db');
    copyFileSync(oldPath, other);
    const db = new Database(other);
    db.prepare("UPDATE snapshot_meta SET value = '1' WHERE key = 'schema_version'").run();
    db.close();
    assertFails(
      await snapshot('diff', other, newPath),
      /other\.db has schema version 1 and .+ \d+: diff compares snapshots of one schema version$/m,
    );
  });
});
