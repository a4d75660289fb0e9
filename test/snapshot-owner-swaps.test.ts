// One served snapshot per service (real processes): every worker switches to a new snapshot at one instant, under
// load, by a re-pointed link, a rename or SIGHUP; a worker that does not confirm is asked again, then replaced; and the
// served file written in place stops every worker's data answers until it is valid again. WORKERS=2, and the single
// process (WORKERS=1) the same.
import assert from 'node:assert/strict';
import { copyFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
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
import { connections, get, type Listening, sleep, spawnService, until } from './support/processes.ts';
import { changedSource, fixtureSnapshot } from './support/snapshots.ts';

let next: string; // another snapshot than the fixture's (one listing more): another id (shared: read only)
before(async () => {
  next = (await fixtureSnapshot(changedSource())).path;
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
      copyFileSync(s.d.good, `${s.d.path}.incoming`);
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
    const z = await until('the file refused', async () => {
      const r = await readyz(s.m.url);
      return r.body.path_refused !== null && r;
    });
    assert.equal(z.status, 503);
    assert.equal(z.body.status, 'snapshot_damaged');
    // Its sentence agrees with the 503: nothing goes on serving.
    assert.match(z.body.path_refused, /; data requests get 503 until a valid snapshot is renamed into place$/);
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

describe('WORKERS=2: a worker that does not confirm the switch', () => {
  const s = deployed({ SNAPSHOT_CHECK_MS: '600000', DRAIN_TIMEOUT_MS: '1000' });

  /** Renames `file` over the path and SIGHUPs; stops (SIGSTOP) worker `pid` as soon as the owner gives the switch word. */
  async function swapStopping(file: string, pid: number) {
    let stopped = false;
    const watch = (d: Buffer) => {
      if (!stopped && String(d).includes('"msg":"snapshot candidate prepared by every worker; switching"')) {
        process.kill(pid, 'SIGSTOP'); // within the 200 ms lead: it has the word, and its timer never runs
        stopped = true;
      }
    };
    s.m.child.stdout!.on('data', watch);
    const from = s.m.lines().length;
    copyFileSync(file, `${s.d.path}.incoming`);
    renameSync(`${s.d.path}.incoming`, s.d.path);
    s.m.child.kill('SIGHUP');
    const done = await until('the switch over', () =>
      s.m
        .lines()
        .slice(from)
        .find((l) => l.msg === 'snapshot served by every worker'),
    );
    s.m.child.stdout!.off('data', watch);
    return { done, from };
  }

  it('asks it again, then replaces it with a worker on the new snapshot, within 2 s of the instant; /readyz and /metrics say so meanwhile', async () => {
    const pids = ready(s.m).map((l) => l.pid as number);
    const victim = pids[1];
    try {
      // On a busy machine the stop may come after the worker switched (200 ms after the word): then it goes on, and
      // the next file is tried.
      let { done, from } = await swapStopping(next, victim);
      for (const file of [s.d.good, next]) {
        if (done.workers !== 2) break;
        process.kill(victim, 'SIGCONT');
        s.served = done.snapshot_id;
        ({ done, from } = await swapStopping(file, victim));
      }
      const since = (msg: string) =>
        s.m
          .lines()
          .slice(from)
          .find((l) => l.msg === msg);
      const switching = since('snapshot candidate prepared by every worker; switching')!;
      assert.equal(done.workers, 1, 'one worker confirmed (the other is stopped)');
      const waited = Date.parse(done.time) - Date.parse(switching.switch_at);
      assert.ok(waited < 3000, `the owner waited ${waited} ms after the instant, not 30 s`);
      assert.ok(since('a worker has not confirmed the switch; asking again'), 'asked again');
      assert.equal(since('replacing a worker')?.pid, victim);
      const z = await readyz(s.m.url);
      assert.equal(z.status, 200, 'the other worker serves the new snapshot');
      assert.equal(z.body.snapshot.id, done.snapshot_id);
      assert.deepEqual(
        z.body.workers_behind,
        [{ worker: '1', snapshot_id: s.served, since: switching.switch_at }],
        'the worker being replaced still serves the old snapshot',
      );
      assert.match(await metricsText(s.m), /^nlr_cluster_workers_behind 1$/m);
      // Stopped, it cannot drain: killed after DRAIN_TIMEOUT_MS + 5 s; its replacement starts on the new snapshot.
      const fresh = await until('a new worker', () => ready(s.m).find((l) => !pids.includes(l.pid)), 20_000);
      assert.equal(fresh.snapshot_id, done.snapshot_id);
      await until('nobody behind', async () => (await readyz(s.m.url)).body.workers_behind === undefined);
      const metrics = await metricsText(s.m);
      assert.match(metrics, /^nlr_cluster_workers_behind 0$/m);
      assert.match(metrics, /^nlr_cluster_worker_replacements_total 1$/m);
      assert.match(
        metrics,
        /^nlr_cluster_worker_drains_cut_total 1$/m,
        'stopped, it was killed: its drain never ended',
      );
      assert.match(metrics, /^nlr_cluster_workers 2$/m);
      s.served = done.snapshot_id;
    } finally {
      try {
        process.kill(victim, 'SIGKILL');
      } catch {
        /* gone already */
      }
    }
  });

  it('goes on taking new files: the next swap is followed by both workers', async () => {
    const pids = ready(s.m).map((l) => l.pid as number);
    const from = s.m.lines().length;
    copyFileSync(s.d.good, `${s.d.path}.incoming`);
    renameSync(`${s.d.path}.incoming`, s.d.path);
    s.m.child.kill('SIGHUP');
    const done = await until('the switch over', () =>
      s.m
        .lines()
        .slice(from)
        .find((l) => l.msg === 'snapshot served by every worker'),
    );
    assert.equal(done.workers, 2);
    assert.notEqual(done.snapshot_id, s.served);
    assert.equal(ready(s.m).filter((l) => !pids.includes(l.pid)).length, 0, 'no worker replaced');
  });
});

describe('WORKERS=1: the process is its own owner, with the same behaviour', () => {
  let m: Listening | undefined;
  after(async () => {
    await m?.stop();
  });

  it('keeps serving through a refused file, says so in /readyz and /metrics, and swaps a good one in', async () => {
    const d = await deployment();
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
    renameSync(truncatedCopy(d), d.path);
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
