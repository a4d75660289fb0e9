// npm run bench:profile [-- --only TEXT] [--seconds S] [--listings N] [--top K] [--perf]: where a request's CPU goes.
// The bundled server (bench/server-wrapper.ts, as npm run bench serves it) runs under `node --cpu-prof` while
// autocannon drives the chosen scenarios' distinct requests; the profile's self time is printed per function (mapped
// back to the source through the bundle's source map) and per source file. The .cpuprofile is kept for DevTools.
// --perf: Linux `perf record` of the server instead (call graphs, kernel and native code included, JS frames named
// through node's perf map), which puts system calls, SQLite and the loopback TCP send at their true share.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from '../scripts/bundle-options.ts';
import { CACHE, ensureSnapshot, lpad, pad, ROOT, startBenchServer } from './common.ts';
import { pick, scenarios } from './scenarios.ts';
import { captureDistinct, pools } from './variants.ts';

const { values: a } = parseArgs({
  options: {
    only: { type: 'string', default: 'listing detail' },
    seconds: { type: 'string', default: '5' },
    listings: { type: 'string', default: '1000000' },
    distinct: { type: 'string', default: '1000' },
    top: { type: 'string', default: '40' },
    perf: { type: 'boolean', default: false },
  },
});
if (a.perf && spawnSync('perf', ['--version']).error)
  throw new Error('--perf needs Linux perf: apt-get install linux-perf (Debian), or run without --perf');
const say = (s: string) => process.stderr.write(`${s}\n`);
const dir = mkdtempSync(join(tmpdir(), 'nlr-profile-'));

const dbPath = await ensureSnapshot(Number(a.listings), 1, say);
const bundle = join(CACHE, 'bench-dist', 'profile-server.mjs');
await build({ ...BUNDLE_OPTIONS, entryPoints: ['bench/server-wrapper.ts'], outfile: bundle, logLevel: 'silent' });
const { server, url, key } = await startBenchServer(
  a.perf ? ['--perf-basic-prof-only-functions', bundle] : ['--cpu-prof', `--cpu-prof-dir=${dir}`, bundle],
  dbPath,
  dir,
  'profile',
);
const perfData = join(dir, 'perf.data');
/** A perf recording of the server while scenario `n` runs, one file per scenario. */
const recordPerf = (n: number): ChildProcess =>
  spawn('perf', ['record', '-F', '999', '-g', '-o', `${perfData}.${n}`, '-p', String(server.pid)], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });

const only = a.only!.split(',').map((s) => s.toLowerCase());
const list = scenarios(pick(dbPath)).filter((s) => only.some((o) => s.name.toLowerCase().includes(o)));
const pool = pools(dbPath, Number(a.distinct));
const auth = { authorization: `Bearer ${key}` };
for (const s of list) {
  const bases = s.bases ? s.bases(pool) : [s.path];
  const skip = (s.deepPages ?? 1) - 1;
  const opts = { n: Number(a.distinct), walk: s.walk === true || skip > 0, skip };
  const { captures } = await captureDistinct(url, auth, bases, opts);
  const paths = captures.map((c) => c.url);
  let next = 0;
  const perf = a.perf ? recordPerf(list.indexOf(s)) : null;
  const run = await autocannon({
    url: url + paths[0],
    connections: 16,
    duration: Number(a.seconds),
    headers: auth,
    requests: [{ method: 'GET', setupRequest: (r) => ({ ...r, path: paths[next++ % paths.length] }) }],
  });
  if (perf) await new Promise((r) => perf.once('exit', r).kill('SIGINT'));
  say(`${s.name}: ${paths.length} distinct, ${Math.round(run.requests.average)} req/s, ${run.non2xx} non-2xx`);
}
await new Promise((r) => {
  server.once('exit', r);
  server.kill('SIGTERM');
});

