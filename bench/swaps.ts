// npm run bench:swaps [-- --seconds S] [--every MS] [--listings N] [--connections C]
// Swaps under load, with the real entry point (WORKERS=2) on loopback: three generated snapshots renamed over
// SNAPSHOT_PATH in turn every MS ms for S seconds, while C kept-alive connections (1 by default: it lands on one worker
// and leaves the other idle) ask for the first page without pause. Prints the swaps done, the swaps every worker
// followed, the slowest worker (ms after the instant), workers replaced, and requests sent after a switch instant
// that were answered from an older snapshot.
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKey, openKeyStore } from '../src/access/key-store.ts';
import { ensureSnapshot, fmt, ROOT } from './common.ts';

type Line = Record<string, any>;
interface Reply {
  sent: number;
  id: string | undefined;
  status: number;
}

function get(url: string, key: string, agent: Agent): Promise<{ status: number; id: string | undefined }> {
  return new Promise((resolve) => {
    const req = request(url, { agent, headers: { Authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, id: res.headers['x-snapshot-id'] as string | undefined }));
    });
    req.on('error', () => resolve({ status: 0, id: undefined }));
    req.end();
  });
}

/** The service as a process (src/main.ts under tsx); resolves its URL once it listens, and its log lines. */
async function start(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DEV_KEY: '0', LOG_REQUESTS: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Line[] = [];
  let rest = '';
  child.stdout!.on('data', (d) => {
    const parts = (rest + d).split('\n');
    rest = parts.pop()!;
    for (const p of parts) if (p.startsWith('{')) lines.push(JSON.parse(p));
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const l = lines.find((x) => x.msg === 'listening');
    if (l) return { child, lines, url: l.url as string };
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('the service did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What the log and the replies say of the swaps. */
function report(lines: Line[], replies: Reply[]) {
  const switches = lines
    .filter((l) => l.msg === 'snapshot candidate prepared by every worker; switching')
    .map((l) => ({ id: l.snapshot_id as string, at: Date.parse(l.switch_at) }));
  const done = lines.filter((l) => l.msg === 'snapshot served by every worker');
  const swapped = lines.filter((l) => l.msg === 'snapshot swapped in');
  let slowest = 0;
  let followed = 0;
  // How late the latest worker switched (the owner's skew_ms: 0 when each switched at the instant), and how long
  // after the instant the owner heard from every worker (or gave up on one).
  const skew = Math.max(0, ...done.map((l) => Number(l.skew_ms ?? 0)));
  let confirmed = 0;
  switches.forEach((s, k) => {
    // The same three files come round again: a worker's line for this switch falls before the next one's instant.
    const until = switches[k + 1]?.at ?? Number.POSITIVE_INFINITY;
    const by = swapped.filter((l) => {
      const t = Date.parse(l.time);
      return l.snapshot_id === s.id && t >= s.at - 50 && t < until;
    });
    if (new Set(by.map((l) => l.worker)).size === 2) followed++;
    for (const l of by) slowest = Math.max(slowest, Date.parse(l.time) - s.at);
    const over = done.find((l) => l.snapshot_id === s.id && Date.parse(l.time) >= s.at - 50);
    if (over) confirmed = Math.max(confirmed, Date.parse(over.time) - s.at);
  });
  // A reply to a request sent after an instant must carry that switch's id (or a later one's).
  let old = 0;
  for (const r of replies) {
    const last = switches.filter((s) => s.at <= r.sent).at(-1);
    if (last === undefined || r.id === undefined) continue;
    const later = switches.filter((s) => s.at >= last.at).map((s) => s.id);
    if (!later.includes(r.id)) old++;
  }
  return {
    switches: switches.length,
    done: done.length,
    followed,
    slowest,
    skew,
    confirmed,
    replaced: lines.filter((l) => l.msg === 'replacing a worker').length,
    old,
  };
}

async function main() {
  const { values: a } = parseArgs({
    options: {
      seconds: { type: 'string', default: '180' },
      every: { type: 'string', default: '2000' },
      listings: { type: 'string', default: '5000' },
      connections: { type: 'string', default: '1' },
    },
  });
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const files = [];
  for (const seed of [1, 2, 3]) files.push(await ensureSnapshot(Number(a.listings), seed));
  const dir = join(ROOT, '.bench-cache', `swaps-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'snapshot.db');
  copyFileSync(files[0], path);
  const keysPath = join(dir, 'keys.db');
  const store = openKeyStore(keysPath, { create: true });
  const key = createKey(store, { name: 'bench' }).key;
  store.close();
  const s = await start({
    WORKERS: '2',
    SNAPSHOT_PATH: path,
    KEYS_PATH: keysPath,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    CURSOR_SECRET: 'bench-swaps-secret-0123456789',
  });
  const stop = Date.now() + Number(a.seconds) * 1000;
  const replies: Reply[] = [];
  const loops = Array.from({ length: Number(a.connections) }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    while (Date.now() < stop) {
      const sent = Date.now();
      const r = await get(`${s.url}/v1/listings?limit=1`, key, agent);
      replies.push({ sent, ...r });
    }
    agent.destroy();
  });
  let renames = 0;
  while (Date.now() < stop) {
    await new Promise((r) => setTimeout(r, Number(a.every)));
    copyFileSync(files[++renames % files.length], `${path}.incoming`);
    renameSync(`${path}.incoming`, path);
  }
  await Promise.all(loops);
  await new Promise((r) => setTimeout(r, 3000)); // the last switch's confirmations
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
  const r = report(s.lines, replies);
  say(
    `${a.seconds} s, a file renamed in every ${a.every} ms (${renames} renames), ${a.listings} listings each, WORKERS=2`,
  );
  say(
    `${a.connections} kept-alive connection(s): ${replies.length} requests, ${replies.filter((x) => x.status !== 200).length} not 200`,
  );
  say(
    `swaps: ${r.switches} begun, ${r.done} done, ${r.followed} followed by both workers, ${r.replaced} workers replaced`,
  );
  say(
    `slowest worker: switched ${fmt(r.skew, 0)} ms late (skew_ms), its 'snapshot swapped in' line written ${fmt(r.slowest, 0)} ms after the instant`,
  );
  say(`longest wait of the owner for every worker's word: ${fmt(r.confirmed, 0)} ms after the instant`);
  say(`requests sent after an instant answered from an older snapshot: ${r.old}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
