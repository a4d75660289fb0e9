// One served snapshot per service (real processes): a refused file at SNAPSHOT_PATH costs no start-up and no
// worker, every worker switches to a new snapshot at one instant, and /readyz and /metrics say when the file at the
// path was refused. WORKERS=2, and the single process (WORKERS=1) the same.
import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { truncatedCopy as truncated } from './support/bad-snapshots.ts';
import { tempDir } from './support/files.ts';
import { freePort } from './support/nginx.ts';
import {
  answeredBy,
  connections,
  get,
  type Listening,
  launchService,
  type ProcessEnv,
  sleep,
  spawnService,
  until,
} from './support/processes.ts';
import { issueKey } from './support/server.ts';
import { changedSource, fixtureSnapshot } from './support/snapshots.ts';

let good: string; // the fixture snapshot (shared: read only)
let next: string; // another snapshot (one listing more): another id (shared: read only)
before(async () => {
  good = (await fixtureSnapshot()).path;
  next = (await fixtureSnapshot(changedSource())).path;
});

/** A folder of its own with the served path (a copy of `good`) and a key store with one key. */
function deployment() {
  const dir = tempDir();
  const path = join(dir, 'snapshot.db');
  copyFileSync(good, path);
  const keys = join(dir, 'keys.db');
  const key = issueKey(keys).key;
  return { dir, path, keys, key };
}
/** `head -c 4096 snapshot.db > bad.db`: the first page of a snapshot, a copy cut short, in the deployment's folder. */
const truncatedCopy = (dir: string) => truncated(good, 4096, join(dir, 'bad.db'));
/**
 * The settings of a service on deployment `d` (its path and its key store), with two workers, metrics and no rate
 * limit to reach, and `env`.
 */
const settings = (d: ReturnType<typeof deployment>, env: ProcessEnv = {}) => ({
  WORKERS: '2',
  SNAPSHOT_PATH: d.path,
  KEYS_PATH: d.keys,
  METRICS_PORT: '0',
  RATE_LIMIT_PER_MINUTE: '1000000',
  CURSOR_SECRET: 'owner-test-secret-0123456789',
  ...env,
});
/**
 * A service on a deployment of its own (`prepare` may arrange its folder first) with these settings: started before
 * the suite's tests, stopped after; `served` is the id it started on, kept up to date by the tests that swap.
 */
function deployed(env: ProcessEnv, prepare: (d: ReturnType<typeof deployment>) => void = () => {}) {
  const s = { d: {} as ReturnType<typeof deployment>, m: {} as Listening, served: '' };
  before(async () => {
    s.d = deployment();
    prepare(s.d);
    s.m = await spawnService(settings(s.d, env));
    s.served = s.m.lines().find((l) => l.msg === 'listening')!.snapshot_id;
  });
  after(async () => {
    await s.m.stop?.();
  });
  return s;
}
const links = (dir: string) => readdirSync(dir).filter((n) => n.includes('.served-'));

/** One GET on a new connection: its status, or the connection's error code (ECONNREFUSED, …). */
function probe(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}
const readyz = async (url: string) => {
  const r = await fetch(`${url}/readyz`);
  return { status: r.status, body: await r.json() };
};
const metricsText = async (m: Listening) => (await fetch(`${m.metricsUrl}`)).text();
const ready = (m: Pick<Listening, 'lines'>) => m.lines().filter((l) => l.msg === 'worker ready');

