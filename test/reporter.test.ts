// npm test's reporter counts and names the suites skipped as a whole, which node's own summary does not count,
// and lists the slowest files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, tempDir } from './support/files.ts';

describe('npm test reporter', () => {
  it('names each suite skipped as a whole, with its reason, and the slowest files, before the closing summary, which stays last', () => {
    const dir = tempDir();
    const file = join(dir, 'sample.test.mjs');
    writeFileSync(
      file,
      `import { describe, it } from 'node:test';
describe('needs a part', { skip: 'x-server is missing: install it with apt-get install x-server' }, () => {
  it('one', () => {});
  it('two', () => {});
});
it('runs', () => {});
`,
    );
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--test',
        `--test-reporter=${join(ROOT, 'test', 'reporter.mjs')}`,
        '--test-reporter-destination=stdout',
        file,
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_TEST'))),
      },
    );
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    const at = lines.indexOf('# skipped suites 1');
    assert.ok(at !== -1, r.stdout);
    assert.equal(
      lines[at + 1],
      '# skipped suite: needs a part (x-server is missing: install it with apt-get install x-server)',
    );
    assert.equal(lines[at + 2], '# slowest files 1');
    assert.match(lines[at + 3], /^# slow file: +\d+\.\d s \S*sample\.test\.mjs$/, 'the file with its wall time');
    assert.equal(lines[at + 4], '# tests 1');
    assert.match(lines.at(-1)!, /^# duration_ms /, 'the runner closes with its own summary');
    assert.ok(lines.includes('# skipped 0'), "node's own count is kept as it is");
  });
});
