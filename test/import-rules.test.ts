// The layout rules in biome.json (imports, function length) catch what they exist for: a small tree with each kind of
// violation fails them.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, tempDir } from './support/files.ts';
import { run } from './support/processes.ts';

const biome = join(dirname(createRequire(import.meta.url).resolve('@biomejs/biome/package.json')), 'bin', 'biome');

/** `biome lint` with the project's biome.json over a tree of files (path → source); its exit status and output. */
async function lint(files: Record<string, string>) {
  const dir = tempDir();
  copyFileSync(join(ROOT, 'biome.json'), join(dir, 'biome.json'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const r = await run(process.execPath, [biome, 'lint', '--vcs-enabled=false', '.'], { cwd: dir });
  return { status: r.code, out: r.stdout + r.stderr };
}

// Each case lints a tree of its own: the cases run at once.
describe('import rules (biome.json)', { concurrency: true }, () => {
  it('passes a tree whose imports go one way', async () => {
    const r = await lint({
      'snapshot-format/a.ts': 'export const A = 1;\n',
      'build-snapshot/b.ts': "import { A } from '../snapshot-format/a.ts';\n\nexport const B = A;\n",
      'src/c.ts': "import { A } from '../snapshot-format/a.ts';\n\nexport const C = A;\n",
    });
    assert.equal(r.status, 0, r.out);
  });

  it('fails on an import cycle, type-only imports included', async () => {
    const r = await lint({
      'src/a.ts': "import type { B } from './b.ts';\n\nexport type A = { b?: B };\n",
      'src/b.ts': "import type { A } from './a.ts';\n\nexport type B = { a?: A };\n",
    });
    assert.notEqual(r.status, 0);
    assert.match(r.out, /noImportCycles/);
  });

  it('fails when the server imports the compiler or the generator', async () => {
    const targets = ['../build-snapshot/x.ts', '../generate/x.ts'];
    const runs = await Promise.all(
      targets.map((target) =>
        lint({
          'build-snapshot/x.ts': 'export const X = 1;\n',
          'generate/x.ts': 'export const X = 1;\n',
          'src/a.ts': `import { X } from '${target}';\n\nexport const A = X;\n`,
        }),
      ),
    );
    for (const [i, target] of targets.entries()) {
      assert.notEqual(runs[i].status, 0, target);
      assert.match(runs[i].out, /The server never imports the compiler or the generator/);
    }
  });

  it('fails when the compiler imports the server, or anything imports the tests or benchmarks', async () => {
    const cases: [string, string, RegExp][] = [
      ['build-snapshot/a.ts', '../src/x.ts', /The compiler never imports the server/],
      ['snapshot-format/a.ts', '../src/x.ts', /The format is the contract both sides import/],
      ['src/a.ts', '../test/x.ts', /Nothing imports the tests or the benchmarks/],
      ['build-snapshot/a.ts', '../bench/x.ts', /Nothing imports the tests or the benchmarks/],
      ['scripts/a.ts', '../test/x.ts', /Nothing imports the tests/],
      ['scripts/a.ts', '../bench/x.ts', /Nothing imports the tests or the benchmarks/],
      ['test/a.ts', '../bench/x.ts', /Nothing imports the benchmarks/],
      ['bench/a.ts', '../test/x.ts', /Nothing imports the tests/],
    ];
    const runs = await Promise.all(
      cases.map(([from, target]) =>
        lint({
          'src/x.ts': 'export const X = 1;\n',
          'test/x.ts': 'export const X = 1;\n',
          'bench/x.ts': 'export const X = 1;\n',
          [from]: `import { X } from '${target}';\n\nexport const A = X;\n`,
        }),
      ),
    );
    for (const [i, [from, target, message]] of cases.entries()) {
      assert.notEqual(runs[i].status, 0, `${from} → ${target}`);
      assert.match(runs[i].out, message);
    }
  });

  it('fails on both of scripts/ imports, of the tests and of the benchmarks, in one tree', async () => {
    const r = await lint({
      'test/x.ts': 'export const X = 1;\n',
      'bench/x.ts': 'export const X = 1;\n',
      'scripts/a.ts': "import { X } from '../test/x.ts';\n\nexport const A = X;\n",
      'scripts/b.ts': "import { X } from '../bench/x.ts';\n\nexport const B = X;\n",
    });
    assert.notEqual(r.status, 0);
    assert.match(r.out, /scripts\/a\.ts.*noRestrictedImports/);
    assert.match(r.out, /scripts\/b\.ts.*noRestrictedImports/);
  });

  it('gives each folder its import bans in one override (a later override would replace an earlier one)', () => {
    const config = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8'));
    const seen = new Map<string, number>();
    config.overrides.forEach((o: any, i: number) => {
      if (!o.linter?.rules?.style?.noRestrictedImports) return;
      for (const glob of o.includes) {
        assert.equal(seen.get(glob), undefined, `${glob} is in overrides ${seen.get(glob)} and ${i}`);
        seen.set(glob, i);
      }
    });
  });
});

/** A module whose one function has a body of `lines` statements (and its two braces). */
const functionOf = (lines: number) =>
  `let x = 0;\nexport function f() {\n${'  x++;\n'.repeat(lines - 1)}  return x;\n}\n`;

describe('function length (biome.json)', { concurrency: true }, () => {
  const FOLDERS = ['src', 'build-snapshot', 'snapshot-format', 'generate', 'scripts'];

  it('fails a function of 81 lines in each folder the rule covers', async () => {
    const runs = await Promise.all(FOLDERS.map((folder) => lint({ [`${folder}/a.ts`]: functionOf(81) })));
    for (const [i, folder] of FOLDERS.entries()) {
      assert.notEqual(runs[i].status, 0, folder);
      assert.match(runs[i].out, new RegExp(`${folder}/a\\.ts.*noExcessiveLinesPerFunction`));
    }
  });

  it('passes a function of 80 lines', async () => {
    const r = await lint(Object.fromEntries(FOLDERS.map((folder) => [`${folder}/a.ts`, functionOf(80)])));
    assert.equal(r.status, 0, r.out);
  });
});