describe('WORKERS=2: a truncated file moved over SNAPSHOT_PATH while the second worker starts', () => {
  let m: ReturnType<typeof launchService> | undefined;
  after(async () => {
    await m?.stop();
  });

  it('costs no start-up: 0 refused connections and 0 non-200 from the first answer to 2 s after listening', async () => {
    const d = deployment();
    const bad = truncatedCopy(d.dir);
    const port = await freePort();
    m = launchService(settings(d, { PORT: String(port) }));
    const ping = `http://127.0.0.1:${port}/v1/ping`;
    let gone = false;
    void m.exited.then(() => (gone = true));
    await until('worker 0 answers /v1/ping', async () => !gone && (await probe(ping)) === 200, 60_000);
    assert.equal(ready(m).length, 1, 'worker 1 is still starting');
    renameSync(bad, d.path); // mv bad.db snapshot.db
    const seen: (number | string)[] = [];
    const deadline = Date.now() + 60_000;
    let listeningAt: number | null = null;
    while (Date.now() < deadline && (listeningAt === null || Date.now() < listeningAt + 2_000)) {
      seen.push(await probe(ping));
      if (listeningAt === null && m.lines().some((l) => l.msg === 'listening')) listeningAt = Date.now();
      if (gone && seen.length > 20) break;
    }
    assert.ok(listeningAt !== null, `the service started: ${m.stderr()}`);
    assert.ok(seen.length > 20, `probes went on (${seen.length})`);
    assert.deepEqual(
      seen.filter((s) => s !== 200),
      [],
      'every probe after the first answer got 200',
    );
    const workers = ready(m);
    assert.equal(new Set(workers.map((l) => l.pid)).size, 2, 'both workers started');
    assert.equal(workers[0].snapshot_id, workers[1].snapshot_id, 'on the snapshot served');
    const r = await readyz(`http://127.0.0.1:${port}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ready');
    assert.equal(r.body.snapshot.id, workers[0].snapshot_id);
    assert.match(r.body.path_refused, /was refused .*truncated \(4096 of \d+ bytes\).*a new start .* would fail/);
    const listening = m.lines().find((l) => l.msg === 'listening')!;
    const text = await (await fetch(`${listening.metrics_url}`)).text();
    assert.match(text, /^nlr_snapshot_path_refused\{worker="0"\} 1$/m);
    assert.match(text, /^nlr_snapshot_path_refused\{worker="1"\} 1$/m);
  });
});

describe('WORKERS=2: a bad file at the first start', () => {
  it('is refused with the one-line message, exit 1, and no link left behind', async () => {
    const d = deployment();
    renameSync(truncatedCopy(d.dir), d.path);
    const m = launchService(settings(d));
    const t = setTimeout(() => m.child.kill('SIGKILL'), 60_000);
    const code = await m.exited;
    clearTimeout(t);
    assert.equal(code, 1);
    assert.equal(
      m.stderr().trim(),
      `start-up failed: SNAPSHOT_PATH: cannot open snapshot ${d.path}: it is truncated (4096 of ${readFileSync(good).length} bytes)`,
    );
    assert.deepEqual(links(d.dir), []);
  });
});

describe('WORKERS=2: a worker killed while a refused file sits at the path', () => {
  // SNAPSHOT_CHECK_MS of 10 minutes: the kernel's word or SIGHUP makes the owner look.
  const s = deployed({ SNAPSHOT_CHECK_MS: '600000' });

  /** SIGKILLs the worker with this pid; resolves its successor's "worker ready" line and the ms it took. */
  async function killAndWait(pid: number) {
    const before = ready(s.m).length;
    const t0 = Date.now();
    process.kill(pid, 'SIGKILL');
    const line = await until('a new worker ready', () => ready(s.m)[before], 30_000);
    return { line, ms: Date.now() - t0 };
  }

  it('starts a worker killed while a truncated file sits at the path, on the served snapshot, as soon as any restart', async () => {
    // A plain restart first: how long a worker takes to start on this machine now.
    const first = ready(s.m)[0].pid;
    const plain = await killAndWait(first);
    renameSync(truncatedCopy(s.d.dir), s.d.path);
    s.m.child.kill('SIGHUP');
    const refusal = await until('the refusal', () =>
      s.m.lines().find((l) => l.msg === `snapshot candidate refused; still serving ${s.served}`),
    );
    assert.match(refusal.reason, /truncated/);
    const victim = ready(s.m).find((l) => l.pid !== first && l.pid !== plain.line.pid)!.pid;
    const back = await killAndWait(victim);
    const bound = Math.max(1_000, 2 * plain.ms);
    assert.ok(back.ms <= bound, `back in ${back.ms} ms (a plain restart took ${plain.ms} ms; bound ${bound} ms)`);
    assert.equal(back.line.snapshot_id, s.served, 'started on the served snapshot, not the file at the path');
    assert.ok(!s.m.lines().some((l) => l.msg === 'a new worker failed to start'));
    // It answers, under the served id.
    const r = await until('an answer from the new worker', async () => {
      const a = await get(`${s.m.url}/v1/listings?limit=1`, s.d.key, connections(1)[0]);
      return (await answeredBy(s.m, a)) === back.line.pid && a;
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-snapshot-id'], s.served);
    const z = await readyz(s.m.url);
    assert.equal(z.status, 200);
    assert.match(z.body.path_refused, /truncated/);
    const text = await metricsText(s.m);
    assert.match(text, /^nlr_cluster_workers 2$/m);
    assert.match(text, /^nlr_snapshot_path_refused\{worker="\d"\} 1$/m);
  });
});

describe('WORKERS=2: swaps under load, and the served file written in place', () => {
  // SNAPSHOT_PATH is a symbolic link (snapshot.db -> snap-a.db), re-pointed to deploy, as `ln -sfn` does: nothing is
  // written to the served file, so only the interval (3 s here, on each process's own phase) sees the change.
  const s = deployed({ SNAPSHOT_CHECK_MS: '3000' }, (d) => {
    copyFileSync(d.path, join(d.dir, 'snap-a.db'));
    unlinkSync(d.path);
    symlinkSync('snap-a.db', d.path);
  });

  /**
   * Requests on 8 connections (both workers) while `deploy` puts another snapshot at the path: every answer 200 under
   * the old or the new id, and no old id for a request sent after the first new answer was received (skew 0).
   */
  async function swapUnderLoad(deploy: () => void) {
    const replies: { sent: number; received: number; status: number; id: unknown; rid: unknown }[] = [];
    let stop = false;
    const loops = connections(8).map(async (agent) => {
      while (!stop) {
        const sent = Date.now();
        const r = await get(`${s.m.url}/v1/listings?limit=1`, s.d.key, agent);
        replies.push({
          sent,
          received: Date.now(),
          status: r.status,
          id: r.headers['x-snapshot-id'],
          rid: r.headers['x-request-id'],
        });
      }
    });
    await sleep(300);
    const swapsBefore = s.m.lines().filter((l) => l.msg === 'snapshot swapped in').length;
    deploy();
    const swaps = await until(
      'both workers swapped',
      () => {
        const ls = s.m
          .lines()
          .filter((l) => l.msg === 'snapshot swapped in')
          .slice(swapsBefore);
        return new Set(ls.map((l) => l.pid)).size === 2 && ls;
      },
      20_000,
    );
    await sleep(300);
    stop = true;
    await Promise.all(loops);
    const old = s.served;
    const newId = swaps[0].snapshot_id;
    assert.notEqual(newId, old);
    assert.deepEqual(new Set(replies.map((r) => r.status)), new Set([200]), 'every answer 200');
    assert.deepEqual(new Set(replies.map((r) => r.id)), new Set([old, newId]), 'the old or the new id, no other');
    const firstNew = Math.min(...replies.filter((r) => r.id === newId).map((r) => r.received));
    const late = replies.filter((r) => r.id === old && r.sent >= firstNew);
    assert.deepEqual(
      late.map((r) => `${r.id} sent ${r.sent - firstNew} ms after the first new answer`),
      [],
      'no old answer after the switch (skew 0)',
    );
    // Both workers answered under each id (the load reached both before and after the switch).
    const last = replies.at(-1)!.rid;
    await until('the last request logged', () => s.m.lines().some((l) => l.request_id === last));
    const pidOf = new Map(s.m.lines().map((l) => [l.request_id, l.pid]));
    for (const id of [old, newId])
      assert.equal(
        new Set(replies.filter((r) => r.id === id && pidOf.has(r.rid)).map((r) => pidOf.get(r.rid))).size,
        2,
        String(id),
      );
    const owner = await until('the owner says every worker serves it', () =>
      s.m.lines().find((l) => l.msg === 'snapshot served by every worker' && l.snapshot_id === newId),
    );
    assert.equal(owner.workers, 2);
    assert.equal(owner.skew_ms, 0, 'each worker switched at the instant it was given');
    const z = await readyz(s.m.url);
    assert.equal(z.body.path_refused, null, 'the file at the path is the one served');
    assert.match(await metricsText(s.m), /^nlr_snapshot_path_refused\{worker="\d"\} 0$/m);
    s.served = newId;
  }

  it('switches every worker at one instant when the symbolic link is re-pointed (seen by the interval)', async () => {
    copyFileSync(next, join(s.d.dir, 'snap-b.db'));
    await swapUnderLoad(() => {
      symlinkSync('snap-b.db', `${s.d.path}.new`);
      renameSync(`${s.d.path}.new`, s.d.path); // ln -sfn snap-b.db snapshot.db
    });
    assert.equal(links(s.d.dir).length, 1, 'one link, to the file served (snap-b.db)');
  });

  it('switches every worker at one instant when a file is renamed over the path (and SIGHUP)', async () => {
    await swapUnderLoad(() => {
      copyFileSync(good, `${s.d.path}.incoming`);
      renameSync(`${s.d.path}.incoming`, s.d.path);
      s.m.child.kill('SIGHUP');
    });
  });

  it('answers 503 from every worker when the served file is written in place, and serves again once it is valid', async () => {
    writeFileSync(s.d.path, 'not a snapshot '.repeat(1000)); // the same inode: every worker reads it
    await until('both workers answer 503', async () => {
      const rs = await Promise.all(connections(4).map((a) => get(`${s.m.url}/v1/listings?limit=1`, s.d.key, a)));
      return rs.every((r) => r.status === 503);
    });
    const z = await readyz(s.m.url);
    assert.equal(z.status, 503);
    assert.equal(z.body.status, 'snapshot_damaged');
    copyFileSync(next, s.d.path); // in place again, a valid snapshot this time
    await until('both workers answer 200', async () => {
      const rs = await Promise.all(connections(4).map((a) => get(`${s.m.url}/v1/listings?limit=1`, s.d.key, a)));
      return rs.every((r) => r.status === 200 && r.headers['x-snapshot-id'] !== s.served);
    });
  });

  it('removes its links to the served snapshot when it stops', async () => {
    assert.equal(links(s.d.dir).length, 1, `one link while serving: ${links(s.d.dir)}`);
    assert.equal(await s.m.stop(), 0, s.m.stderr());
    assert.deepEqual(links(s.d.dir), []);
  });
});

describe('WORKERS=1: the process is its own owner, with the same behaviour', () => {
  let m: Listening | undefined;
  after(async () => {
    await m?.stop();
  });

  it('keeps serving through a refused file, says so in /readyz and /metrics, and swaps a good one in', async () => {
    const d = deployment();
    m = await spawnService(settings(d, { WORKERS: '1', SNAPSHOT_CHECK_MS: '600000' }));
    const main = m;
    const served = main.lines().find((l) => l.msg === 'listening')!.snapshot_id;
    const agent = connections(1)[0];
    const replies: { sent: number; received: number; status: number; id: unknown }[] = [];
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        const sent = Date.now();
        const r = await get(`${main.url}/v1/listings?limit=1`, d.key, agent);
        replies.push({ sent, received: Date.now(), status: r.status, id: r.headers['x-snapshot-id'] });
      }
    })();
    renameSync(truncatedCopy(d.dir), d.path);
    main.child.kill('SIGHUP');
    await until('the refusal', () =>
      main.lines().find((l) => l.msg === `snapshot candidate refused; still serving ${served}`),
    );
    let z = await readyz(main.url);
    assert.equal(z.status, 200);
    assert.equal(z.body.status, 'ready');
    assert.match(z.body.path_refused, /truncated/);
    assert.match(await metricsText(main), /^nlr_snapshot_path_refused 1$/m);
    assert.equal(links(d.dir).length, 1, 'a link to the served snapshot');
    const tmp = `${d.path}.incoming`;
    copyFileSync(next, tmp);
    renameSync(tmp, d.path);
    main.child.kill('SIGHUP');
    const swapped = await until('swapped', () => main.lines().find((l) => l.msg === 'snapshot swapped in'));
    await sleep(200);
    stop = true;
    await loop;
    z = await readyz(main.url);
    assert.equal(z.body.path_refused, null);
    assert.match(await metricsText(main), /^nlr_snapshot_path_refused 0$/m);
    assert.deepEqual(new Set(replies.map((r) => r.status)), new Set([200]));
    assert.deepEqual(new Set(replies.map((r) => r.id)), new Set([served, swapped.snapshot_id]));
    const firstNew = Math.min(...replies.filter((r) => r.id === swapped.snapshot_id).map((r) => r.received));
    assert.equal(replies.filter((r) => r.id === served && r.sent >= firstNew).length, 0);
    assert.equal(links(d.dir).length, 1, 'the old link removed, the new one kept');
    assert.equal(await main.stop(), 0, main.stderr());
    assert.deepEqual(links(d.dir), [], 'no link left after the stop');
  });
});

describe('WORKERS=2 where no link can be kept beside SNAPSHOT_PATH (a symbolic link to another file system)', () => {
  const shm = '/dev/shm';
  const skip =
    existsSync(shm) && statSync(shm).dev !== statSync(tmpdir()).dev
      ? undefined
      : `needs ${shm} on another file system than ${tmpdir()}`;
  let m: Listening | undefined;
  let linkDir: string | undefined;
  after(async () => {
    await m?.stop();
    if (linkDir) rmSync(linkDir, { recursive: true, force: true });
  });

  it('opens the path checking its inode: a restart on another file fails, the service goes on, and says so', {
    skip,
  }, async () => {
    const d = deployment();
    const dir = mkdtempSync(join(shm, 'nlr-owner-test-'));
    linkDir = dir;
    const path = join(dir, 'snapshot.db');
    symlinkSync(d.path, path);
    const point = (target: string) => {
      symlinkSync(target, `${path}.new`);
      renameSync(`${path}.new`, path);
    };
    m = await spawnService(settings(d, { SNAPSHOT_PATH: path, SNAPSHOT_CHECK_MS: '600000' }));
    const main = m;
    const served = main.lines().find((l) => l.msg === 'listening')!.snapshot_id;
    const degraded = main.lines().find((l) => /^cannot keep a link to the served snapshot/.test(String(l.msg)));
    assert.ok(degraded, 'the owner says it cannot keep a link');
    assert.match(degraded.reason, /EXDEV|cross-device/);
    point(truncatedCopy(d.dir));
    main.child.kill('SIGHUP');
    await until('the refusal', () =>
      main.lines().find((l) => l.msg === `snapshot candidate refused; still serving ${served}`),
    );
    process.kill(ready(main)[0].pid, 'SIGKILL');
    const failed = await until('the restart fails', () =>
      main.lines().find((l) => l.msg === 'a new worker failed to start'),
    );
    assert.match(failed.error, /is not the snapshot being served/);
    const rs = await Promise.all(connections(4).map((a) => get(`${main.url}/v1/listings?limit=1`, d.key, a)));
    assert.deepEqual(
      rs.map((r) => [r.status, r.headers['x-snapshot-id']]),
      rs.map(() => [200, served]),
      'the other worker serves on',
    );
    const z = await readyz(main.url);
    assert.equal(z.status, 200);
    assert.match(z.body.path_refused, /truncated/);
    point(d.path); // the served file at the path again: the next restart starts
    main.child.kill('SIGHUP');
    await until('two workers again', async () => /^nlr_cluster_workers 2$/m.test(await metricsText(main)), 60_000);
    assert.deepEqual(
      readdirSync(linkDir).filter((n) => n.includes('.served-')),
      [],
    );
  });
});
