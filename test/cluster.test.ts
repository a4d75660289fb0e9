// One box, every core: the real entry point with WORKERS=2 (node:cluster). Limits count across the workers
// exactly, a revoked key is refused by every worker, a killed worker comes back without costing the other's
// requests, /metrics merges the workers, SIGHUP reaches every worker and SIGTERM drains them all.
import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import type { Agent } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { changeKey, openKeyStore } from '../src/access/key-store.ts';
import { tempDir } from './support/files.ts';
import { answeredBy, connections, get, type Listening, type Reply, spawnService, until } from './support/processes.ts';
import { issueKey } from './support/server.ts';
import { changedSource, fixtureSnapshot, snapshotCopy } from './support/snapshots.ts';

const L = 12; // requests per key per minute
const A = 4; // failed authentications per address per minute

let limited: Listening; // small limits, the fixture's shared snapshot
let main: Listening; // large limits, metrics, its own snapshot path
let limitedKeys: string;
let mainSnapshot: string;
let key: string;

before(async () => {
  mainSnapshot = await snapshotCopy();
  limitedKeys = join(tempDir(), 'keys.db');
  issueKey(limitedKeys);
  const common = { WORKERS: '2', CURSOR_SECRET: 'cluster-test-secret-0123456789' };
  [limited, main] = await Promise.all([
    spawnService({
      ...common,
      KEYS_PATH: limitedKeys,
      RATE_LIMIT_PER_MINUTE: String(L),
      AUTH_FAILURES_PER_MINUTE: String(A),
      TRUST_PROXY: '1',
    }),
    spawnService({
      ...common,
      SNAPSHOT_PATH: mainSnapshot,
      SNAPSHOT_CHECK_MS: '600000',
      METRICS_PORT: '0',
      RATE_LIMIT_PER_MINUTE: '1000000',
    }),
  ]);
  key = main.key!;
});
after(async () => {
  await Promise.all([limited?.stop(), main?.stop()]);
});

/** Sends `n` requests over the connections (each connection one at a time, all connections at once). */
async function spread(
  url: string,
  k: string | null,
  conns: Agent[],
  n: number,
  headers: Record<string, string> = {},
): Promise<Reply[]> {
  const out: Reply[] = [];
  let sent = 0;
  await Promise.all(
    conns.map(async (agent) => {
      while (sent < n) {
        sent++;
        out.push(await get(url, k, agent, headers));
      }
    }),
  );
  return out;
}

const count = (rs: Reply[], status: number) => rs.filter((r) => r.status === status).length;
const pidsOf = async (m: Listening, rs: Reply[]) => new Set(await Promise.all(rs.map((r) => answeredBy(m, r))));
const workerPids = (m: Listening) =>
  m
    .lines()
    .filter((l) => l.msg === 'worker ready')
    .map((l) => l.pid as number);

describe('WORKERS=2: one port, two workers, limits counted in total', () => {
  it('runs two workers behind one port, and they both answer', async () => {
    assert.equal(new Set(workerPids(limited)).size, 2, 'two workers started');
    const rs = await spread(`${limited.url}/v1/ping`, null, connections(4), 4);
    assert.equal(count(rs, 200), 4);
    assert.equal((await pidsOf(limited, rs)).size, 2, 'connections are spread over both workers');
  });

  it(`lets L=${L} requests of a key through in total, whichever worker answers, and refuses the rest with 429`, async () => {
    const k = issueKey(limitedKeys).key;
    const rs = await spread(`${limited.url}/v1/listings?limit=1`, k, connections(4), L + 5);
    assert.equal(count(rs, 200), L, 'exactly L answers');
    assert.equal(count(rs, 429), 5, 'exactly k refusals');
    const refused = rs.find((r) => r.status === 429)!;
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal((await pidsOf(limited, rs)).size, 2, 'both workers answered (a per-worker count would refuse none)');
  });

  it('refuses a revoked key on its next request in every worker', async () => {
    const k = issueKey(limitedKeys);
    const conns = connections(4);
    const before = await spread(`${limited.url}/v1/owners?limit=1`, k.key, conns, 4);
    assert.equal(count(before, 200), 4);
    const db = openKeyStore(limitedKeys, { create: false });
    changeKey(db, k.id, 'revoke');
    db.close();
    // The next request on every connection, so on both workers.
    const next = await Promise.all(conns.map((agent) => get(`${limited.url}/v1/owners?limit=1`, k.key, agent)));
    assert.deepEqual(
      next.map((r) => r.status),
      [401, 401, 401, 401],
    );
    assert.equal(next[0].body.error.code, 'unauthorized');
    assert.equal((await pidsOf(limited, next)).size, 2, 'both workers refused it');
  });

  it(`counts failed authentications per address in total: A=${A} answers 401, the rest 429`, async () => {
    const bad = 'nlr_live_000000000000000000000000000000000000000000000000';
    // An address of its own (TRUST_PROXY=1): the revocation test's 401s counted for 127.0.0.1.
    const from = { 'X-Forwarded-For': '203.0.113.9' };
    const rs = await spread(`${limited.url}/v1/listings`, bad, connections(4), A + 3, from);
    assert.equal(count(rs, 401), A);
    assert.equal(count(rs, 429), 3);
    assert.equal((await pidsOf(limited, rs)).size, 2, 'both workers answered');
  });
});

