// The server as deployments run it: src/main.ts bundled by esbuild with npm run bundle's options, for the tests that
// run it as a process (signals, clusters, drain, restarts). A process under tsx spends about 2 s of CPU starting
// (its loader thread, every module through the loader); the bundle about 0.7 s, and a cluster starts one per worker.
// Bundled once per version of the code into node_modules/.cache, where its external better-sqlite3 and the docs
// page's files resolve as from the repository. TEST_SERVER=source runs src/main.ts under tsx instead.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { BUNDLE_OPTIONS } from '../../scripts/bundle-options.ts';
import { ROOT } from './files.ts';
import { digest, filesOf } from './snapshots.ts';

const TSX = import.meta.resolve('tsx');
let entry: string[] | undefined;

/** The node arguments that run the server: the cached bundle (made here when missing), or src/main.ts under tsx. */
export function serverArgs(): string[] {
  if (process.env.TEST_SERVER === 'source') return ['--import', TSX, join(ROOT, 'src', 'main.ts')];
  if (entry) return entry;
  const key = digest([
    process.version,
    ...['src', 'snapshot-format'].flatMap((d) => filesOf(join(ROOT, d))),
    ...['scripts/bundle-options.ts', 'package-lock.json'].map((f) => readFileSync(join(ROOT, f))),
  ]);
  const dir = join(ROOT, 'node_modules', '.cache', 'nl-rental-api-test', `server-${key}`);
  if (!existsSync(join(dir, 'server.mjs'))) {
    const own = `${dir}.${process.pid}`;
    mkdirSync(own, { recursive: true });
    buildSync({
      ...BUNDLE_OPTIONS,
      entryPoints: { server: join(ROOT, 'src', 'main.ts') },
      outdir: own,
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    });
    copyFileSync(join(ROOT, 'snapshot-format', 'schema.sql'), join(own, 'schema.sql'));
    try {
      renameSync(own, dir);
    } catch {
      rmSync(own, { recursive: true, force: true }); // another process put the same bundle in place first
    }
  }
  entry = [join(dir, 'server.mjs')];
  return entry;
}
