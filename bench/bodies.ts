// npm run bench:bodies -- --out FILE [--listings N] [--n PER_SCENARIO]: the bodies of a fixed request set, for
// comparing two versions of the server byte for byte. Every scenario of `npm run bench` (bench/scenarios.ts) with its
// distinct requests (bench/variants.ts: ids, filter values, locales and the pages after each first page, followed
// by next_cursor), answered by the server of this checkout (src/main.ts's wiring under tsx) on the cached bench
// snapshot. Each answer is written as its URL, status, Content-Type and body, with what differs between two runs of
// the same code masked: meta.request_id, and next_cursor and cursor values (they carry an expiry time). The URLs
// are the same in both runs as long as the cursors are masked in them too. Compare two files with `cmp` or `diff`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureSnapshot, startBenchServer } from './common.ts';
import { pick, scenarios } from './scenarios.ts';
import { captureDistinct, pools } from './variants.ts';

const { values: a } = parseArgs({
  options: {
    out: { type: 'string' },
    listings: { type: 'string', default: '1000000' },
    n: { type: 'string', default: '60' },
  },
});
if (!a.out) throw new Error('usage: npm run bench:bodies -- --out FILE [--listings N] [--n PER_SCENARIO]');
const say = (s: string) => process.stderr.write(`${s}\n`);
const dir = mkdtempSync(join(tmpdir(), 'nlr-bodies-'));
const dbPath = await ensureSnapshot(Number(a.listings), 1, say);
const { server, url, key } = await startBenchServer(
  ['--import', 'tsx', 'bench/server-wrapper.ts'],
  dbPath,
  dir,
  'bodies',
);
const mask = (s: string) =>
  s
    .replace(/"request_id":"[^"]*"/g, '"request_id":"-"')
    .replace(/"next_cursor":"[^"]*"/g, '"next_cursor":"-"')
    .replace(/([?&]cursor=)[^&]*/g, '$1-');
const pool = pools(dbPath, Number(a.n));
const out: string[] = [];
let count = 0;
for (const s of scenarios(pick(dbPath))) {
  const bases = s.bases ? s.bases(pool) : [s.path];
  const skip = (s.deepPages ?? 1) - 1;
  const { captures } = await captureDistinct(url, { authorization: `Bearer ${key}` }, bases, {
    n: Number(a.n),
    walk: s.walk === true || skip > 0,
    skip,
  });
  for (const c of captures) {
    const type = c.headers.find(([k]) => k.toLowerCase() === 'content-type')?.[1];
    out.push(`${mask(c.url)}\n${c.status} ${type}\n${mask(Buffer.from(c.body_base64, 'base64').toString('utf8'))}\n`);
    count++;
  }
}
server.kill('SIGTERM');
writeFileSync(a.out, out.join('\n'));
say(`${count} answers written to ${a.out}`);
