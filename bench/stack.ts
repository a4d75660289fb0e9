// npm run bench:stack [-- --rounds 6 --seconds 2 --connections 16]
//
// How much of a listing detail's CPU is the stack and how much is the service. Four servers answer the same
// 1,000 distinct listing details of the 1M snapshot, driven in turn by autocannon (rounds alternate the order):
// the service as npm run bench serves it (bundled, every request keyed, limited, logged); the bare stack
// (bench/stack-server.ts: node:http and better-sqlite3 with the service's own detail statement, nothing else); the bare
// stack writing the service's headers too; and the reference of npm run bench (a bare node:http server replaying the
// service's bytes). Printed per server: server
// CPU µs per request (/proc, user + system) and × the reference's, medians of the rounds.
// Bounded: every run lasts --seconds; the servers are children, stopped at the end.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from '../scripts/bundle-options.ts';
import { CACHE, ensureSnapshot, fmt, lpad, median, pad, procCpuSeconds, ROOT, startBenchServer } from './common.ts';
import { pick, scenarios } from './scenarios.ts';
import { captureDistinct, pools } from './variants.ts';

const { values: a } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
  },
});
const rounds = Number(a.rounds),
  seconds = Number(a.seconds),
  connections = Number(a.connections);
if (!(rounds >= 1 && rounds <= 50) || !(seconds > 0 && seconds <= 30) || !(connections >= 1 && connections <= 256))
  throw new Error('bad arguments: --rounds 1-50, --seconds 0-30, --connections 1-256');
const say = (s: string) => process.stderr.write(`${s}\n`);
const dir = mkdtempSync(join(tmpdir(), 'nlr-stack-'));
const dbPath = await ensureSnapshot(1_000_000, 1, say);

const bundled = async (entry: string, name: string) => {
  const out = join(CACHE, 'bench-dist', name);
  await build({ ...BUNDLE_OPTIONS, entryPoints: [entry], outfile: out, logLevel: 'silent' });
  return out;
};
/** A child that prints {"ready": url} on stdout; it ends when its stdin closes. */
async function child(args: string[], env: Record<string, string>): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code})`)));
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      const m = JSON.parse(l) as { ready?: string };
      if (m.ready) resolve(m.ready);
    });
  });
  return { proc, url };
}

const ours = await startBenchServer(
  [await bundled('bench/server-wrapper.ts', 'stack-service.mjs')],
  dbPath,
  dir,
  'stack',
);
const stack = await child([await bundled('bench/stack-server.ts', 'stack-bare.mjs')], { SNAPSHOT_PATH: dbPath });
const ref = await child(['--import', 'tsx', 'bench/reference-server.ts'], { PORT: '0' });
const auth = { authorization: `Bearer ${ours.key}` };
const detail = scenarios(pick(dbPath)).find((s) => s.name === 'listing detail')!;
const { captures } = await captureDistinct(ours.url, auth, detail.bases!(pools(dbPath, 1000)), {
  n: 1000,
  walk: false,
  skip: 0,
});
const capturePath = join(dir, 'capture.json');
writeFileSync(capturePath, JSON.stringify(captures));
ref.proc.stdin!.write(`load ${capturePath}\n`);
await new Promise((r) => setTimeout(r, 500));
const paths = captures.map((c) => c.url);
// The service's headers but its request id and length (each answer's own), as the bare stack's fourth server writes them.
const headers = captures[0].headers.filter(([k]) => k !== 'x-request-id' && k !== 'content-length');
const stackH = await child([join(CACHE, 'bench-dist', 'stack-bare.mjs')], {
  SNAPSHOT_PATH: dbPath,
  STACK_HEADERS: JSON.stringify(headers),
});
for (const p of paths.slice(0, 20)) {
  const r = await fetch(stack.url + p);
  if (r.status !== 200) throw new Error(`bare stack answered ${r.status} for ${p}`);
}

const servers = [
  { name: 'the service (keyed, limited, logged)', pid: ours.server.pid!, url: ours.url, us: [] as number[] },
  { name: 'bare stack: node:http + better-sqlite3', pid: stack.proc.pid!, url: stack.url, us: [] as number[] },
  { name: "bare stack + the service's headers", pid: stackH.proc.pid!, url: stackH.url, us: [] as number[] },
  { name: 'reference: node:http replaying bytes', pid: ref.proc.pid!, url: ref.url, us: [] as number[] },
];
/** One run: server CPU µs per answered request. */
async function run(s: (typeof servers)[number], secs: number): Promise<number> {
  let next = 0;
  const c0 = procCpuSeconds(s.pid);
  const r = await autocannon({
    url: s.url + paths[0],
    connections,
    duration: secs,
    headers: auth,
    requests: [{ method: 'GET', setupRequest: (q) => ({ ...q, path: paths[next++ % paths.length] }) }],
  });
  await new Promise((res) => setTimeout(res, 150)); // the requests already read are answered, and counted
  return ((procCpuSeconds(s.pid) - c0) * 1e6) / r.requests.total;
}
say(
  `bench:stack: ${paths.length} distinct listing details, ${rounds} rounds × ${seconds} s per server, ${connections} connections`,
);
for (const s of servers) await run(s, 1);
const ratios: number[][] = servers.map(() => []);
for (let k = 0; k < rounds; k++) {
  const order = servers.map((_, i) => (i + k) % servers.length);
  const got: number[] = [];
  for (const i of order) got[i] = await run(servers[i], seconds);
  servers.forEach((s, i) => {
    s.us.push(got[i]);
    ratios[i].push(got[i] / got[servers.length - 1]);
  });
}
console.log(`${pad('server', 40)} ${lpad('CPU µs/req', 11)} ${lpad('× ref', 6)}`);
for (const [i, s] of servers.entries())
  console.log(`${pad(s.name, 40)} ${lpad(median(s.us).toFixed(0), 11)} ${lpad(fmt(median(ratios[i])), 6)}`);
for (const p of [ours.server, stack.proc, stackH.proc, ref.proc]) {
  p.stdin?.end();
  p.kill('SIGTERM');
}
