// The snapshot file under a running service: a walk survives a swap, a missing or broken file gives 503 (never 500)
// until a good file is back, and start-up refuses a bad file (SnapshotSource directly, and `src/main.ts` spawned).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../snapshot-format/schema.ts';
import { SnapshotError, SnapshotSource } from '../src/snapshot/source.ts';
import { buildTestSnapshot, copyFixture, startServer, type TestServer, tempDir } from './helpers.ts';
import { assertAscendingIds, assertError, ROOT } from './support.ts';

const LISTINGS = 'listings.ndjson';
/** Source lines of the fixture's listings, by id. */
function listingLines(dir: string): Map<string, string> {
  return new Map(
    readFileSync(join(dir, LISTINGS), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [JSON.parse(l).id as string, l]),
  );
}
function writeListings(dir: string, lines: Map<string, string>) {
  writeFileSync(join(dir, LISTINGS), `${[...lines.values()].join('\n')}\n`);
}
/** A copy of lst-001's record under another id. */
function cloneOf(lines: Map<string, string>, id: string): string {
  const rec = JSON.parse(lines.get('lst-001')!);
  return JSON.stringify({ ...rec, id, slug: `${id}-slug`, title: { en: `Listing ${id}` } });
}
/** Compiles `dir` into a new file beside `path` and renames it over `path`, as an operator ships a snapshot. */
async function shipSnapshot(dir: string, path: string) {
  const next = `${path}.next`;
  await buildTestSnapshot(dir, next);
  renameSync(next, path);
  await sleep(5); // SNAPSHOT_CHECK_MS=1: the next request re-checks the file
}

describe('snapshot open errors', () => {
  it('reports a native addon that does not load as itself, not as a bad snapshot file', async () => {
    const good = (await buildTestSnapshot()).path;
    assert.throws(
      () => new SnapshotSource(good, { nativeBinding: join(tempDir(), 'missing-addon.node') }),
      (e: Error) => {
        assert.ok(!(e instanceof SnapshotError), `not a snapshot error: ${e.message}`);
        assert.doesNotMatch(e.message, /cannot open snapshot/);
        return true;
      },
    );
    assert.throws(
      () => new SnapshotSource(join(tempDir(), 'missing.db')),
      SnapshotError,
      "a missing file is the snapshot's problem",
    );
  });
});

describe('paging across a snapshot swap', () => {
  let server: TestServer | undefined;
  after(async () => {
    await server?.close();
  });

  async function setUp() {
    const dir = copyFixture();
    const { path } = await buildTestSnapshot(dir, join(tempDir(), 'snapshot.db'));
    await server?.close();
    server = await startServer({ SNAPSHOT_PATH: path, SNAPSHOT_CHECK_MS: '1' });
    const first = await server.get('/v1/listings?limit=3');
    assert.deepEqual(
      first.body.data.map((x: any) => x.id),
      ['lst-001', 'lst-002', 'lst-003'],
    );
    return {
      dir,
      path,
      s: server,
      cursor: first.body.pagination.next_cursor as string,
      firstIds: first.body.data.map((x: any) => x.id) as string[],
    };
  }
  const rest = async (s: TestServer, cursor: string) => {
    const items: any[] = [];
    let c: string | null = cursor;
    while (c !== null) {
      const res = await s.get(`/v1/listings?limit=3&cursor=${encodeURIComponent(c)}`);
      assert.equal(res.status, 200, res.text);
      items.push(...res.body.data);
      c = res.body.pagination.next_cursor;
    }
    return items.map((x) => x.id as string);
  };

  it('continues a walk with the old cursor after a new snapshot with an added listing is renamed in', async () => {
    const { dir, path, s, cursor, firstIds } = await setUp();
    const lines = listingLines(dir);
    lines.set('lst-0025', cloneOf(lines, 'lst-0025')); // sorts before the cursor (after lst-002): not seen in this walk
    lines.set('lst-0035', cloneOf(lines, 'lst-0035')); // sorts after the cursor (after lst-003): seen
    writeListings(dir, lines);
    await shipSnapshot(dir, path);
    assert.equal((await s.get('/v1/listings/lst-0035')).status, 200, 'the new snapshot is served');
    const after = await rest(s, cursor);
    assert.deepEqual(after, ['lst-0035', 'lst-007', 'lst-008', 'lst-009', 'lst-010', 'lst-011', 'lst-012']);
    assertAscendingIds([...firstIds, ...after].map((id) => ({ id })));
    assert.ok(s.logs.some((l) => l.msg === 'snapshot swapped in'));
  });

  it("continues after the swap even when the cursor's own listing is gone from the new snapshot", async () => {
    const { dir, path, s, cursor } = await setUp();
    const lines = listingLines(dir);
    lines.delete('lst-003');
    lines.delete('lst-008');
    writeListings(dir, lines);
    await shipSnapshot(dir, path);
    assert.deepEqual(await rest(s, cursor), ['lst-007', 'lst-009', 'lst-010', 'lst-011', 'lst-012']);
  });

  it('answers 404 for a listing that vanished in the new snapshot', async () => {
    const { dir, path, s } = await setUp();
    assert.equal((await s.get('/v1/listings/lst-008')).status, 200);
    const lines = listingLines(dir);
    lines.delete('lst-008');
    writeListings(dir, lines);
    await shipSnapshot(dir, path);
    assertError(await s.get('/v1/listings/lst-008'), 404, { code: 'not_found' });
    assert.equal((await s.get('/v1/listings/stats')).body.data.count, 8);
  });
});

