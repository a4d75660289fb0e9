// The import-graph check (scripts/check-imports.ts) catches what Biome's file-level rules cannot: a small tree per rule.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { checkImports, type Rules } from '../scripts/check-imports.ts';
import { findImports } from '../scripts/import-graph.ts';
import { SRC_FLOORS, TOP_LEVEL_BANS } from '../scripts/import-layers.ts';
import { tempDir } from './support/files.ts';
import { runScript } from './support/processes.ts';

/** A small floor table of its own, so that the lead's moves in the real one leave these tests alone. */
const RULES: Rules = {
  floors: { 3: ['main.ts'], 2: ['http/'], 1: ['access/', 'snapshot/'], 0: ['errors.ts', 'log.ts'] },
  bans: TOP_LEVEL_BANS,
};

/** A tree of files (path → source) in a fresh folder; its path. */
function tree(files: Record<string, string>): string {
  const dir = tempDir('import-check-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** The check's messages over a tree, with the test table. */
const check = (files: Record<string, string>) => checkImports(tree(files), RULES).map((v) => v.message);

const LEAF = 'export const X = 1;\n';
/** A tree that follows every rule: main.ts → http/ → access/ → errors.ts, and snapshot-format/ from anywhere. */
const GOOD: Record<string, string> = {
  'snapshot-format/f.ts': LEAF,
  'src/errors.ts': "import { X } from '../snapshot-format/f.ts';\n\nexport const E = X;\n",
  'src/log.ts': LEAF,
  'src/access/a.ts': "import { E } from '../errors.ts';\nimport { B } from './b.ts';\n\nexport const A = E + B;\n",
  'src/access/b.ts': "import { X } from '../log.ts';\n\nexport const B = X;\n",
  'src/snapshot/s.ts': "import type { E } from '../errors.ts';\n\nexport type S = typeof E;\n",
  'src/http/h.ts':
    "import { A } from '../access/a.ts';\nimport type { S } from '../snapshot/s.ts';\n\nexport const H: S = A;\n",
  'src/main.ts': "const { H } = await import('./http/h.ts');\nexport { E } from './errors.ts';\nexport const M = H;\n",
  'build-snapshot/b.ts': "import { X } from '../snapshot-format/f.ts';\n\nexport const B = X;\n",
  'test/t.test.ts':
    "import { M } from '../src/main.ts';\nimport { B } from '../build-snapshot/b.ts';\n\nexport const T = M + B;\n",
};

describe('import graph: finding imports', () => {
  it('finds every written form of an import, type-only and dynamic ones included', () => {
    const src = [
      "import a from './a.ts';",
      "import type { B } from './b.ts';",
      'import {',
      '  type C,',
      '  D,',
      "} from './c.ts';",
      "import * as e from './e.ts';",
      "import './side-effect.ts';",
      "export * from './f.ts';",
      "export { g } from './g.ts';",
      "export type { H } from './h.ts';",
      "const i = await import('./i.ts');",
      "type J = typeof import('./j.ts');",
      "const k = require('./k.ts');",
      'const l = await import(`./l.ts`);',
    ].join('\n');
    assert.deepEqual(
      findImports(src).map((r) => `${r.line} ${r.kind} ${r.specifier}`),
      [
        '1 static ./a.ts',
        '2 static ./b.ts',
        '3 static ./c.ts',
        '7 static ./e.ts',
        '8 static ./side-effect.ts',
        '9 static ./f.ts',
        '10 static ./g.ts',
        '11 static ./h.ts',
        '12 dynamic ./i.ts',
        '13 dynamic ./j.ts',
        '14 require ./k.ts',
        '15 dynamic ./l.ts',
      ],
    );
  });

  it('reads no import out of comments, strings, templates or regular expressions', () => {
    const src = [
      "// import a from './a.ts';",
      "/* export * from './b.ts'; */",
      'const c = "import c from \'./c.ts\'";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source under test holds a template literal
      "const d = `import d from './d.ts' ${'x'} import('./d2.ts')`;",
      "const e = /import e from '.\\/e.ts'/g.test(c) ? 1 : 2 / 3; // 'import(\"./e2.ts\")'",
      'const f = import.meta.url;',
      "const g = loader.import('./g.ts');",
      "export const h = { import: './h.ts' };",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source under test holds a template literal
      'const m = obj.of / 2; const n = `${obj.in / 3}`;',
      "export const i = c; import j from './j.ts';",
    ].join('\n');
    assert.deepEqual(
      findImports(src).map((r) => r.specifier),
      ['./j.ts'],
    );
  });

  it('finds an import inside a template substitution', () => {
    assert.deepEqual(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source under test holds a template literal
      findImports("const a = `${(await import('./a.ts')).A}`;").map((r) => r.specifier),
      ['./a.ts'],
    );
  });
});

describe('import rules (scripts/check-imports.ts)', () => {
  it('passes a tree whose imports go down the floors and one way between folders', () => {
    assert.deepEqual(check(GOOD), []);
  });

  it('fails on an upward import in src/, naming both files and the floors', () => {
    const out = check({ ...GOOD, 'src/access/up.ts': "import { H } from '../http/h.ts';\n\nexport const U = H;\n" });
    assert.ok(
      out.some((m) =>
        /^src-upward: src\/access\/up\.ts:1 imports src\/http\/h\.ts: src\/access\/ \(floor 1\) imports upward from src\/http\/ \(floor 2\)/.test(
          m,
        ),
      ),
      out.join('\n'),
    );
  });

  it('counts type-only and dynamic imports as upward imports', () => {
    for (const text of [
      "import type { H } from '../http/h.ts';\n\nexport type U = typeof H;\n",
      "export const u = () => import('../http/h.ts');\n",
      "export type { H } from '../http/h.ts';\n",
    ]) {
      const out = check({ ...GOOD, 'src/access/up.ts': text });
      assert.ok(
        out.some((m) => m.startsWith('src-upward: src/access/up.ts:')),
        `${text}\n${out.join('\n')}`,
      );
    }
  });

  it('fails on an import between two folders of one floor, and between two leaves', () => {
    const folders = check({
      ...GOOD,
      'src/snapshot/t.ts': "import { A } from '../access/a.ts';\n\nexport const T = A;\n",
    });
    assert.ok(
      folders.some((m) =>
        /^src-same-floor: src\/snapshot\/t\.ts:1 imports src\/access\/a\.ts: src\/snapshot\/ and src\/access\/ share floor 1/.test(
          m,
        ),
      ),
      folders.join('\n'),
    );
    const leaves = check({ ...GOOD, 'src/log.ts': "import { E } from './errors.ts';\n\nexport const X = E;\n" });
    assert.ok(
      leaves.some((m) => m.startsWith('src-same-floor: src/log.ts:1 imports src/errors.ts')),
      leaves.join('\n'),
    );
  });

  it('fails on a folder or a file under src/ that no floor lists, saying to add it to the table', () => {
    const out = check({
      ...GOOD,
      'src/cluster/c.ts': "import { H } from '../http/h.ts';\n\nexport const C = H;\n",
      'src/new.ts': LEAF,
      'src/data/d.ts': LEAF, // only the top-level data/ and dist/ are not read
    });
    const unlisted = out.filter((m) => m.startsWith('src-unlisted:'));
    assert.equal(unlisted.length, 3, out.join('\n'));
    assert.match(
      unlisted[0],
      /^src-unlisted: src\/cluster\/ \(src\/cluster\/c\.ts\) is on no floor: add it to the floor table/,
    );
    assert.match(unlisted[1], /^src-unlisted: src\/data\/ /);
    assert.match(unlisted[2], /^src-unlisted: src\/new\.ts \(src\/new\.ts\) is on no floor: add it to the floor table/);
  });

  it('fails on a cycle of top-level folders, direct or through others, with no cycle of files in it', () => {
    const direct = check({
      ...GOOD,
      'scripts/a.ts': "import { B } from '../generate/b.ts';\n\nexport const A = B;\n",
      'generate/b.ts': LEAF,
      'generate/c.ts': "import { D } from '../scripts/d.ts';\n\nexport const C = D;\n",
      'scripts/d.ts': LEAF,
    });
    assert.deepEqual(
      direct.filter((m) => m.startsWith('folder-cycle:')),
      [
        'folder-cycle: generate/ → scripts/ → generate/: generate/c.ts:1 imports scripts/d.ts; scripts/a.ts:1 imports generate/b.ts.',
      ],
    );
    const through = check({
      ...GOOD,
      'scripts/a.ts': "import { B } from '../generate/b.ts';\n\nexport const A = B;\n",
      'generate/b.ts': "import type { C } from '../client/c.ts';\n\nexport type B = C;\n",
      'client/c.ts': "export const c = () => import('../scripts/d.ts');\n",
      'scripts/d.ts': LEAF,
    });
    assert.ok(
      through.some((m) => m.startsWith('folder-cycle: client/ → scripts/ → generate/ → client/: ')),
      through.join('\n'),
    );
  });

  it('fails on a cycle of folders at any depth, and leaves a cycle of files alone (Biome has that one)', () => {
    const nested = check({
      ...GOOD,
      'build-snapshot/x/a.ts': "import { B } from '../y/b.ts';\n\nexport const A = B;\n",
      'build-snapshot/y/b.ts': LEAF,
      'build-snapshot/y/c.ts': "import { A } from '../x/a.ts';\n\nexport const C = A;\n",
    });
    assert.ok(
      nested.some((m) => m.startsWith('folder-cycle: build-snapshot/x/ → build-snapshot/y/ → build-snapshot/x/: ')),
      nested.join('\n'),
    );
    const files = check({
      ...GOOD,
      'build-snapshot/c.ts': "import { D } from './d.ts';\n\nexport const C = D;\n",
      'build-snapshot/d.ts': "import { C } from './c.ts';\n\nexport const D = C;\n",
    });
    assert.deepEqual(files, []);
  });

  it('fails when the client imports the server, or anything imports the tests or the benchmarks', () => {
    const cases: [string, string, RegExp][] = [
      ['client/src/a.ts', '../../src/log.ts', /The client is its own package: it never imports the server/],
      ['client/a.ts', '../src/log.ts', /The client is its own package: it never imports the server/],
      ['src/http/t.ts', '../../test/t.test.ts', /Nothing imports the tests/],
      ['scripts/t.ts', '../test/t.test.ts', /Nothing imports the tests/],
      ['scripts/b.ts', '../bench/b.ts', /Nothing imports the benchmarks/],
      ['src/access/b.ts', '../../build-snapshot/b.ts', /The server never imports the compiler or the generator/],
      ['generate/g.ts', '../src/log.ts', /The generator writes source data; it never imports the server/],
    ];
    for (const [from, target, why] of cases) {
      const out = check({ ...GOOD, 'bench/b.ts': LEAF, [from]: `export const f = () => import('${target}');\n` });
      const ban = out.find((m) => m.startsWith(`top-level-ban: ${from}:1 imports `));
      assert.ok(ban, `${from} → ${target}\n${out.join('\n')}`);
      assert.match(ban, why);
    }
  });

  it('fails on a relative import that names no file', () => {
    const out = check({ ...GOOD, 'src/access/c.ts': "import { Z } from './missing.ts';\n\nexport const C = Z;\n" });
    assert.deepEqual(out, ["unresolved: src/access/c.ts:1 imports './missing.ts', which names no file."]);
  });
});

describe('npm run check:imports', { concurrency: true }, () => {
  /** The command over a tree, with the project's own table: its exit status and output. */
  const run = async (files: Record<string, string>) => {
    const r = await runScript('scripts/check-imports.ts', [tree(files)]);
    return { status: r.code, out: r.stdout + r.stderr };
  };

  it('exits 0 on a tree that follows the rules', async () => {
    const r = await run({
      'snapshot-format/f.ts': LEAF,
      'build-snapshot/b.ts': "import { X } from '../snapshot-format/f.ts';\n",
    });
    assert.equal(r.status, 0, r.out);
  });

  it('exits 1 and names the rule, the file and the table on a violation', async () => {
    const r = await run({ 'src/brand-new-folder/a.ts': LEAF });
    assert.equal(r.status, 1, r.out);
    assert.match(
      r.out,
      /src-unlisted: src\/brand-new-folder\/ .*add it to the floor table in scripts\/import-layers\.ts/,
    );
  });

  it("keeps the project's floor table well formed: each entry once, a folder/ or a file directly under src/", () => {
    const entries = Object.values(SRC_FLOORS).flat();
    assert.equal(new Set(entries).size, entries.length, 'an entry on two floors');
    for (const e of entries) assert.match(e, /^[\w.-]+(\/|\.ts)$/);
    for (const floor of Object.keys(SRC_FLOORS)) assert.match(floor, /^\d+$/);
  });
});
