// A worker silent while the others prepare a candidate (real processes, WORKERS=2, the worker stopped by SIGSTOP):
// asked again after PREPARE_MS (5 s); if it answers then, every worker switches; if not, it is replaced and the candidate
// goes on with the others, never a 30 s wait; its replacement starts on the snapshot switched to.
import assert from 'node:assert/strict';
import { copyFileSync, renameSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import { PREPARE_MS } from '../src/snapshot/members.ts';
import { deployed, metricsText, ready, readyz } from './support/deployment.ts';
import { sleep, until } from './support/processes.ts';
import { changedSource, fixtureSnapshot } from './support/snapshots.ts';

let next: string; // another snapshot than the fixture's (one listing more): another id (shared: read only)
before(async () => {
  next = (await fixtureSnapshot(changedSource())).path;
});

describe('WORKERS=2: a worker silent on a candidate', () => {
  const s = deployed({ SNAPSHOT_CHECK_MS: '600000', DRAIN_TIMEOUT_MS: '1000' });

  /** Renames `file` over the path and SIGHUPs with worker `pid` stopped; `during` runs meanwhile. */
  async function swapWhileStopped(file: string, pid: number, during: (from: number) => Promise<void>) {
    const from = s.m.lines().length;
    process.kill(pid, 'SIGSTOP'); // before the word: it never prepares until continued
    const started = Date.now();
    copyFileSync(file, `${s.d.path}.incoming`);
    renameSync(`${s.d.path}.incoming`, s.d.path);
    s.m.child.kill('SIGHUP');
    await during(from);
    // The bound is 2 × PREPARE_MS; 30 s before it: 2 × PREPARE_MS + 8 s tells them apart with room for a loaded machine.
    const done = await until(
      'the switch over',
      () => since(from, 'snapshot served by every worker'),
      2 * PREPARE_MS + 8000,
    );
    return { done, from, waited: Date.parse(done.time) - started };
  }
  const since = (from: number, msg: string) =>
    s.m
      .lines()
      .slice(from)
      .find((l) => l.msg === msg);

  it('asks it again after PREPARE_MS; answering then, it switches with the other', async () => {
    const pids = ready(s.m).map((l) => l.pid as number);
    const victim = pids[1];
    try {
      const { done, from } = await swapWhileStopped(next, victim, async (from) => {
        await until(
          'asked again',
          () => since(from, 'a worker has not prepared the snapshot candidate; asking again'),
          PREPARE_MS + 5000,
        );
        process.kill(victim, 'SIGCONT');
      });
      assert.equal(done.workers, 2, 'both workers switched');
      assert.notEqual(done.snapshot_id, s.served);
      const swapped = s.m
        .lines()
        .slice(from)
        .filter((l) => l.msg === 'snapshot swapped in');
      assert.deepEqual(new Set(swapped.map((l) => l.pid)), new Set(pids), 'each worker swapped once');
      assert.equal(since(from, 'replacing a worker'), undefined, 'nobody replaced');
      s.served = done.snapshot_id;
    } finally {
      process.kill(victim, 'SIGCONT');
    }
  });

  it('replaces it within 2 × PREPARE_MS and switches the other; its replacement starts on the new snapshot', async () => {
    const pids = ready(s.m).map((l) => l.pid as number);
    const victim = pids[1];
    try {
      const { done, from, waited } = await swapWhileStopped(s.d.good, victim, async () => {});
      assert.ok(waited < 2 * PREPARE_MS + 4000, `${waited} ms from the rename to the switch, not 30 s`);
      assert.equal(done.workers, 1, 'the other worker switched');
      assert.notEqual(done.snapshot_id, s.served);
      assert.ok(since(from, 'a worker has not prepared the snapshot candidate; asking again'), 'asked again');
      assert.equal(since(from, 'replacing a worker')?.pid, victim);
      assert.equal(since(from, 'snapshot candidate refused; still serving'), undefined, 'not refused');
      const z = await readyz(s.m.url);
      assert.equal(z.status, 200);
      assert.equal(z.body.snapshot.id, done.snapshot_id);
      assert.equal(z.body.path_refused, null, 'the file at the path is the one served');
      const switching = since(from, 'snapshot candidate prepared by every worker; switching')!;
      assert.deepEqual(
        z.body.workers_behind,
        [{ worker: '1', snapshot_id: s.served, since: switching.switch_at }],
        'the worker being replaced still serves the old snapshot',
      );
      assert.match(await metricsText(s.m), /^nlr_cluster_workers_behind 1$/m);
      // Replaced during the prepare, it is forked once the switch is over: on the new snapshot, never the old one.
      const fresh = await until('a new worker', () => ready(s.m).find((l) => !pids.includes(l.pid)), 20_000);
      assert.equal(fresh.snapshot_id, done.snapshot_id);
      await until('nobody behind', async () => (await readyz(s.m.url)).body.workers_behind === undefined);
      const metrics = await metricsText(s.m);
      assert.match(metrics, /^nlr_cluster_workers_behind 0$/m);
      assert.match(metrics, /^nlr_cluster_worker_replacements_total 1$/m);
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
    await sleep(100);
    const from = s.m.lines().length;
    copyFileSync(next, `${s.d.path}.incoming`);
    renameSync(`${s.d.path}.incoming`, s.d.path);
    s.m.child.kill('SIGHUP');
    const done = await until('the switch over', () => since(from, 'snapshot served by every worker'));
    assert.equal(done.workers, 2);
    assert.notEqual(done.snapshot_id, s.served);
  });
});