describe('snapshot failure while serving', () => {
  let server: TestServer;
  let path: string;
  let good: string;
  before(async () => {
    path = (await buildTestSnapshot()).path;
    good = join(tempDir(), 'good-copy.db');
    copyFileSync(path, good);
    server = await startServer({ SNAPSHOT_PATH: path, SNAPSHOT_CHECK_MS: '1' });
  });
  after(async () => {
    await server?.close();
  });

  const DATA = [
    '/v1/listings',
    '/v1/listings/lst-001',
    '/v1/listings/stats',
    '/v1/listings/lst-001/similar',
    '/v1/owners',
    '/v1/locations',
    '/v1/market/metrics',
  ];
  const assertUnavailable = async () => {
    for (const p of DATA) {
      const res = await server.get(p);
      assertError(res, 503, { code: 'service_unavailable' });
      assert.ok(res.headers.get('retry-after'), `${p}: Retry-After`);
    }
  };
  const assertServing = async () => {
    for (const p of DATA) assert.equal((await server.get(p)).status, 200, p);
  };
  /** Puts `file` in place of the snapshot by rename, as a swap would. */
  const renameIn = async (file: string) => {
    const tmp = `${path}.incoming`;
    copyFileSync(file, tmp);
    renameSync(tmp, path);
    await sleep(5);
  };

  it('serves normally before anything happens', async () => {
    await assertServing();
  });
  it('answers 503 with the error envelope when the snapshot file is deleted', async () => {
    unlinkSync(path);
    await sleep(5);
    await assertUnavailable();
    assert.ok(server.logs.some((l) => l.msg === 'snapshot unavailable; failing closed'));
  });
  it('keeps answering ping while the snapshot is gone', async () => {
    const res = await server.get('/v1/ping');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
  });
  it('serves again when a good file is renamed back in', async () => {
    await renameIn(good);
    await assertServing();
    assert.deepEqual((await server.get('/v1/listings/lst-001')).body.data.id, 'lst-001');
  });
  it('answers 503 (never 500) when the snapshot is replaced by garbage', async () => {
    const garbage = join(tempDir(), 'garbage.db');
    writeFileSync(garbage, 'this is not a database '.repeat(500));
    await renameIn(garbage);
    await assertUnavailable();
  });
  it('answers 503 when the snapshot is replaced by an empty file', async () => {
    const empty = join(tempDir(), 'empty.db');
    writeFileSync(empty, '');
    await renameIn(empty);
    await assertUnavailable();
  });
  it('answers 503 when the snapshot is replaced by a file of another schema version', async () => {
    await renameIn(wrongVersionCopy(good));
    await assertUnavailable();
  });
  it('recovers again after every failure once a good file is back', async () => {
    await renameIn(good);
    await assertServing();
    assert.equal((await server.get('/v1/listings/stats')).body.data.count, 9);
  });
});

