// npm run bundle: esbuild → dist/ — the server, the compiler and the key command as plain ESM files, plus the
// compiler's worker and schema. Everything but better-sqlite3 (a native addon) is inside; run with
// `node dist/server.mjs` next to a node_modules that has better-sqlite3 (or `npm ci --omit=dev`).
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_OPTIONS as common } from './bundle-options.ts';

const outdir = process.argv[2] ?? 'dist'; // npm run bundle [-- OUTDIR]
// Only the bundle's own files are replaced: a folder that also holds anything else (a snapshot, a key
// store) is refused rather than emptied.
const OWN = /^(server\.mjs|build-snapshot\.mjs|keys\.mjs|listings-worker\.js|schema\.sql)(\.map)?$/;
if (existsSync(outdir)) {
  const other = readdirSync(outdir).filter((f) => !OWN.test(f));
  if (other.length) {
    console.error(`bundle: ${outdir} holds files that are not the bundle's (${other.slice(0, 5).join(', ')}${other.length > 5 ? ', …' : ''}); choose an empty or new folder`);
    process.exit(1);
  }
  for (const f of readdirSync(outdir)) rmSync(join(outdir, f), { force: true });
}
mkdirSync(outdir, { recursive: true });
// One self-contained file per command (no shared chunks): the compiler finds schema.sql and its worker
// beside the file that runs.
await build({ ...common, entryPoints: { server: 'src/main.ts', 'build-snapshot': 'build-snapshot/main.ts', keys: 'src/keys-cli.ts' }, outdir, outExtension: { '.js': '.mjs' } });
// The compiler starts its listings worker from ./listings-worker.js beside the bundle.
await build({ ...common, entryPoints: { 'listings-worker': 'build-snapshot/listings-worker.ts' }, outdir });
copyFileSync('build-snapshot/schema.sql', join(outdir, 'schema.sql'));
console.log(`${outdir}/: server.mjs, build-snapshot.mjs, keys.mjs, listings-worker.js, schema.sql`);
