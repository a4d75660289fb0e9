// The operator's snapshot command (spawned like npm run snapshot): inspect one file, diff two fixture snapshots.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
import { copyFixture, ROOT, tempDir } from './support/files.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

function snapshot(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/snapshot.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A failure is one line naming the file and the reason: no usage text, no stack trace. */
function assertFails(r: ReturnType<typeof snapshot>, reason: RegExp) {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, reason);
  assert.doesNotMatch(r.stderr, /\n\s+at\s|\.ts:\d+/);
}

/** Rewrites the records of one source file. */
function edit(dir: string, file: string, change: (records: any[]) => any[]) {
  const path = join(dir, file);
  const records = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  writeFileSync(
    path,
    `${change(records)
      .map((r) => JSON.stringify(r))
      .join('\n')}\n`,
  );
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
  edit(
    base,
    'listings.ndjson',
    byId('lst-012', (r) => (r.title.nl = 'Woning 12')),
  );
  const old = await buildTestSnapshot(base);
  oldPath = old.path;
  oldId = old.result.snapshotId!;
  stored = Object.fromEntries(Object.entries(old.result.counts!).map(([k, c]) => [k, c.stored]));

  // The new side: lst-008 (The Hague, 1,400) removed, lst-013 (Amsterdam, 2,600) added, lst-002 (Amsterdam)
  // from 2,400 to 3,000, lst-007 only its Dutch title changed, own-1 only its Dutch description removed.
  edit(base, 'listings.ndjson', (rs) => {
    const added = { ...rs.find((r) => r.id === 'lst-012'), id: 'lst-013', slug: 'lst-013-slug', price_eur: 2600 };
    return [...rs.filter((r) => r.id !== 'lst-008'), added].map((r) => {
      if (r.id === 'lst-002') r.price_eur = 3000;
      if (r.id === 'lst-007') r.title.nl = 'Nieuwe titel';
      return r;
    });
  });
  edit(
    base,
    'owners.ndjson',
    byId('own-1', (r) => delete r.description_short.nl),
  );
  newPath = (await buildTestSnapshot(base)).path;
});

describe('npm run snapshot -- inspect', () => {
  it('prints the id, build time, schema version, records per resource and the checks of a fixture snapshot', () => {
    const r = snapshot('inspect', oldPath);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`snapshot id +${oldId}\n`));
    assert.match(r.stdout, /built at +2026-11-01T00:00:00.000Z\n/);
    assert.match(r.stdout, new RegExp(`schema version +${SCHEMA_VERSION} \\(read by this server\\)\n`));
    assert.match(r.stdout, /\nlistings +9 +9\n/);
    assert.match(r.stdout, /\nquick_check +ok +\d+ ms\n/);
    assert.doesNotMatch(r.stdout, /integrity_check|FAILED/);
  });

  it('--json prints one object whose counts are the fixture records stored, and --full runs integrity_check', () => {
    const r = snapshot('inspect', oldPath, '--json', '--full');
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

  it('fails (exit 1, the reason on stderr) for another schema version, wrong counts and a truncated file', () => {
    const other = join(tempDir(), 'other.db');
    copyFileSync(oldPath, other);
    const db = new Database(other);
    db.prepare("UPDATE snapshot_meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION - 1));
    db.prepare("UPDATE snapshot_meta SET value = json_set(value, '$.owners', 5) WHERE key = 'counts'").run();
    db.close();
    const r = snapshot('inspect', other, '--json');
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
    const pages = new Database(oldPath, { readonly: true }).pragma('page_count', { simple: true }) as number;
    appendFileSync(cut, Buffer.alloc(1000));
    assertFails(
      snapshot('inspect', cut),
      new RegExp(
        `cut\\.db fails: file size: ${pages * 4096 + 1000} bytes, but the header counts ${pages} pages of 4096 bytes`,
      ),
    );
    // A file cut short is named as such, before SQLite would call it malformed (it cannot read its snapshot_meta).
    truncateSync(cut, (pages - 3) * 4096);
    for (const args of [
      ['inspect', cut],
      ['diff', oldPath, cut],
    ])
      assertFails(
        snapshot(...args),
        new RegExp(`cannot open .*cut\\.db: it is truncated \\(${(pages - 3) * 4096} of ${pages * 4096} bytes\\)`),
      );
  });

  it('refuses a snapshot switched to WAL mode by hand, and writes nothing beside it', () => {
    const wal = join(tempDir(), 'wal.db');
    copyFileSync(oldPath, wal);
    const db = new Database(wal);
    db.pragma('journal_mode = WAL');
    db.close();
    for (const args of [
      ['inspect', wal],
      ['diff', oldPath, wal],
    ])
      assertFails(snapshot(...args), /wal\.db is in WAL mode .*PRAGMA journal_mode=DELETE/);
    assert.ok(!existsSync(`${wal}-wal`) && !existsSync(`${wal}-shm`), 'no -wal or -shm file');
  });

  it('refuses a missing file, a file that is not SQLite and an SQLite file that is not a snapshot (exit 1)', () => {
    const dir = tempDir();
    assertFails(snapshot('inspect', join(dir, 'missing.db')), /missing\.db: no such file$/m);
    writeFileSync(join(dir, 'text.db'), 'not a database\n'.repeat(400));
    assertFails(snapshot('inspect', join(dir, 'text.db')), /text\.db is not an SQLite database, not a snapshot$/m);
    new Database(join(dir, 'keys.db')).exec('CREATE TABLE api_keys (id TEXT)').close();
    assertFails(snapshot('inspect', join(dir, 'keys.db')), /keys\.db is not a snapshot \(no snapshot_meta table/);
    assertFails(snapshot('inspect', dir), /is a directory, not a snapshot file$/m);
  });

  it('fails with one line, not a stack trace, when its report cannot be written (stdout on a full disk)', () => {
    const full = openSync('/dev/full', 'w');
    try {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/snapshot.ts', 'inspect', oldPath], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', full, 'pipe'],
      });
      assertFails({ code: r.status, stdout: '', stderr: r.stderr }, /could not write to stdout: ENOSPC/);
    } finally {
      closeSync(full);
    }
  });
  it('exits 2 with the usage on bad arguments', () => {
    for (const args of [
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
    ]) {
      const r = snapshot(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^snapshot: [^\n]+\n(.+\n)*\nUsage: npm run -s snapshot/, args.join(' '));
    }
    // An unknown option by its name alone (node's own message advises a "--" that npm run has taken).
    assert.match(snapshot('inspect', oldPath, '--verbose').stderr, /^snapshot: unknown option --verbose\n\n/);
  });
});

