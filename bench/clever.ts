// npm run bench:clever -- --old DIR [--db FILE] [--rounds 7] [--only cursor,small,itemjson,scan]
//
// A piece written less plainly for speed must show what it saves; this is that receipt for the pieces below. In
// process, what they cost in two checkouts (OLD, e.g. a git worktree of the commit before, and this one): the paging
// cursor (sign + verify), a page of a small table whose rows are mapped per request (glossary, articles, insurance
// providers), an item's JSON text from its row (internet plans,
// locations), and the listing column scan's pages and stats for filter sets with residual conditions. Each side's
// modules are imported from its own checkout and run against the same snapshot (the cached 1M bench snapshot unless
// given), alternating which goes first; printed: CPU µs per call, the median of the rounds, and old ÷ new.
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { ftsQuery } from '../src/routes/support/full-text.ts';
import { lpad, median, pad, ROOT, snapshotPath } from './common.ts';

const { values: a } = parseArgs({
  options: {
    old: { type: 'string' },
    db: { type: 'string', default: snapshotPath(1_000_000, 1) },
    rounds: { type: 'string', default: '7' },
    only: { type: 'string', default: 'cursor,small,itemjson,scan' },
  },
});
if (!a.old) throw new Error('usage: npm run bench:clever -- --old DIR [--db FILE] [--rounds 7]');
const rounds = Number(a.rounds);
const only = new Set(a.only!.split(','));
const dirs = [resolve(a.old), ROOT];
const db = new Database(resolve(a.db!), { readonly: true });
db.pragma('query_only = ON');
const load = (path: string) => Promise.all(dirs.map((d) => import(join(d, path))));

/**
 * CPU µs (user + system) per call of `run(i)` over `n` calls, after `n` untimed ones: CPU time, not wall time, as
 * npm run bench:ab reads it, so that other processes on a shared machine add less noise.
 */
function time(n: number, run: (i: number) => unknown): number {
  for (let i = 0; i < n; i++) run(i);
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) run(i);
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}
function compare(name: string, n: number, runs: ((i: number) => unknown)[]) {
  const us: number[][] = [[], []];
  for (let r = 0; r < rounds; r++) for (const s of r % 2 ? [1, 0] : [0, 1]) us[s].push(time(n, runs[s]));
  const [o, m] = us.map(median);
  console.log(`${pad(name, 44)} ${lpad(o.toFixed(2), 9)} ${lpad(m.toFixed(2), 9)} ${lpad((o / m).toFixed(2), 7)}`);
}
console.log(`old ${dirs[0]}, new ${dirs[1]}; ${a.db}; ${rounds} rounds`);
console.log(`${pad('µs per call', 44)} ${lpad('old', 9)} ${lpad('new', 9)} ${lpad('old÷new', 7)}`);

// The cursor: a page after a cursor verifies one and signs the next.
if (only.has('cursor')) {
  const cursors = await load('src/http/cursor.ts');
  const codecs = cursors.map((m) => m.cursorCodec('a-cursor-secret-of-the-usual-length-0123456789'));
  const scope = codecs[1].scope('/v1/listings', { locale: 'en', limit: 20, location_id: 'loc-ams' });
  const ids = Array.from({ length: 1000 }, (_, i) => `lst-${String(i * 997).padStart(7, '0')}`);
  const tokens = ids.map((id) => codecs[1].sign(id, scope));
  compare(
    'cursor verify + sign',
    20_000,
    codecs.map((c) => (i: number) => c.sign(c.verify(tokens[i % 1000], scope), scope)),
  );
}

// Small tables whose search maps each row per request.
for (const [route, n] of only.has('small')
  ? ([
      ['glossary', 2000],
      ['articles', 2000],
      ['insurance', 2000],
    ] as const)
  : []) {
  const mods = await load(`src/routes/${route}.ts`);
  const searches = mods.map((m) => {
    const p = m.prepare(db);
    return route === 'insurance' ? p.providers : p.search;
  });
  for (const locale of ['en', 'nl'])
    compare(
      `${route} page of 21 (${locale})`,
      n,
      searches.map((s) => () => s({}, null, 21, locale)),
    );
}

// Items' JSON text from rows: once per snapshot and locale in the service (smallSearch's kept items).
if (only.has('itemjson')) {
  const fields = await load('src/routes/support/fields.ts');
  const plans = db.prepare('SELECT * FROM internet_plans').all() as Record<string, unknown>[];
  const kinds = Object.fromEntries(Object.keys(plans[0]).map((k) => [k, 'value']));
  const toJson = fields.map((m) => m.itemJson(kinds));
  compare(
    'itemJson, an internet plan row',
    50_000,
    toJson.map((f) => (i: number) => f(plans[i % plans.length])),
  );
}

// The listing column scan: pages of filter sets with conditions beside the loop's primary one.
if (only.has('scan')) {
  const scans = (await load('src/listings/scan.ts')).map((m) => new m.ListingScan(db));
  const count = db.prepare('SELECT count(*) FROM listings').pluck().get() as number;
  const city = db
    .prepare(`SELECT value FROM listing_value_counts WHERE column = 'city_id' ORDER BY n DESC LIMIT 1`)
    .pluck()
    .get() as string;
  const sets: [string, Record<string, unknown>, string][] = [
    ['furnished, ≥ 3 rooms, ≤ 1500', { furnishing: 'FURNISHED', min_rooms: 3, max_price: 1500 }, 'furnishing'],
    [
      'apartment, 40-90 m², ≥ 2 rooms',
      { property_type: 'apartment', min_size: 40, max_size: 90, min_rooms: 2 },
      'property_type',
    ],
    [
      'big city, furnished, 800-2500',
      { location_id: city, furnishing: 'FURNISHED', min_price: 800, max_price: 2500 },
      'location_id',
    ],
    ['≤ 1200, house', { max_price: 1200, property_type: 'house' }, 'property_type'],
    ['q bright, apartment, ≥ 2 rooms', { fts: ftsQuery('bright'), property_type: 'apartment', min_rooms: 2 }, 'fts'],
    ['≥ 4 rooms, ≤ 2000', { min_rooms: 4, max_price: 2000 }, 'rooms'],
    // Sparse: the loop reads many chunks for a page.
    [
      'furnished house, ≤ 900',
      { furnishing: 'FURNISHED', property_type: 'house', min_rooms: 1, max_price: 900 },
      'property_type',
    ],
  ];
  for (const [name, f, hint] of sets) {
    const after = Array.from({ length: 64 }, (_, i) => Math.floor((i * count) / 64));
    compare(
      `scan page of 21: ${name}`,
      1000,
      scans.map((s) => (i: number) => s.page(f, after[i % 64], 21, hint)),
    );
  }
}
db.close();