const map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')));
/** A bundle position (0-based line and column) as the source file and line it came from. */
const original = (line: number, column: number): string | null => {
  const e = map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
  return e.originalSource
    ? `${relative(ROOT, new URL(e.originalSource, `file://${bundle}`).pathname)}:${e.originalLine! + 1}`
    : null;
};
if (a.perf) {
  reportPerf();
  process.exit(0);
}

// ------------------------------------------------------------------------------------------ perf record
/** perf report's rows for every scenario's recording, the bundle's JS frames named by their source lines. */
function reportPerf(): void {
  const jsFrame = /(JS:[*^~]?\S*) file:\/\/(\S+?\.mjs):(\d+):(\d+)/g;
  const named = (line: string) =>
    line.replace(jsFrame, (all, fn: string, file: string, l: string, c: string) =>
      file === bundle ? `${fn} ${original(Number(l) - 1, Number(c) - 1) ?? all}` : all,
    );
  const report = (title: string, args: string[], keep: (row: string) => boolean = () => true) => {
    console.log(`\n${title}`);
    for (let n = 0; n < list.length; n++) {
      const r = spawnSync('perf', ['report', '-i', `${perfData}.${n}`, '--stdio', '-g', 'none', ...args], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      });
      if (r.status !== 0) throw new Error(`perf report -i ${perfData}.${n} failed: ${r.stderr || r.error}`);
      const rows = r.stdout.split('\n').filter((l) => l.trim() && !l.startsWith('#') && keep(l));
      console.log(`  ${list[n].name}`);
      for (const l of rows.slice(0, Number(a.top))) console.log(`  ${named(l.replace(/\s+$/, ''))}`);
    }
  };
  report('by object (self, share of the server process CPU)', ['--no-children', '--sort', 'dso']);
  report('functions (self)', ['--no-children', '--sort', 'sym']);
  // Inclusive: the JS frames and the native calls a request's time ends in (the event loop's frames hold it all).
  const landmarks = /JS:|Statement::JS_|sqlite3_step|__libc_pread|__GI___writev|PerformGarbageCollection|ExecuteJob$/;
  report('JS frames and landmarks, with what they call (children, self)', ['--children', '--sort', 'sym'], (l) =>
    landmarks.test(l.trim()),
  );
  const perfMap = `/tmp/perf-${server.pid}.map`;
  if (existsSync(perfMap)) rmSync(perfMap);
  console.log(`\nrecordings: ${perfData}.0 … (perf report -i FILE)`);
}

// ------------------------------------------------------------------------------------------ the profile
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!;
const prof = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
for (let i = 0; i < prof.samples.length; i++)
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
const fns = new Map<string, number>();
const files = new Map<string, number>();
let total = 0;
for (const [id, us] of self) {
  const f = byId.get(id)!.callFrame;
  if (f.functionName === '(idle)') continue;
  let where = f.url ? relative(ROOT, new URL(f.url).pathname) : '(native)';
  if (f.url.endsWith('.mjs') && f.url.includes('bench-dist')) where = original(f.lineNumber, f.columnNumber) ?? where;
  else if (f.url) where += `:${f.lineNumber + 1}`;
  const name = `${f.functionName || '(anonymous)'}  ${where}`;
  fns.set(name, (fns.get(name) ?? 0) + us);
  const fileName = where.replace(/:\d+$/, '').replace(/^node_modules\/([^/]+).*/, 'node_modules/$1');
  files.set(fileName, (files.get(fileName) ?? 0) + us);
  total += us;
}
const show = (title: string, m: Map<string, number>, k: number) => {
  console.log(`\n${title} (self time, ${(total / 1e6).toFixed(2)} s sampled)`);
  for (const [name, us] of [...m].sort((x, y) => y[1] - x[1]).slice(0, k))
    console.log(`${lpad(((us / total) * 100).toFixed(1), 5)} %  ${pad(name, 0)}`);
};
show('functions', fns, Number(a.top));
show('files', files, 25);
console.log(`\nprofile: ${join(dir, file)}`);