describe('WORKERS=2: supervision, metrics, signals', () => {
  it('serves one /metrics for all workers on METRICS_PORT, with a worker label', async () => {
    await spread(`${main.url}/v1/listings?limit=1`, key, connections(4), 8);
    const text = await (await fetch(`${main.metricsUrl}`)).text();
    for (const w of ['0', '1'])
      assert.match(
        text,
        new RegExp(`nlr_http_requests_total\\{route="/v1/listings",status="200",worker="${w}"\\} \\d`),
      );
    assert.match(text, /^nlr_cluster_workers 2$/m);
    assert.match(text, /^nlr_cluster_worker_restarts_total 0$/m);
    // The primary's listener answers like a single process's: 405 with Allow for another method, 404 elsewhere.
    const post = await fetch(`${main.metricsUrl}`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const root = await fetch(new URL('/', main.metricsUrl));
    assert.equal(root.status, 404);
    assert.equal(await root.text(), 'not found: only /metrics is served here\n');
  });

  it('starts another worker when one is killed, and the other loses no request meanwhile', async () => {
    const conns = connections(6);
    const first = await Promise.all(conns.map((agent) => get(`${main.url}/v1/listings?limit=1`, key, agent)));
    const pids = await Promise.all(first.map((r) => answeredBy(main, r)));
    const victim = pids[0];
    const survivors = conns.filter((_, i) => pids[i] !== victim);
    assert.ok(survivors.length > 0, 'some connections are on the other worker');
    let stop = false;
    const results: (number | string)[] = [];
    const loops = survivors.map(async (agent) => {
      while (!stop) {
        const r = await get(`${main.url}/v1/listings?limit=2`, key, agent).catch((e: Error) => e.message);
        results.push(typeof r === 'string' ? r : r.status);
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    process.kill(victim, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1200));
    stop = true;
    await Promise.all(loops);
    assert.ok(results.length > 20, `requests went on (${results.length})`);
    assert.deepEqual(
      results.filter((s) => s !== 200),
      [],
      'every request of the surviving worker answered 200',
    );
    const died = await until('the death logged', () =>
      main.lines().find((l) => l.msg === 'worker died; starting another' && l.pid === victim),
    );
    assert.equal(died.signal, 'SIGKILL');
    const victimLine = main.lines().find((l) => l.pid === victim && l.worker !== undefined && l.msg !== died.msg);
    assert.equal(typeof died.worker, 'string', "the worker field is a string in the primary's lines too");
    if (victimLine) assert.equal(died.worker, victimLine.worker, "the same value as in the worker's own lines");
    const fresh = await until('a new worker ready', () => workerPids(main).find((p) => !pids.includes(p)), 20_000);
    // New connections reach the new worker too (the primary hands them out in turn).
    await until('a request answered by the new worker', async () => {
      const r = await get(`${main.url}/v1/listings?limit=1`, key, connections(1)[0]);
      return r.status === 200 && (await answeredBy(main, r)) === fresh;
    });
    const text = await (await fetch(`${main.metricsUrl}`)).text();
    assert.match(text, /^nlr_cluster_worker_restarts_total 1$/m);
    assert.match(text, /^nlr_cluster_workers 2$/m);
  });

  it('swaps a snapshot renamed into place in every worker at once, and looks at the path on SIGHUP to the primary', async () => {
    const old = (await get(`${main.url}/v1/listings?limit=1`, key)).headers['x-snapshot-id'];
    const next = await snapshotCopy((await fixtureSnapshot(changedSource())).path, `${mainSnapshot}.next`);
    renameSync(next, mainSnapshot);
    main.child.kill('SIGHUP'); // SNAPSHOT_CHECK_MS is 10 minutes: the signal or the kernel's word makes the owner look
    const swapped = await until('both workers swapped', () => {
      const ls = main.lines().filter((l) => l.msg === 'snapshot swapped in');
      return new Set(ls.map((l) => l.pid)).size === 2 && ls;
    });
    assert.notEqual(swapped[0].snapshot_id, old);
    assert.equal(swapped[0].previous_snapshot_id, old);
    const rs = await spread(`${main.url}/v1/listings?limit=1`, key, connections(4), 4);
    assert.deepEqual(new Set(rs.map((r) => r.headers['x-snapshot-id'])), new Set([swapped[0].snapshot_id]));
    // Nothing changed since: the owner (the primary) says so, which only the signal makes it do.
    await new Promise((r) => setTimeout(r, 200)); // any check the swap started is over
    main.child.kill('SIGHUP');
    const said = await until('the owner answered the signal', () =>
      main.lines().find((l) => /SIGHUP: the snapshot file is the one being served/.test(String(l.msg))),
    );
    assert.equal(said.worker, undefined, 'said once, by the primary');
  });

  it('drains every worker on SIGTERM and exits 0 when all have', async () => {
    const code = await main.stop();
    assert.equal(code, 0, main.stderr());
    const lines = main.lines();
    assert.equal(lines.filter((l) => l.msg === 'drained').length, 2, 'both workers drained');
    assert.ok(lines.some((l) => l.msg === 'stopped: every worker has exited'));
  });
});