describe('npm run snapshot -- diff', () => {
  it('reports exactly the records added, removed and changed, a translation-only change as changed', () => {
    const r = snapshot('diff', oldPath, newPath, '--json');
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

  it('reports the median asking rent of the cities whose listings changed, largest change first', () => {
    const j = JSON.parse(snapshot('diff', oldPath, newPath, '--json').stdout);
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
    const one = JSON.parse(snapshot('diff', oldPath, newPath, '--json', '--cities', '1', '--ids', '1').stdout);
    assert.deepEqual(
      one.median_price_by_city.top.map((c: any) => c.city_id),
      ['loc-ams'],
    );
    assert.deepEqual(one.resources.find((x: any) => x.resource === 'listings').changed, { count: 2, ids: ['lst-002'] });
  });

  it('prints aligned tables, and nothing changed against itself; neither file is written', () => {
    const before = [readFileSync(oldPath), readFileSync(newPath)];
    const r = snapshot('diff', oldPath, newPath);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\nlistings +9 +9 +1 +1 +2\n/);
    assert.match(r.stdout, /\nlistings changed \(2\): lst-002, lst-007\n/);
    assert.match(r.stdout, /\nloc-ams +Amsterdam +2050\.00 +2100\.00 +\+50\.00 +5 +6\n/);
    const same = snapshot('diff', newPath, newPath, '--json');
    assert.equal(same.code, 0, same.stderr);
    const j = JSON.parse(same.stdout);
    assert.ok(j.resources.every((x: any) => x.added.count + x.removed.count + x.changed.count === 0));
    assert.deepEqual(j.median_price_by_city, { cities: 3, changed: 0, top: [] });
    assert.deepEqual([readFileSync(oldPath), readFileSync(newPath)], before);
  });

  it('refuses a file that is not a snapshot and two snapshots of different schema versions (exit 1)', () => {
    assertFails(snapshot('diff', join(tempDir(), 'none.db'), newPath), /none\.db: no such file$/m);
    const other = join(tempDir(), 'other.db');
    copyFileSync(oldPath, other);
    const db = new Database(other);
    db.prepare("UPDATE snapshot_meta SET value = '1' WHERE key = 'schema_version'").run();
    db.close();
    assertFails(
      snapshot('diff', other, newPath),
      /other\.db has schema version 1 and .+ \d+: diff compares snapshots of one schema version$/m,
    );
  });
});
