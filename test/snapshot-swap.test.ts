// The snapshot file under a running service: a walk survives a swap; a missing or broken replacement is refused and the
// last good snapshot goes on serving; start-up refuses a bad file (SnapshotSource directly, and `src/main.ts` spawned).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, renameSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../snapshot-format/schema.ts';
import { SnapshotUnavailable } from '../src/errors.ts';
import { SnapshotError, SnapshotSource } from '../src/snapshot/source.ts';
import { copyFixture, ROOT, tempDir } from './support/files.ts';
import { assertAscendingIds } from './support/model.ts';
import { startServer, type TestServer } from './support/server.ts';
import { assertError } from './support/shapes.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

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
async function shipSnapshot(dir: string, path: string, s: TestServer) {
  const next = `${path}.next`;
  await buildTestSnapshot(dir, next);
  renameSync(next, path);
  assert.equal(await s.snapshots.refresh(), true, 'the new snapshot is swapped in');
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

describe('snapshot start-up errors name the problem as an operator sees it', () => {
  it('says no file, a folder, or a truncated file (one page short), not what SQLite makes of them', async () => {
    const good = (await buildTestSnapshot()).path;
    const cut = join(tempDir(), 'cut.db');
    const bytes = readFileSync(good);
    writeFileSync(cut, bytes.subarray(0, bytes.length - 4096));
    for (const [path, reason] of [
      [join(tempDir(), 'missing.db'), /there is no file at this path/],
      [tempDir(), /it is a folder, not a snapshot file/],
      [cut, new RegExp(`it is truncated \\(${bytes.length - 4096} of ${bytes.length} bytes\\)`)],
    ] as const)
      assert.throws(
        () => new SnapshotSource(path),
        (e: Error) => e instanceof SnapshotError && reason.test(e.message) && e.message.includes(path),
        String(reason),
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
    await shipSnapshot(dir, path, s);
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
    await shipSnapshot(dir, path, s);
    assert.deepEqual(await rest(s, cursor), ['lst-007', 'lst-009', 'lst-010', 'lst-011', 'lst-012']);
  });

  it('answers 404 for a listing that vanished in the new snapshot', async () => {
    const { dir, path, s } = await setUp();
    assert.equal((await s.get('/v1/listings/lst-008')).status, 200);
    const lines = listingLines(dir);
    lines.delete('lst-008');
    writeListings(dir, lines);
    await shipSnapshot(dir, path, s);
    assertError(await s.get('/v1/listings/lst-008'), 404, { code: 'not_found' });
    assert.equal((await s.get('/v1/listings/stats')).body.data.count, 8);
  });
});

/** A server on its own fresh test snapshot (`path`), with a copy kept aside (`good`): started before, closed after. */
function servedSnapshot(checkMs: string) {
  const f = { server: undefined as unknown as TestServer, path: '', good: '' };
  before(async () => {
    f.path = (await buildTestSnapshot()).path;
    f.good = join(tempDir(), 'good-copy.db');
    copyFileSync(f.path, f.good);
    f.server = await startServer({ SNAPSHOT_PATH: f.path, SNAPSHOT_CHECK_MS: checkMs });
  });
  after(async () => {
    await f.server?.close();
  });
  return f;
}
/** GET /readyz: its status and body. */
async function readyzOf(server: TestServer) {
  const r = await fetch(`${server.url}/readyz`);
  return { status: r.status, body: await r.json() };
}

describe('snapshot failure while serving: the last good snapshot keeps serving', () => {
  const f = servedSnapshot('1');

  const DATA = [
    '/v1/listings',
    '/v1/listings/lst-001',
    '/v1/listings/stats',
    '/v1/listings/lst-001/similar',
    '/v1/owners',
    '/v1/locations',
    '/v1/market/metrics',
  ];
  const assertServing = async () => {
    for (const p of DATA) assert.equal((await f.server.get(p)).status, 200, p);
  };
  const readyz = () => readyzOf(f.server);
  const refusedCount = async () =>
    (await f.server.metrics.refused.get()).values.reduce((n: number, v: { value: number }) => n + v.value, 0);
  /** Puts `file` in place of the snapshot by rename, as a swap would, and has the server look at it now. */
  const renameIn = async (file: string) => {
    const tmp = `${f.path}.incoming`;
    copyFileSync(file, tmp);
    renameSync(tmp, f.path);
    return f.server.snapshots.refresh();
  };
  /** Refuses `file`: no swap, a refusal logged, counted and shown by /readyz, and every data request still 200. */
  const assertRefused = async (file: string, reason: RegExp) => {
    const before = await refusedCount();
    assert.equal(await renameIn(file), false, 'not swapped in');
    await assertServing();
    assert.equal(await refusedCount(), before + 1, 'counted');
    const r = await readyz();
    assert.equal(r.status, 200, 'still ready: a valid snapshot is served');
    assert.equal(r.body.candidate.state, 'refused');
    assert.match(r.body.candidate.reason, reason);
    assert.ok(f.server.logs.some((l) => l.msg === `snapshot candidate refused; still serving ${r.body.snapshot.id}`));
  };

  it('serves normally before anything happens, and is ready', async () => {
    await assertServing();
    const r = await readyz();
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ready');
    assert.equal(r.body.candidate, null);
  });
  it('keeps serving the open snapshot when its file is deleted, and says so in /readyz', async () => {
    unlinkSync(f.path);
    await f.server.snapshots.refresh();
    await assertServing();
    const r = await readyz();
    assert.equal(r.status, 200);
    assert.equal(r.body.candidate.state, 'missing');
    assert.ok(f.server.logs.some((l) => String(l.msg).startsWith('snapshot file is missing; still serving')));
  });
  it('keeps answering ping while the file is gone', async () => {
    const res = await f.server.get('/v1/ping');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
  });
  it('swaps in a good file renamed back in', async () => {
    assert.equal(await renameIn(f.good), true);
    await assertServing();
    assert.equal((await readyz()).body.candidate, null);
  });
  it('refuses garbage', async () => {
    const garbage = join(tempDir(), 'garbage.db');
    writeFileSync(garbage, 'this is not a database '.repeat(500));
    await assertRefused(garbage, /not a database|file is not a database|quick_check/);
  });
  it('refuses an empty file', async () => {
    const empty = join(tempDir(), 'empty.db');
    writeFileSync(empty, '');
    await assertRefused(empty, /.+/);
  });
  it('refuses a snapshot switched to WAL mode by hand, without opening it (no -wal or -shm beside it)', async () => {
    const wal = walCopy(f.good);
    await assertRefused(wal, /WAL mode/);
    assert.ok(!existsSync(`${f.path}-wal`) && !existsSync(`${f.path}-shm`), 'nothing written beside the snapshot');
  });
  it('refuses a file of another schema version', async () => {
    await assertRefused(wrongVersionCopy(f.good), /schema version/);
  });
  it('refuses a truncated file', async () => {
    const cut = join(tempDir(), 'truncated.db');
    const bytes = readFileSync(f.good);
    writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await assertRefused(cut, /^cannot open snapshot .*: it is truncated \(\d+ of \d+ bytes\)$/);
  });
  it('refuses a file that fails quick_check (a damaged page)', async () => {
    await assertRefused(damagedCopy(f.good), /quick_check/);
  });
  it('swaps in a good file again after every refusal', async () => {
    assert.equal(await renameIn(f.good), true);
    await assertServing();
    assert.equal((await f.server.get('/v1/listings/stats')).body.data.count, 9);
    assert.equal((await readyz()).body.candidate, null);
  });
});

describe('the served file changed in place, and a replacement noticed without traffic', () => {
  const f = servedSnapshot('20');
  const readyz = () => readyzOf(f.server);
  const swaps = () => f.server.logs.filter((l) => l.msg === 'snapshot swapped in').length;

  it('stops serving data (503) and is not ready when its own file is overwritten in place with a bad one', async () => {
    assert.equal((await f.server.get('/v1/listings')).status, 200);
    // Written into the same inode (no rename): the open connection now reads other pages than it opened.
    writeFileSync(f.path, readFileSync(damagedCopy(f.good)));
    assert.equal(await f.server.snapshots.refresh(), false, 'the changed file is refused');
    for (const p of ['/v1/listings', '/v1/listings/lst-001', '/v1/listings/stats']) {
      const res = await f.server.get(p);
      assertError(res, 503, { code: 'service_unavailable' });
      assert.ok(res.headers.get('retry-after'), p);
    }
    const r = await readyz();
    assert.equal(r.status, 503);
    assert.equal(r.body.status, 'snapshot_damaged');
    assert.match(r.body.damaged, /changed in place/);
    assert.equal(r.body.candidate.state, 'refused');
    assert.ok(f.server.logs.some((l) => l.level === 'error' && /changed in place/.test(String(l.msg))));
    const refused = f.server.logs.filter((l) => /refused/.test(String(l.msg)));
    assert.ok(refused.length > 0);
    for (const l of refused) assert.match(String(l.msg), /data requests get 503/, 'not "still serving": nothing is');
    assert.equal((await f.server.get('/v1/ping')).status, 200, 'ping reports the process');
  });
  it('serves again once a valid snapshot is copied over it, in place too', async () => {
    copyFileSync(f.good, f.path);
    assert.equal(await f.server.snapshots.refresh(), true);
    assert.equal((await f.server.get('/v1/listings')).status, 200);
    const r = await readyz();
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ready');
    assert.equal(r.body.damaged, undefined);
  });
  it('keeps serving when another file is renamed over it (the open file is intact)', async () => {
    const garbage = join(tempDir(), 'garbage.db');
    writeFileSync(garbage, 'this is not a database '.repeat(500));
    renameSync(garbage, f.path);
    assert.equal(await f.server.snapshots.refresh(), false);
    assert.equal((await f.server.get('/v1/listings')).status, 200);
    assert.equal((await readyz()).body.status, 'ready');
  });
  it('swaps in a file renamed into place within SNAPSHOT_CHECK_MS with no request at all', async () => {
    const before = swaps();
    const tmp = `${f.path}.incoming`;
    copyFileSync(f.good, tmp);
    renameSync(tmp, f.path);
    const deadline = Date.now() + 5000;
    while (swaps() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(swaps(), before + 1, 'swapped by the timer: no data request, no refresh() called');
    assert.equal((await readyz()).body.candidate, null);
  });
});

describe('a valid snapshot copied over the served file in place', () => {
  /** The fixture's snapshot, and another valid one of other data (one listing fewer), both outside the served path. */
  async function twoSnapshots() {
    const a = (await buildTestSnapshot()).path;
    const dir = copyFixture();
    const lines = listingLines(dir);
    lines.delete('lst-002');
    writeListings(dir, lines);
    const b = join(tempDir(), 'other.db');
    await buildTestSnapshot(dir, b);
    const path = join(tempDir(), 'served.db');
    copyFileSync(a, path);
    return { a, b, path };
  }
  const idOf = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT value FROM snapshot_meta WHERE key = 'snapshot_id'").pluck().get() as string;
    } finally {
      db.close();
    }
  };

  it('answers no data request from the old connection once the change is seen (503 until the new file is swapped in)', async () => {
    const { b, path } = await twoSnapshots();
    const logs: Record<string, unknown>[] = [];
    const src = new SnapshotSource(path, { checkIntervalMs: 60_000, log: (l) => logs.push(l) });
    try {
      const before = src.get().meta.snapshot_id;
      writeFileSync(path, readFileSync(b)); // the same inode: truncated, then written (cp does the same)
      const swapped = src.refresh(); // what the watch or the interval calls; the quick_check runs off the thread
      assert.throws(
        () => src.get(),
        (e) => e instanceof SnapshotUnavailable,
        'the old connection would read the new pages beside its cached old ones',
      );
      assert.match(src.damaged ?? '', /changed in place/);
      assert.ok(logs.some((l) => l.level === 'error' && /changed in place/.test(String(l.msg))));
      assert.equal(await swapped, true, 'then the new file, which is valid, is swapped in');
      assert.equal(src.damaged, null);
      assert.equal(src.get().meta.snapshot_id, idOf(b));
      assert.notEqual(src.get().meta.snapshot_id, before);
    } finally {
      src.close();
    }
  });

  it('keeps serving through a touch of the served file: checked, neither refused nor logged or counted as a swap', async () => {
    const { path } = await twoSnapshots();
    const logs: Record<string, unknown>[] = [];
    let swaps = 0;
    const src = new SnapshotSource(path, {
      checkIntervalMs: 60_000,
      log: (l) => logs.push(l),
      events: { swapped: () => swaps++ },
    });
    try {
      const served = src.get();
      const later = new Date(Date.now() + 5_000);
      utimesSync(path, later, later);
      const checked = src.refresh();
      assert.equal(src.damaged, null);
      assert.ok(src.get(), 'still served while it is checked');
      assert.equal(await checked, false, 'nothing swapped');
      assert.equal(src.get(), served, 'the same open snapshot');
      assert.equal(swaps, 0);
      assert.deepEqual(
        logs.map((l) => l.msg),
        ['snapshot file checked: it holds the snapshot being served (only its time changed); nothing to swap'],
      );
      assert.ok(src.upToDate, 'the touched file is the one served');
      assert.equal(await src.refresh(), false, 'and is not looked at again');
      assert.equal(logs.length, 1);
    } finally {
      src.close();
    }
  });

  it('looks again at a refused or missing file on SIGHUP (lookNow), which the interval does not', async () => {
    const { path } = await twoSnapshots();
    const logs: Record<string, unknown>[] = [];
    const src = new SnapshotSource(path, { checkIntervalMs: 60_000, log: (l) => logs.push(l) });
    const messages = () => logs.map((l) => `${l.msg}: ${l.reason ?? ''}`);
    try {
      const bytes = readFileSync(path);
      const cut = `${path}.cut`;
      writeFileSync(cut, bytes.subarray(0, bytes.length - 4096));
      renameSync(cut, path);
      assert.equal(await src.refresh(), false);
      assert.equal(await src.refresh(), false, 'the same file is not tried again');
      const refusal =
        /^snapshot candidate refused; still serving .*: cannot open snapshot .* it is truncated \(\d+ of \d+ bytes\)$/;
      assert.equal(messages().filter((m) => refusal.test(m)).length, 1, messages().join('\n'));
      assert.equal(await src.lookNow(), false);
      assert.equal(messages().filter((m) => refusal.test(m)).length, 2, 'checked again and refused again');
      unlinkSync(path);
      assert.equal(await src.refresh(), false);
      assert.equal(await src.lookNow(), false);
      assert.equal(messages().filter((m) => m.startsWith('snapshot file is missing; still serving')).length, 2);
      writeFileSync(path, bytes); // a good file at last (a new inode)
      assert.equal(await src.lookNow(), true);
      assert.ok(src.upToDate);
    } finally {
      src.close();
    }
  });

  it('is noticed at once without traffic or interval: the kernel tells of the write (SNAPSHOT_CHECK_MS 60 s)', async () => {
    const { b, path } = await twoSnapshots();
    const server = await startServer({ SNAPSHOT_PATH: path, SNAPSHOT_CHECK_MS: '60000' });
    try {
      copyFileSync(b, path); // in place: copyFileSync opens the existing file for writing, as cp does
      const swapped = () => server.logs.some((l) => l.msg === 'snapshot swapped in' && l.snapshot_id === idOf(b));
      const deadline = Date.now() + 5_000;
      while (!swapped() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(swapped(), 'swapped in with no refresh() call and no data request');
      assertError(await server.get('/v1/listings/lst-002'), 404, { code: 'not_found' });
      assert.equal((await server.get('/v1/listings/lst-001')).headers.get('x-snapshot-id'), idOf(b));
    } finally {
      await server.close();
    }
  });
});

/** A copy of a good snapshot with one page in the middle overwritten: it opens, but quick_check fails. */
function damagedCopy(good: string): string {
  const file = join(tempDir(), 'damaged.db');
  const bytes = Buffer.from(readFileSync(good));
  const db = new Database(good, { readonly: true });
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  // A page of the listings table's b-tree: its root page, so the damage is where quick_check walks.
  const root = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'listings'").pluck().get() as number;
  db.close();
  bytes.fill(0x5a, (root - 1) * pageSize + 8, root * pageSize - 8);
  writeFileSync(file, bytes);
  return file;
}

/** A copy of a good snapshot switched to WAL mode (its header says so), with no -wal or -shm file left. */
export function walCopy(good: string): string {
  const file = join(tempDir(), 'wal.db');
  copyFileSync(good, file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.close();
  assert.ok(!existsSync(`${file}-wal`) && !existsSync(`${file}-shm`));
  return file;
}

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
  it('throws SnapshotError for a snapshot switched to WAL mode, leaving nothing beside it', () => {
    const wal = walCopy(good);
    refuses(wal, /WAL mode/);
    assert.ok(!existsSync(`${wal}-wal`) && !existsSync(`${wal}-shm`));
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
