// One served snapshot per service (real processes): a refused file at SNAPSHOT_PATH costs no start-up and no
// worker, a worker restarted meanwhile starts on the served snapshot, and /readyz and /metrics say the file at the
// path was refused. Swaps: snapshot-owner-swaps.test.ts.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  deployed,
  deployment,
  links,
  metricsText,
  ready,
  readyz,
  settings,
  truncatedCopy,
} from './support/deployment.ts';
import { freePort } from './support/nginx.ts';
import {
  answeredBy,
  connections,
  get,
  type Listening,
  launchService,
  spawnService,
  until,
} from './support/processes.ts';

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
describe('WORKERS=2: a truncated file moved over SNAPSHOT_PATH while the second worker starts', () => {
  let m: ReturnType<typeof launchService> | undefined;
  after(async () => {
    await m?.stop();
  });

  it('costs no start-up: 0 refused connections and 0 non-200 from the first answer to 2 s after listening', async () => {
    const d = await deployment();
    const bad = truncatedCopy(d);
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
    const d = await deployment();
    renameSync(truncatedCopy(d), d.path);
    const m = launchService(settings(d));
    const t = setTimeout(() => m.child.kill('SIGKILL'), 60_000);
    const code = await m.exited;
    clearTimeout(t);
    assert.equal(code, 1);
    assert.equal(
      m.stderr().trim(),
      `start-up failed: SNAPSHOT_PATH: cannot open snapshot ${d.path}: it is truncated (4096 of ${readFileSync(d.good).length} bytes)`,
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
    renameSync(truncatedCopy(s.d), s.d.path);
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
    const d = await deployment();
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
    point(truncatedCopy(d));
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
