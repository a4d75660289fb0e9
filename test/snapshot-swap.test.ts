// The snapshot file under a running service: a walk survives a swap; a missing or broken replacement is refused and the
// last good snapshot goes on serving; the served file changed in place stops data answers until a valid one is back.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, renameSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { damagedCopy, walCopy, wrongVersionCopy } from './support/bad-snapshots.ts';
import { tempDir } from './support/files.ts';
import { assertAscendingIds } from './support/model.ts';
import { startServer, type TestServer, useServer } from './support/server.ts';
import { assertError } from './support/shapes.ts';
import { editedSource, fixtureSnapshot, snapshotCopy } from './support/snapshots.ts';

/** A copy of lst-001's record under another id. */
function cloneOf(lines: Map<string, string>, id: string): string {
  const rec = JSON.parse(lines.get('lst-001')!);
  return JSON.stringify({ ...rec, id, slug: `${id}-slug`, title: { en: `Listing ${id}` } });
}
/** Compiles `dir` (once: cached) into a new file beside `path` and renames it over `path`, as an operator ships one. */
async function shipSnapshot(dir: string, path: string, s: TestServer) {
  await snapshotCopy((await fixtureSnapshot(dir)).path, `${path}.next`);
  renameSync(`${path}.next`, path);
  assert.equal(await s.snapshots.refresh(), true, 'the new snapshot is swapped in');
}

describe('paging across a snapshot swap', () => {
  let server: TestServer | undefined;
  after(async () => {
    await server?.close();
  });

  async function setUp() {
    const path = await snapshotCopy();
    await server?.close();
    server = await startServer({ SNAPSHOT_PATH: path, SNAPSHOT_CHECK_MS: '1' });
    const first = await server.get('/v1/listings?limit=3');
    assert.deepEqual(
      first.body.data.map((x: any) => x.id),
      ['lst-001', 'lst-002', 'lst-003'],
    );
    return {
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
    const { path, s, cursor, firstIds } = await setUp();
    const dir = editedSource((lines) => {
      lines.set('lst-0025', cloneOf(lines, 'lst-0025')); // sorts before the cursor (after lst-002): not seen in this walk
      lines.set('lst-0035', cloneOf(lines, 'lst-0035')); // sorts after the cursor (after lst-003): seen
    });
    await shipSnapshot(dir, path, s);
    assert.equal((await s.get('/v1/listings/lst-0035')).status, 200, 'the new snapshot is served');
    const after = await rest(s, cursor);
    assert.deepEqual(after, ['lst-0035', 'lst-007', 'lst-008', 'lst-009', 'lst-010', 'lst-011', 'lst-012']);
    assertAscendingIds([...firstIds, ...after].map((id) => ({ id })));
    assert.ok(s.logs.some((l) => l.msg === 'snapshot swapped in'));
  });

  it("continues after the swap even when the cursor's own listing is gone from the new snapshot", async () => {
    const { path, s, cursor } = await setUp();
    const dir = editedSource((lines) => {
      lines.delete('lst-003');
      lines.delete('lst-008');
    });
    await shipSnapshot(dir, path, s);
    assert.deepEqual(await rest(s, cursor), ['lst-007', 'lst-009', 'lst-010', 'lst-011', 'lst-012']);
  });

  it('answers 404 for a listing that vanished in the new snapshot', async () => {
    const { path, s } = await setUp();
    assert.equal((await s.get('/v1/listings/lst-008')).status, 200);
    await shipSnapshot(
      editedSource((lines) => lines.delete('lst-008')),
      path,
      s,
    );
    assertError(await s.get('/v1/listings/lst-008'), 404, { code: 'not_found' });
    assert.equal((await s.get('/v1/listings/stats')).body.data.count, 8);
  });
});

/** A server on a private copy of the fixture's snapshot (`f.path`), the shared one kept aside (`f.good`). */
function servedSnapshot(checkMs: string) {
  const f = { server: {} as TestServer, path: '', good: '' };
  before(async () => {
    f.good = (await fixtureSnapshot()).path;
  });
  f.server = useServer(async () => {
    f.path = await snapshotCopy();
    return { SNAPSHOT_PATH: f.path, SNAPSHOT_CHECK_MS: checkMs };
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

describe('the served file touched again and again (its time changed, never its content)', () => {
  const f = servedSnapshot('20');

  it('keeps serving, with no 503 and no refusal, while touches overlap the checks of the file', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = new Date(Date.now() + i * 1000); // a new time each turn: each touch starts another check
      utimesSync(f.path, t, t);
      statuses.push((await f.server.get('/v1/listings?limit=1')).status);
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [],
    );
    assert.deepEqual(
      f.server.logs.filter((l) => /changed in place/.test(String(l.msg))),
      [],
      'a touch is never taken for a write in place',
    );
    assert.equal((await readyzOf(f.server)).body.status, 'ready');
  });
});
