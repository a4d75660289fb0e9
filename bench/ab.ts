// npm run bench:ab -- --old DIR [--new DIR] [--old-snapshot FILE] [--new-snapshot FILE] [--rounds 9] [--seconds 2]
//                     [--pages 300] [--connections 16] [--only TEXT]
//
// What a change does to the server CPU per request: two checkouts (OLD, e.g. a git worktree of the commit before,
// and NEW, this one) each serve their own snapshot (by default the cached 1M bench snapshot of each checkout)
// through bench/server-wrapper.ts under tsx, with the settings of npm run bench and one shared cursor secret.
// Each scenario's requests (300 pages followed by their cursors, or 300 listing ids) are captured from NEW, checked
// to get the same bodies from both (request and snapshot ids aside), then driven by autocannon at each server in
// turn, alternating which goes first, for --rounds rounds: a change of a few tens of µs shows here, where two
// separate runs of npm run bench on a shared VM differ by more than that. Printed: server CPU µs per request
// (/proc, user + system), medians and each round. Bounded: every run lasts --seconds; the servers are children.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { lpad, median, pad, procCpuSeconds, ROOT, snapshotPath, startBenchServer } from './common.ts';

const { values: a } = parseArgs({
  options: {
    old: { type: 'string' },
    new: { type: 'string', default: ROOT },
    'old-snapshot': { type: 'string' },
    'new-snapshot': { type: 'string' },
    rounds: { type: 'string', default: '9' },
    seconds: { type: 'string', default: '2' },
    pages: { type: 'string', default: '300' },
    connections: { type: 'string', default: '16' },
    only: { type: 'string' },
  },
});
const rounds = Number(a.rounds),
  seconds = Number(a.seconds),
  pages = Number(a.pages),
  connections = Number(a.connections);
const usage =
  'usage: npm run bench:ab -- --old DIR [--new DIR] [--old-snapshot FILE] [--new-snapshot FILE] [--rounds 1-50] [--seconds 0-30] [--pages 1-1000] [--connections 1-256] [--only TEXT]';
if (
  !a.old ||
  !(rounds >= 1 && rounds <= 50) ||
  !(seconds > 0 && seconds <= 30) ||
  !(pages >= 1 && pages <= 1000) ||
  !(connections >= 1 && connections <= 256)
)
  throw new Error(usage);
const say = (s: string) => process.stderr.write(`${s}\n`);
/** A checkout's cached 1M bench snapshot (npm run bench:build there). */
const cachedSnapshot = (dir: string) => join(dir, '.bench-cache', basename(snapshotPath(1_000_000, 1)));
const sides = [
  { name: 'old', dir: resolve(a.old), db: resolve(a['old-snapshot'] ?? cachedSnapshot(resolve(a.old))) },
  { name: 'new', dir: resolve(a.new), db: resolve(a['new-snapshot'] ?? cachedSnapshot(resolve(a.new))) },
];
for (const s of sides) {
  if (!existsSync(join(s.dir, 'bench', 'server-wrapper.ts')))
    throw new Error(`${s.dir} is not a checkout of this project (no bench/server-wrapper.ts)`);
  if (!existsSync(s.db)) throw new Error(`${s.name}: no snapshot at ${s.db} (npm run bench:build in that checkout)`);
}

// One key store and one cursor secret for both: a request (and a cursor taken from NEW) is valid on either.
const dir = mkdtempSync(join(tmpdir(), 'nlr-ab-'));
const cursorSecret = randomBytes(24).toString('hex');
const servers: ((typeof sides)[number] & { proc: ChildProcess; url: string; key: string })[] = [];
process.on('exit', () => {
  for (const s of servers) s.proc.kill('SIGTERM');
});
for (const s of sides) {
  const started = await startBenchServer(
    ['--import', 'tsx', 'bench/server-wrapper.ts'],
    s.db,
    dir,
    `bench-ab-${s.name}`,
    {
      cwd: s.dir,
      cursorSecret,
    },
  );
  servers.push({ ...s, proc: started.server, key: started.key, url: started.url });
}
const auth = { authorization: `Bearer ${servers[1].key}` };

// Scenarios from NEW's snapshot: the biggest city and one with few listings, listing ids spread over the rids,
// every city's stats.
const db = new Database(sides[1].db, { readonly: true });
const cities = db
  .prepare(`SELECT value FROM listing_value_counts WHERE column = 'city_id' ORDER BY n DESC, value`)
  .pluck()
  .all() as string[];
const count = db.prepare('SELECT count(*) FROM listings').pluck().get() as number;
const step = Math.max(1, Math.floor(count / pages));
const ids = db.prepare('SELECT id FROM listings WHERE rid % ? = 1 LIMIT ?').pluck().all(step, pages) as string[];
db.close();
const L = '/v1/listings';
const byId = (suffix: string) => ids.map((id) => `${L}/${encodeURIComponent(id)}${suffix}`);
/** A small table's first pages: each locale and a few page sizes (each walk then follows its cursors). */
const small = (path: string) =>
  ['en', 'nl', 'de'].flatMap((locale) => [5, 20, 50].map((limit) => `${path}?locale=${locale}&limit=${limit}`));