/** A copy of a good snapshot whose schema_version is one this server does not read. */
function wrongVersionCopy(good: string): string {
  const file = join(tempDir(), 'other-version.db');
  copyFileSync(good, file);
  const db = new Database(file);
  db.prepare("UPDATE snapshot_meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION + 1));
  db.close();
  return file;
}
/** An SQLite file that is not a snapshot. */
function otherSqlite(): string {
  const file = join(tempDir(), 'other.db');
  const db = new Database(file);
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('hello')");
  db.close();
  return file;
}

describe('start-up refusal: new SnapshotSource(path)', () => {
  let good: string;
  before(async () => {
    good = (await buildTestSnapshot()).path;
  });

  const refuses = (path: string, re: RegExp) =>
    assert.throws(
      () => new SnapshotSource(path),
      (e: unknown) => e instanceof SnapshotError && re.test(e.message) && e.message.includes(path),
    );

  it('opens a good snapshot and reads its meta', () => {
    const s = new SnapshotSource(good);
    try {
      assert.equal(s.get().meta.schema_version, SCHEMA_VERSION);
      assert.match(s.get().meta.snapshot_id, /^snap_/);
    } finally {
      s.close();
    }
  });
  it('throws SnapshotError for a missing file', () => {
    refuses(join(tempDir(), 'missing.db'), /cannot open/);
  });
  it('throws SnapshotError for an SQLite file that is not a snapshot', () => {
    refuses(otherSqlite(), /not a snapshot/);
  });
  it('throws SnapshotError for a wrong schema_version', () => {
    refuses(wrongVersionCopy(good), new RegExp(`schema version ${SCHEMA_VERSION + 1}`));
  });
  it('throws SnapshotError for a file that is not SQLite at all', () => {
    const file = join(tempDir(), 'garbage.db');
    writeFileSync(file, 'garbage '.repeat(1000));
    refuses(file, /./);
  });
  it('throws SnapshotError for an empty file', () => {
    const file = join(tempDir(), 'empty.db');
    writeFileSync(file, '');
    refuses(file, /not a snapshot/);
  });
});

describe('start-up refusal: npx tsx src/main.ts', () => {
  const tsx = createRequire(import.meta.url).resolve('tsx/cli');
  /** Runs the real entry point (what `npx tsx src/main.ts` runs) with the given environment; resolves on exit. */
  function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_TEST')));
    const child = spawn(process.execPath, [tsx, 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...base,
        HOST: '127.0.0.1',
        PORT: '0',
        DEV_KEY: '0',
        LOG_REQUESTS: '0',
        KEYS_PATH: join(tempDir(), 'keys.db'),
        ...env,
      },
    });
    let stderr = '',
      stdout = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    const timer = setTimeout(() => child.kill(), 20_000);
    return new Promise((resolve) =>
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr, stdout });
      }),
    );
  }
  const oneLine = (s: string) => {
    const lines = s.split('\n').filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1, `one line on stderr, got: ${s}`);
    return lines[0];
  };

  // Both runs start together (each is a cold tsx start). The kinds of bad file are covered one by one above.
  let bad: string;
  let runs: Promise<{ code: number | null; stderr: string; stdout: string }>[];
  before(async () => {
    const good = (await buildTestSnapshot()).path;
    bad = otherSqlite();
    runs = [runMain({ SNAPSHOT_PATH: bad }), runMain({ PORT: 'abc', SNAPSHOT_PATH: good })];
  });

  it('exits non-zero with a one-line message naming the file when SNAPSHOT_PATH is not a snapshot', async () => {
    const r = await runs[0];
    assert.ok(r.code !== null, 'exited by itself (no hang)');
    assert.notEqual(r.code, 0, 'exit code');
    const line = oneLine(r.stderr);
    assert.match(line, /^start-up failed: /);
    assert.ok(line.includes(bad), `the message names the file: ${line}`);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });
  it('exits non-zero with a one-line message naming PORT for PORT=abc', async () => {
    const r = await runs[1];
    assert.ok(r.code !== null);
    assert.notEqual(r.code, 0);
    const line = oneLine(r.stderr);
    assert.match(line, /^start-up failed: /);
    assert.match(line, /\bPORT\b/);
  });
});
