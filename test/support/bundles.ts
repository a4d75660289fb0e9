// The programs as deployments run them: src/main.ts, the compiler and the operator's commands bundled by esbuild
// with npm run bundle's options, for the tests that run them as processes. A process under tsx spends about 2 s of
// CPU starting the server (its loader thread, every module through the loader) and 0.5 s more for a command; a
// bundle about a third of that, and a cluster starts one per worker. Bundled once per version of the code into
// node_modules/.cache, where the external better-sqlite3 and the docs page's files resolve as from the repository.
// TEST_SERVER=source runs the TypeScript sources under tsx instead.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { BUNDLE_OPTIONS } from '../../scripts/bundle-options.ts';
import { markUsed, moveIntoPlace, pruneUnused, ROOT } from './files.ts';
import { digest, filesOf } from './snapshots.ts';

const TSX = import.meta.resolve('tsx');
/** The bundled programs, by their source (as npm run bundle names them). */
const PROGRAMS: Record<string, string> = {
  'src/main.ts': 'server',
  'build-snapshot/main.ts': 'build-snapshot',
  'src/cli/keys.ts': 'keys',
  'src/cli/snapshot.ts': 'snapshot',
};
let folder: string | undefined;

/** The folder of the bundled programs for the code as it is now: made here when no test process has made it. */
function bundles(): string {
  if (folder) return folder;
  const key = digest([
    process.version,
    ...['src', 'snapshot-format', 'build-snapshot'].flatMap((d) => filesOf(join(ROOT, d))),
    ...['scripts/bundle-options.ts', 'package-lock.json'].map((f) => readFileSync(join(ROOT, f))),
  ]);
  const home = join(ROOT, 'node_modules', '.cache', 'nl-rental-api-test');
  const dir = join(home, `bundle-${key}`);
  if (existsSync(join(dir, 'package.json'))) {
    markUsed(dir);
  } else {
    pruneUnused(home, 86_400_000); // the bundles of older code unused for a day: a few MB each
    const own = `${dir}.${process.pid}`;
    mkdirSync(own, { recursive: true });
    const entryPoints = Object.fromEntries(Object.entries(PROGRAMS).map(([src, name]) => [name, join(ROOT, src)]));
    buildSync({ ...BUNDLE_OPTIONS, entryPoints, outdir: own, outExtension: { '.js': '.mjs' }, logLevel: 'error' });
    // The compiler starts its worker from ./listings-worker.js and reads ./schema.sql beside it.
    const worker = { 'listings-worker': join(ROOT, 'build-snapshot', 'listings-worker.ts') };
    buildSync({ ...BUNDLE_OPTIONS, entryPoints: worker, outdir: own, logLevel: 'error' });
    copyFileSync(join(ROOT, 'snapshot-format', 'schema.sql'), join(own, 'schema.sql'));
    writeFileSync(join(own, 'package.json'), '{ "type": "module" }\n'); // written last: the folder is whole
    moveIntoPlace(own, dir);
  }
  folder = dir;
  return dir;
}

/** The node arguments that run `script` (a path from the repository root): its bundle, or the source under tsx. */
export function programArgs(script: string): string[] {
  const name = PROGRAMS[script];
  if (name === undefined || process.env.TEST_SERVER === 'source') return ['--import', TSX, join(ROOT, script)];
  return [join(bundles(), `${name}.mjs`)];
}
