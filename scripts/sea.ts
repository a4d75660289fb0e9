// The single executable (npm run bundle): this machine's node binary with a SEA blob holding every operator
// command (scripts/sea-main.ts, bundled as CommonJS), the compiler's worker script and schema.sql,
// better-sqlite3's addon and the docs page's files. Nothing else is needed on the host: no node, no
// node_modules, no compiler.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { WORKER_ASSET } from '../build-snapshot/workers.ts';
import { SCHEMA_ASSET } from '../snapshot-format/schema.ts';
import { DOCS_ASSET_FILES } from '../src/openapi/docs.ts';
import { ADDON_ASSET } from './sea-addon.ts';

export const SEA_NAME = 'nl-rental-api';
const ROOT = resolve(import.meta.dirname, '..');
/** better-sqlite3's addon, carried by the executable. */
export const ADDON = join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
const SWAGGER = join(ROOT, 'node_modules/swagger-ui-dist');
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
// How better-sqlite3 (lib/database.js) finds its default addon: node_modules beside the script, via `bindings`.
const DEFAULT_ADDON = "require('bindings')('better_sqlite3.node')";

/** better-sqlite3's default addon comes from the executable (scripts/sea-addon.ts) instead. */
const addonFromSea: Plugin = {
  name: 'better-sqlite3-addon-from-sea',
  setup(b) {
    b.onLoad({ filter: /better-sqlite3[\\/]lib[\\/]database\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes(DEFAULT_ADDON))
        throw new Error(`${args.path} no longer loads its addon with ${DEFAULT_ADDON}: update scripts/sea.ts`);
      const shim = JSON.stringify(join(ROOT, 'scripts/sea-addon.ts'));
      return { contents: source.replace(DEFAULT_ADDON, `require(${shim}).default()`), loader: 'js' };
    });
  },
};

/** This node binary cannot make a single executable (built without the SEA fuse, as some distributions do). */
export class SeaUnsupported extends Error {}

function run(args: string[], what: string) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${what} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
}

/** Writes `outdir/nl-rental-api` for this platform; returns its path. */
export async function buildSea(outdir: string, opts: { codeCache?: boolean } = {}): Promise<string> {
  if (!readFileSync(process.execPath).includes(FUSE))
    throw new SeaUnsupported(`${process.execPath} was built without single-executable support (no SEA fuse): skipped`);
  const work = mkdtempSync(join(tmpdir(), 'nl-rental-api-sea-'));
  const exe = join(outdir, SEA_NAME);
  try {
    const main = join(work, 'main.cjs');
    const worker = join(work, 'worker.cjs');
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
    const common: BuildOptions = {
      absWorkingDir: ROOT,
      bundle: true,
      platform: 'node',
      format: 'cjs', // Node 20 runs a SEA's main script as CommonJS, with require() for built-in modules only
      target: 'node20',
      minify: true,
      legalComments: 'none',
      plugins: [addonFromSea],
      // import.meta.url is read only outside a single executable (docs.ts, schema.ts, workers.ts: files on disk)
      logOverride: { 'empty-import-meta': 'silent' },
      logLevel: 'warning',
    };
    await build({
      ...common,
      entryPoints: ['scripts/sea-main.ts'],
      outfile: main,
      define: { SEA_VERSION: JSON.stringify(version) },
    });
    // The compiler's workers run this script as `new Worker(code, { eval: true })` (build-snapshot/workers.ts).
    await build({ ...common, entryPoints: ['build-snapshot/listings-worker.ts'], outfile: worker });
    const assets: Record<string, string> = {
      [ADDON_ASSET]: ADDON,
      [WORKER_ASSET]: worker,
      [SCHEMA_ASSET]: join(ROOT, 'snapshot-format/schema.sql'),
    };
    for (const file of DOCS_ASSET_FILES) assets[`docs/${file}`] = join(SWAGGER, file);
    const blob = join(work, 'sea.blob');
    const config = join(work, 'sea-config.json');
    writeFileSync(
      config,
      JSON.stringify({
        main,
        output: blob,
        disableExperimentalSEAWarning: true,
        useSnapshot: false,
        useCodeCache: opts.codeCache ?? true,
        assets,
      }),
    );
    run(['--experimental-sea-config', config], 'node --experimental-sea-config');
    rmSync(exe, { force: true });
    copyFileSync(process.execPath, exe);
    chmodSync(exe, 0o755);
    const postject = join(ROOT, 'node_modules/postject/dist/cli.js');
    run([postject, exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE], 'postject');
    return exe;
  } catch (e) {
    rmSync(exe, { force: true });
    throw e;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// `tsx scripts/sea.ts [OUTDIR]`: the executable alone.
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const exe = await buildSea(process.argv[2] ?? 'dist');
  console.log(`${exe} (${(statSync(exe).size / 2 ** 20).toFixed(1)} MB)`);
}
