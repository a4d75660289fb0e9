// npm test's runner and reporter (test/run.ts, test/reporter.ts) on sample files: the suites skipped as a whole
// counted and named, the slowest files listed, the last run's slowest files started first, a failure or a missing
// file a failed run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, tempDir } from './support/files.ts';

/** `node --import tsx test/run.ts files…` with TEST_CACHE_DIR `cache` (a new folder unless given). */
function runner(files: string[], env: Record<string, string> = {}, cache = tempDir()) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_TEST')));
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'run.ts'), ...files], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...base, TEST_CACHE_DIR: cache, ...env },
  });
  return { ...r, lines: r.stdout.trimEnd().split('\n') };
}

/** A sample test file in a folder of its own. */
function sample(name: string, text: string): string {
  const file = join(tempDir(), name);
  writeFileSync(file, `import { describe, it } from 'node:test';\n${text}`);
  return file;
}

describe('npm test runner and reporter', () => {
  it('names each suite skipped as a whole, with its reason, and the slowest files, before the closing summary, which stays last', () => {
    const file = sample(
      'sample.test.mjs',
      `describe('needs a part', { skip: 'x-server is missing: install it with apt-get install x-server' }, () => {
  it('one', () => {});
  it('two', () => {});
});
it('runs', () => {});
`,
    );
    const r = runner([file]);
    assert.equal(r.status, 0, r.stderr);
    const at = r.lines.indexOf('# skipped suites 1');
    assert.ok(at !== -1, r.stdout);
    assert.equal(
      r.lines[at + 1],
      '# skipped suite: needs a part (x-server is missing: install it with apt-get install x-server)',
    );
    assert.equal(r.lines[at + 2], '# slowest files 1');
    assert.match(r.lines[at + 3], /^# slow file: +\d+\.\d s \S*sample\.test\.mjs$/, 'the file with its wall time');
    assert.equal(r.lines[at + 4], '# tests 1');
    assert.match(r.lines.at(-1)!, /^# duration_ms /, 'the runner closes with its own summary');
    assert.ok(r.lines.includes('# skipped 0'), "node's own count is kept as it is");
  });

  it('starts the files that took longest last time first', () => {
    const order = join(tempDir(), 'order.txt');
    const files = ['a', 'b', 'c'].map((n) =>
      sample(
        `${n}.test.mjs`,
        `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(order)}, '${n}');\nit('${n}', () => {});\n`,
      ),
    );
    const cache = tempDir();
    const last = { [relative(ROOT, files[1])]: 9000, [relative(ROOT, files[0])]: 10 }; // c: not timed yet
    writeFileSync(join(cache, 'durations.json'), JSON.stringify(last));
    const r = runner(files, { TEST_CONCURRENCY: '1' }, cache);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(order, 'utf8'), 'cba', 'a file not timed yet, then the slowest');
  });

  it('fails the run when a test fails, and when a named file does not exist (never a run of no tests)', () => {
    const failing = runner([sample('fails.test.mjs', "it('fails', () => { throw new Error('no'); });\n")]);
    assert.equal(failing.status, 1);
    assert.ok(failing.lines.includes('# fail 1'), failing.stdout);
    const none = runner([join(tempDir(), 'nothing.test.ts')]);
    assert.equal(none.status, 1);
    assert.match(none.stderr, /^test\/run\.ts: no such file: .*nothing\.test\.ts\n$/);
    assert.equal(none.stdout, '');
  });
});
