// npm run bundle: esbuild → dist/ — the server, the compiler, the key and snapshot commands as plain ESM files, plus the
// compiler's worker and schema, and a package.json naming the dependencies that are not inside: better-sqlite3
// (a native addon) and swagger-ui-dist (the docs page's files), which `npm install --omit=dev` in the folder
// installs on the host. And dist/nl-rental-api: every operator command as one executable for this platform,
// addon and docs files inside (scripts/sea.ts); and dist/rootfs/, the image's root file system (scripts/rootfs.ts,
// deploy/Containerfile).

import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS as common } from './bundle-options.ts';
import { prepareRootfs } from './rootfs.ts';
import { ADDON, buildSea, SEA_NAME, SeaUnsupported } from './sea.ts';

const outdir = process.argv[2] ?? 'dist'; // npm run bundle [-- OUTDIR]
// Only the bundle's own files are replaced: a folder that also holds anything else (a snapshot, a key
// store) is refused rather than emptied. What `npm install` made in it from the bundle's package.json is
// kept as it is.
const OWN =
  /^(server\.mjs|build-snapshot\.mjs|keys\.mjs|snapshot\.mjs|listings-worker\.js|schema\.sql|package\.json)(\.map)?$|^nl-rental-api$|^rootfs$/;
const INSTALLED = new Set(['node_modules', 'package-lock.json']);
if (existsSync(outdir) && !statSync(outdir).isDirectory()) {
  console.error(`bundle: ${outdir} exists and is not a folder; choose an empty or new folder`);
  process.exit(1);
}
if (existsSync(outdir)) {
  const other = readdirSync(outdir).filter((f) => !OWN.test(f) && !INSTALLED.has(f));
  if (other.length) {
    console.error(
      `bundle: ${outdir} holds files that are not the bundle's (${other.slice(0, 5).join(', ')}${other.length > 5 ? ', …' : ''}); choose an empty or new folder`,
    );
    process.exit(1);
  }
  for (const f of readdirSync(outdir)) if (OWN.test(f)) rmSync(join(outdir, f), { recursive: true, force: true });
}
mkdirSync(outdir, { recursive: true });
// One self-contained file per command (no shared chunks): the compiler finds schema.sql and its worker
// beside the file that runs.
await build({
  ...common,
  entryPoints: {
    server: 'src/main.ts',
    'build-snapshot': 'build-snapshot/main.ts',
    keys: 'src/cli/keys.ts',
    snapshot: 'src/cli/snapshot.ts',
  },
  outdir,
  outExtension: { '.js': '.mjs' },
});
// The compiler starts its listings worker from ./listings-worker.js beside the bundle.
await build({ ...common, entryPoints: { 'listings-worker': 'build-snapshot/listings-worker.ts' }, outdir });
copyFileSync('snapshot-format/schema.sql', join(outdir, 'schema.sql'));
// The native addon and the docs page's files at the versions this bundle was built and tested with.
const project = JSON.parse(readFileSync('package.json', 'utf8'));
const versionOf = (name: string) =>
  JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')).version as string;
const sqlite = versionOf('better-sqlite3');
writeFileSync(
  join(outdir, 'package.json'),
  `${JSON.stringify(
    {
      name: `${project.name}-bundle`,
      version: project.version,
      private: true,
      type: 'module',
      engines: project.engines,
      description: 'The bundled service: npm install --omit=dev here installs its native addon and the docs files.',
      dependencies: { 'better-sqlite3': sqlite, 'swagger-ui-dist': versionOf('swagger-ui-dist') },
    },
    null,
    2,
  )}\n`,
);
console.log(
  `${outdir}/: server.mjs, build-snapshot.mjs, keys.mjs, snapshot.mjs, listings-worker.js, schema.sql, package.json (better-sqlite3 ${sqlite}, swagger-ui-dist ${versionOf('swagger-ui-dist')})`,
);
// A better-sqlite3 installed there earlier, at another version, would be the one the bundle loads.
const installed = join(outdir, 'node_modules', 'better-sqlite3', 'package.json');
if (existsSync(installed)) {
  const version = JSON.parse(readFileSync(installed, 'utf8')).version;
  if (version !== sqlite)
    console.error(
      `bundle: ${outdir}/node_modules has better-sqlite3 ${version}, the bundle was built with ${sqlite}: run npm install --omit=dev in ${outdir} again`,
    );
}
// The single executable: a node binary without SEA support (some distributions' builds) skips it only.
try {
  const exe = await buildSea(outdir);
  console.log(
    `${exe}: every operator command as one executable for ${process.platform}-${process.arch} (${(statSync(exe).size / 2 ** 20).toFixed(0)} MB)`,
  );
  // The image's root file system: the executable and the libraries it links (Linux: ldd lists them).
  if (process.platform === 'linux') {
    const rootfs = join(outdir, 'rootfs');
    const libs = prepareRootfs(rootfs, exe, [ADDON]);
    console.log(
      `${rootfs}/: the executable, ${libs.length} shared libraries, /etc/passwd and /etc/group (deploy/Containerfile)`,
    );
  }
} catch (e) {
  console.error(`bundle: ${SEA_NAME}: ${(e as Error).message}`);
  if (!(e instanceof SeaUnsupported)) process.exit(1);
}
