// SNAPSHOT_FOLLOW over time, against the real service and nginx: the spread delay (a replica with one swaps later
// than one without, and takes its first publication at once) and staleness once no check succeeds.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { spreadDelay } from '../src/snapshot/follow.ts';
import { tempDir } from './support/files.ts';
import { missing, until } from './support/processes.ts';
import { minisignKeys, publish, serveFolder } from './support/publication.ts';
import { startServer } from './support/server.ts';
import { changedSource, fixtureSnapshot } from './support/snapshots.ts';

const skip = missing('/usr/sbin/nginx', 'nginx') ?? missing('/usr/bin/minisign', 'minisign');

const SPREAD = 8000;
/** An instance name whose delay is at least half the spread. */
const late = Array.from({ length: 100 }, (_, i) => `api-${i}`).find((n) => spreadDelay(n, SPREAD) >= SPREAD / 2)!;

describe('following: the spread and staleness', { skip }, () => {
  it('a replica with a spread delay swaps that much later than one without, but takes its first publication at once', async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const nginx = await serveFolder(pub);
    const delay = spreadDelay(late, SPREAD);
    const replica = (spread: number) =>
      startServer({
        SNAPSHOT_PATH: join(tempDir('followed-'), 'snapshot.db'),
        SNAPSHOT_FOLLOW: `${nginx.http}/latest.json`,
        SNAPSHOT_FOLLOW_PUBLIC_KEY: keys.pub,
        SNAPSHOT_FOLLOW_INTERVAL_MS: '100',
        SNAPSHOT_FOLLOW_SPREAD_MS: String(spread),
        SNAPSHOT_FOLLOW_INSTANCE: late,
      });
    const [first, spread] = await Promise.all([replica(0), replica(SPREAD)]);
    /** Milliseconds from now until each replica serves `id`. */
    const servedAfter = async (id: string) => {
      const t0 = Date.now();
      return Promise.all(
        [first, spread].map(async (s) => {
          await until(`${id} served`, async () => (await s.get('/readyz')).body.snapshot?.id === id, SPREAD * 2);
          return Date.now() - t0;
        }),
      );
    };
    try {
      assert.equal((await spread.get('/readyz')).body.follow.delay_ms, delay);
      const a = await publish(pub, (await fixtureSnapshot()).path, keys);
      const [, firstTaken] = await servedAfter(a.id);
      assert.ok(firstTaken < delay, `the first publication waited ${firstTaken} ms (delay ${delay} ms)`);
      const b = await publish(
        pub,
        (await fixtureSnapshot(changedSource(), { builtAt: '2026-11-02T00:00:00.000Z' })).path,
        keys,
      );
      const [now, later] = await servedAfter(b.id);
      assert.ok(now < delay, `the replica without a spread took ${now} ms`);
      assert.ok(later >= delay, `the replica with a ${delay} ms delay swapped after ${later} ms`);
    } finally {
      await Promise.all([first.close(), spread.close()]);
      await nginx.stop();
    }
  });

  it('says stale (no_successful_check, still 200) once no check has succeeded for SNAPSHOT_FOLLOW_STALE_MS', async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const nginx = await serveFolder(pub);
    const server = await startServer({
      SNAPSHOT_PATH: join(tempDir('followed-'), 'snapshot.db'),
      SNAPSHOT_FOLLOW: `${nginx.http}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: keys.pub,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '100',
      SNAPSHOT_FOLLOW_STALE_MS: '1500',
    });
    try {
      const a = await publish(pub, (await fixtureSnapshot()).path, keys);
      const ready = await until('served', async () => {
        const r = await server.get('/readyz');
        return r.body.snapshot?.id === a.id && r;
      });
      assert.equal(ready.body.status, 'ready');
      assert.equal(ready.body.follow.stale, null);
      await nginx.stop(); // the publisher is gone: every check fails from now on
      const stopped = Date.now();
      const stale = await until('stale', async () => {
        const r = await server.get('/readyz');
        return r.body.status === 'stale' && r;
      });
      assert.ok(Date.now() - stopped >= 1000, 'not before SNAPSHOT_FOLLOW_STALE_MS');
      assert.equal(stale.status, 200);
      assert.equal(stale.body.follow.stale, 'no_successful_check');
      assert.match(stale.body.follow.last_error, /ECONNREFUSED/);
      assert.equal((await server.get('/v1/listings?limit=1')).status, 200);
    } finally {
      await server.close();
      await nginx.stop();
    }
  });
});
