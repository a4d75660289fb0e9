// SnapshotSource on its own: what it says of a file it cannot open, a valid snapshot copied over the served file in
// place, a touch, SIGHUP's second look; and start-up refusing a bad file (SnapshotSource, and src/main.ts run).
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, renameSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../snapshot-format/schema.ts';
import { SnapshotUnavailable } from '../src/errors.ts';
import { SnapshotError, SnapshotSource } from '../src/snapshot/source.ts';
import { otherSqlite, truncatedCopy, walCopy, wrongVersionCopy } from './support/bad-snapshots.ts';
import { tempDir } from './support/files.ts';
import { runService } from './support/processes.ts';
import { startServer } from './support/server.ts';
import { assertError } from './support/shapes.ts';
import { editedSource, fixtureSnapshot, snapshotCopy } from './support/snapshots.ts';

let good: string; // the fixture's snapshot, shared: read only
before(async () => {
  good = (await fixtureSnapshot()).path;
});

describe('snapshot open errors', () => {
  it('reports a native addon that does not load as itself, not as a bad snapshot file', async () => {
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
    const bytes = readFileSync(good);
    const cut = truncatedCopy(good, bytes.length - 4096);
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

describe('a valid snapshot copied over the served file in place', () => {
  /** Another valid snapshot of other data (one listing fewer) than the fixture's, and a private copy of the fixture's. */
  async function twoSnapshots() {
    const b = (await fixtureSnapshot(editedSource((lines) => lines.delete('lst-002')))).path;
    return { b, path: await snapshotCopy() };
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

describe('start-up refusal: new SnapshotSource(path)', () => {
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

describe('start-up refusal: the entry point (src/main.ts)', () => {
  const oneLine = (s: string) => {
    const lines = s.split('\n').filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1, `one line on stderr, got: ${s}`);
    return lines[0];
  };

  // Both runs start together. The kinds of bad file are covered one by one above.
  let bad: string;
  let runs: ReturnType<typeof runService>[];
  before(() => {
    bad = otherSqlite();
    runs = [runService({ SNAPSHOT_PATH: bad }), runService({ PORT: 'abc' })];
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