const list: { name: string; first?: string; firsts?: string[]; paths?: string[] }[] = [
  { name: 'ping', paths: ['/v1/ping'] },
  { name: 'listing detail', paths: byId('') },
  { name: 'similar', paths: byId('/similar') },
  { name: 'search (no filter)', first: L },
  { name: 'search city big', first: `${L}?location_id=${cities[0]}` },
  { name: 'search city small', first: `${L}?location_id=${cities[Math.floor(cities.length * 0.6)]}` },
  { name: 'search furnishing=FURNISHED', first: `${L}?furnishing=FURNISHED` },
  { name: 'search property_type=house', first: `${L}?property_type=house` },
  { name: 'search max_price=800', first: `${L}?max_price=800` },
  { name: 'search min_rooms=5', first: `${L}?min_rooms=5` },
  { name: 'search q common (bright)', first: `${L}?q=bright` },
  { name: 'stats city', paths: cities.slice(0, pages).map((c) => `${L}/stats?location_id=${c}`) },
  // Filter sets the column scan answers with a residual condition or two (narrowFor in src/listings/scan-loops.ts).
  {
    name: 'stats multi-filter',
    paths: Array.from(
      { length: pages },
      (_, i) => `${L}/stats?furnishing=FURNISHED&min_rooms=${1 + (i % 4)}&max_price=${700 + 10 * i}`,
    ),
  },
  { name: 'search multi-filter', first: `${L}?furnishing=FURNISHED&min_rooms=3&max_price=1500` },
  { name: 'search q common + type', first: `${L}?q=bright&property_type=apartment&min_rooms=2` },
  // The small tables' searches: items kept as JSON text (owners, platforms, internet plans, locations) and rows
  // mapped per request (glossary, articles, insurance providers), in each locale and a few page sizes.
  ...['owners', 'platforms', 'internet/plans', 'locations', 'glossary', 'articles', 'insurance/providers'].map((r) => ({
    name: `search ${r}`,
    firsts: small(`/v1/${r}`),
  })),
];
const only = a.only?.split(',').map((s) => s.toLowerCase());
const chosen = only ? list.filter((s) => only.some((o) => s.name.toLowerCase().includes(o))) : list;

/** The first page and the pages after it, following next_cursor on NEW. */
async function walk(first: string): Promise<string[]> {
  const out: string[] = [];
  let path: string | null = first;
  while (path !== null && out.length < pages) {
    out.push(path);
    const r: Response = await fetch(servers[1].url + path, { headers: auth });
    if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
    const next: string | null | undefined = ((await r.json()) as { pagination?: { next_cursor?: string | null } })
      .pagination?.next_cursor;
    path = next ? `${first}${first.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(next)}` : null;
  }
  return out;
}
/** A body without what differs between two servers answering it: ids of the request and snapshot, and a cursor's expiry. */
const comparable = (body: string) =>
  body
    .replace(/"request_id":"[^"]*"/g, '')
    .replace(/"snapshot_id":"[^"]*"/g, '')
    .replace(/"next_cursor":"[^"]*"/g, '');

function drive(url: string, paths: string[], pid: number): Promise<number> {
  let next = 0;
  const cpu0 = procCpuSeconds(pid);
  return new Promise((done, fail) =>
    autocannon(
      {
        url: url + paths[0],
        connections,
        duration: seconds,
        headers: auth,
        requests: [
          {
            method: 'GET',
            setupRequest: (r) => {
              r.path = paths[next++ % paths.length];
              return r;
            },
          },
        ],
      },
      (err, res) => (err ? fail(err) : done(((procCpuSeconds(pid) - cpu0) * 1e6) / res.requests.total)),
    ),
  );
}

say(
  `bench:ab: old ${sides[0].dir} (${sides[0].db}), new ${sides[1].dir} (${sides[1].db}); ${chosen.length} scenarios × ${rounds} rounds × ${seconds} s a side, ${connections} connections`,
);
console.log(
  `${pad('scenario', 30)} ${lpad('requests', 8)} ${lpad('old µs', 7)} ${lpad('new µs', 7)} ${lpad('Δ µs', 6)}  rounds old | new`,
);
for (const s of chosen) {
  const paths = s.paths ?? (s.firsts ? (await Promise.all(s.firsts.map(walk))).flat() : await walk(s.first!));
  const differ: string[] = [];
  for (const p of paths.slice(0, 20)) {
    const [o, n] = await Promise.all(servers.map((v) => fetch(v.url + p, { headers: auth }).then((r) => r.text())));
    if (comparable(o) !== comparable(n)) differ.push(p);
  }
  if (differ.length) say(`  ${s.name}: ${differ.length} of 20 bodies differ between old and new, e.g. ${differ[0]}`);
  const cpu: number[][] = [[], []];
  await Promise.all(servers.map((v) => drive(v.url, paths, v.proc.pid!))); // warm-up, both at once
  for (let r = 0; r < rounds; r++)
    for (const i of r % 2 ? [1, 0] : [0, 1]) cpu[i].push(await drive(servers[i].url, paths, servers[i].proc.pid!));
  const [o, n] = cpu.map(median);
  const each = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' ');
  console.log(
    `${pad(s.name, 30)} ${lpad(String(paths.length), 8)} ${lpad(o.toFixed(0), 7)} ${lpad(n.toFixed(0), 7)} ${lpad((n - o).toFixed(0), 6)}  ${each(cpu[0])} | ${each(cpu[1])}`,
  );
}
process.exit(0);
