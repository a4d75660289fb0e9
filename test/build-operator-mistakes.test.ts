// The snapshot compiler and the operator's mistakes: a source saved in the wrong encoding, an empty or misplaced
// file, an --out that is not a snapshot, a folder it cannot write, leftovers of earlier builds, a full disk. Each
// build fails with a problem line saying what to do, and the snapshot it would have replaced stays as it was.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { buildSnapshot } from '../build-snapshot/compile.ts';
import { openKeyStore } from '../src/access/key-store.ts';
import { refusedBuild as refused, temps } from './support/builds.ts';
import { BASIC, copyFixture, FIXTURES, tempDir } from './support/files.ts';
import { run } from './support/processes.ts';
import { generatedSource, snapshotCopy } from './support/snapshots.ts';

describe('snapshot compiler: operator mistakes', () => {
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
    const keys = join(dir, 'keys.db');
    openKeyStore(keys, { create: true }).close();
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'operator notes');
    for (const out of [keys, text]) {
      const before = readFileSync(out);
      const r = await buildSnapshot({ source: BASIC, out, log: () => {} });
      assert.equal(r.ok, false);
      assert.match(r.problems[0], /:0: \(out\): exists and is not a snapshot of this service/);
      assert.ok(readFileSync(out).equals(before), `${out} untouched`);
    }
    const r = await buildSnapshot({ source: BASIC, out: dir, log: () => {} });
    assert.match(r.problems[0], /:0: \(out\): is a folder/);
    assert.deepEqual(temps(dir), []);
  });
  it("names the system's reason when the output folder refuses a new file, even to root (sysfs)", {
    skip: !existsSync('/sys/kernel') && 'needs Linux sysfs',
  }, async () => {
    const r = await buildSnapshot({ source: BASIC, out: '/sys/kernel/snapshot.db', log: () => {} });
    assert.equal(r.ok, false);
    // access(W_OK) says yes to root, and SQLite's own error was only "unable to open database file".
    assert.deepEqual(r.problems, [
      process.getuid?.() === 0
        ? '/sys/kernel/snapshot.db:0: (out): cannot create a file in the folder /sys/kernel (EACCES: permission denied; the new snapshot is written beside the target, then renamed)'
        : '/sys/kernel/snapshot.db:0: (out): the folder /sys/kernel is not writable (EACCES: permission denied; the new snapshot is written beside the target, then renamed)',
    ]);
  });
  it('removes temporary files of earlier builds whose process is gone, and keeps those of a running one', async () => {
    const out = await snapshotCopy();
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    const dead = join(dirname(out), `.snapshot.db.tmp-${gone}`);
    const alive = join(dirname(out), `.snapshot.db.tmp-${process.ppid}`);
    for (const f of [dead, `${dead}-journal`, `${dead}-wal`, `${dead}-shm`, `${dead}-fts`, alive, `${alive}-fts`])
      writeFileSync(f, 'x');
    const r = await buildSnapshot({ source: BASIC, out, log: () => {} });
    assert.equal(r.ok, true, r.problems.join('\n'));
    for (const f of [dead, `${dead}-journal`, `${dead}-wal`, `${dead}-shm`, `${dead}-fts`])
      assert.ok(!existsSync(f), `a dead build's files (its WAL and the full-text worker's too) are removed: ${f}`);
    assert.ok(existsSync(alive) && existsSync(`${alive}-fts`), "a running build's files are kept");
  });
  it('fails cleanly when a write is refused (a file-size limit, as a full disk would) during the listings load or after it: a (build) problem naming the likely cause, no temporary files, the target untouched', async () => {
    // 8,000 generated listings: the load outgrows the build's 4 MiB page cache, so SQLite writes during it.
    const source = generatedSource(8000, 1).dir;
    const runner = join(FIXTURES, 'build-under-file-limit.ts');
    // A file may grow to 3 MB (fails while listings are written) or 8 MB (fails after them): each over a
    // snapshot in a folder of its own, both at once.
    const seen = await Promise.all(
      [3000, 8000].map(async (kib) => {
        const dir = tempDir();
        const out = await snapshotCopy(undefined, join(dir, 'snapshot.db'));
        const before = readFileSync(out);
        const limited = await run(
          'bash',
          ['-c', `ulimit -f ${kib} && exec "$0" --import tsx "$@"`, process.execPath, runner, source, out],
          { timeout: 120_000 },
        );
        assert.equal(limited.code, 0, limited.stderr);
        const r = JSON.parse(limited.stdout) as { ok: boolean; problems: string[]; lastPhase: string };
        assert.equal(r.ok, false, `${kib} KiB: the build must fail`);
        assert.deepEqual(
          r.problems,
          [
            `${out}:0: (build): disk I/O error (a write was refused: a file-size limit such as ulimit -f, or a failing disk or file system)`,
          ],
          `${kib} KiB`,
        );
        assert.ok(readFileSync(out).equals(before), 'the previous snapshot is untouched');
        assert.deepEqual(temps(dir), [], 'no temporary files left');
        return r.lastPhase;
      }),
    );
    assert.equal(seen[0], 'reading listings.ndjson', 'the small limit is hit during the listings load');
    assert.notEqual(seen[1], 'reading listings.ndjson', 'the larger limit is hit after it');
  });
  it('reports a full-text file that cannot be created as a build problem, not as an unreadable source, and keeps the target', async () => {
    const out = await snapshotCopy();
    const before = readFileSync(out);
    // A folder where this build's full-text file goes (a leftover of an earlier process with the same pid).
    const blocked = join(dirname(out), `.snapshot.db.tmp-${process.pid}-fts`);
    mkdirSync(blocked);
    try {
      const r = await buildSnapshot({ source: BASIC, out, log: () => {} });
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
