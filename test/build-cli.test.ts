// The snapshot compiler's command line (build-snapshot/main.ts): its exit codes and summary, its problem lines, and
// signals: an interrupted build leaves the target as it was and no temporary file. The cases are independent
// processes, so they run at once.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { buildSnapshot } from '../build-snapshot/compile.ts';
import { stopBuilds } from '../build-snapshot/output.ts';
import { temps } from './support/builds.ts';
import { BASIC, copyFixture, ROOT, tempDir } from './support/files.ts';
import { runScript, sleep, until } from './support/processes.ts';
import { generatedSource, snapshotCopy } from './support/snapshots.ts';

const cli = (args: string[]) => runScript('build-snapshot/main.ts', args);

/** The command line building `src` into `out`, not waited for: its stderr, and the signal it ended by. */
function startBuild(src: string, out: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'build-snapshot/main.ts', '--source', src, '--out', out], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const r = {
    child,
    stderr: '',
    exited: new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, s) => r(s))),
  };
  child.stderr.on('data', (d) => {
    r.stderr += d;
  });
  return r;
}

/** A fixture copy whose `file` is a FIFO nobody writes: the build stops there, with its temporary file written. */
function fifoSource(file: string) {
  const src = copyFixture();
  rmSync(join(src, file));
  assert.equal(spawnSync('mkfifo', [join(src, file)]).status, 0, 'mkfifo');
  return src;
}

describe('snapshot compiler: command line', { concurrency: true }, () => {
  it('exits 0 and prints a one-line summary on success', async () => {
    const out = join(tempDir(), 'ok.db');
    const r = await cli(['--source', BASIC, '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /build-snapshot: OK snap_[0-9a-f]{24} → .*ok\.db \([\d.]+ MiB\) in [\d.]+s; stored\/valid: locations 8\/8, owners 4\/5, listings 9\/12/,
    );
    assert.ok(existsSync(out));
  });

  it('exits 1, prints file:line problems and leaves no output on bad data', async () => {
    const src = copyFixture();
    writeFileSync(
      join(src, 'metrics.ndjson'),
      '{"id":"m","name":{"en":"M"},"unit":"EUR","aggregation":"mode","min_sample_size":0}\n',
    );
    const out = join(tempDir(), 'bad.db');
    const r = await cli(['--source', src, '--out', out]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /metrics\.ndjson:1: aggregation: /);
    assert.match(r.stderr, /metrics\.ndjson:1: min_sample_size: must be at least 1/);
    assert.match(r.stderr, /FAILED with 2 problems after .* was not changed/);
    assert.ok(!existsSync(out));
  });

  it('writes control characters of the source data in a problem line as escapes, never raw to the terminal', async () => {
    const src = copyFixture();
    writeFileSync(
      join(src, 'metrics.ndjson'),
      '{"id":"m","name":{"en":"M"},"unit":"EUR","aggregation":"\\u001b]0;PWNED\\u0007\\u001b[2J","min_sample_size":1}\n',
    );
    const r = await cli(['--source', src, '--out', join(tempDir(), 'bad.db')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /metrics\.ndjson:1: aggregation: .*\\u001b\]0;PWNED\\u0007\\u001b\[2J/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the raw escape must not be there
    assert.doesNotMatch(r.stderr, /[\u0000-\u0008\u000b-\u001f\u007f]/);
  });

  it('removes its temporary file when interrupted (SIGINT, SIGTERM), leaving the target as it was', async () => {
    await Promise.all(
      (['SIGINT', 'SIGTERM'] as const).map(async (signal) => {
        const src = fifoSource('listings.ndjson');
        const out = await snapshotCopy();
        const before = readFileSync(out);
        const build = startBuild(src, out);
        await until('the build to get as far as its temporary file', () => temps(dirname(out)).length > 0, 20_000);
        build.child.kill(signal);
        const ended = await build.exited;
        assert.equal(ended, signal, `ends by ${signal} (a shell's status 128 + its number): ${build.stderr}`);
        assert.match(build.stderr, new RegExp(`interrupted \\(${signal}\\); .* was not changed`));
        assert.deepEqual(temps(dirname(out)), [], 'no temporary file is left behind');
        assert.ok(readFileSync(out).equals(before), 'the target is byte-identical');
      }),
    );
  });

  // listings.ndjson is read by the parser thread, the other files by the main thread (which then must not
  // block in a read: the signal handler runs on it).
  for (const fifo of ['listings.ndjson', 'owners.ndjson'])
    it(`stops on SIGTERM also while the build waits in a read of ${fifo} (a FIFO nobody writes)`, async () => {
      const out = join(tempDir(), 'snapshot.db');
      const build = startBuild(fifoSource(fifo), out);
      try {
        await until('the temporary file', () => temps(dirname(out)).length > 0, 20_000).catch(() => {});
        // By now the parser thread is blocked opening the FIFO.
        await sleep(3000);
        build.child.kill('SIGTERM');
        assert.equal(
          await Promise.race([build.exited, sleep(15_000).then(() => 'still running after 15 s')]),
          'SIGTERM',
        );
        assert.deepEqual(temps(dirname(out)), []);
      } finally {
        build.child.kill('SIGKILL'); // a failed assertion must not leave a build blocked on the FIFO
      }
    });

  it('does not replace the target when stopped during its last synchronous stretch (ANALYZE, integrity_check)', async () => {
    const out = await snapshotCopy();
    const before = readFileSync(out);
    // What a signal handler does when the signal arrived while integrity_check ran.
    const r = await buildSnapshot({
      source: BASIC,
      out,
      log: (l) => {
        if (l.endsWith('] checking')) stopBuilds();
      },
    });
    assert.equal(r.ok, false);
    assert.match(r.problems.join('\n'), /\(interrupted\): stopped by a signal before the snapshot replaced the target/);
    assert.ok(readFileSync(out).equals(before), 'the target is byte-identical');
    assert.deepEqual(temps(dirname(out)), []);
    const again = await buildSnapshot({ source: BASIC, out, log: () => {} });
    assert.equal(again.ok, true, 'a later build in the same process is not stopped');
  });

  it('tells the truth about the target when SIGTERM arrives as the build finishes', async () => {
    const dir = tempDir();
    const out = await snapshotCopy(undefined, join(dir, 'snapshot.db'));
    const before = readFileSync(out);
    const build = startBuild(generatedSource(8000, 1).dir, out);
    // The signal is sent when the last phase starts: it arrives while integrity_check runs, or just after.
    build.child.stderr.on('data', () => {
      if (/\] checking/.test(build.stderr)) build.child.kill('SIGTERM');
    });
    const signal = await build.exited;
    const { stderr } = build;
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
    assert.deepEqual(temps(dir), []);
  });

  it('exits 2 on unknown arguments', async () => {
    const r = await cli(['--sauce', 'x']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^build-snapshot: unknown option --sauce\nusage: npm run build-snapshot/);
  });
  it('exits 2 on a repeated option (parseArgs would keep the last one silently)', async () => {
    const r = await cli(['--out', join(tempDir(), 'a.db'), '--out', join(tempDir(), 'b.db')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--out is given more than once\n.*usage: npm run build-snapshot/s);
  });
  it('exits 2 on an empty --out or --source (a variable that was not set)', async () => {
    const cases = [
      ['out', ['--out', '']],
      ['source', ['--source', ' ']],
    ] as const;
    const runs = await Promise.all(cases.map(([, args]) => cli([...args])));
    for (const [i, [flag]] of cases.entries()) {
      assert.equal(runs[i].code, 2, runs[i].stderr);
      assert.match(runs[i].stderr, new RegExp(`--${flag} is empty\\n.*usage: npm run build-snapshot`, 's'));
    }
  });
});
