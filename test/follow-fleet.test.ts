// SNAPSHOT_FOLLOW over time, against the real service and nginx: the spread delay (a replica with one swaps later
// than one without, and takes its first publication at once) and staleness once no check succeeds.
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { spreadDelay } from '../src/snapshot/follow.ts';
import { tempDir } from './support/files.ts';
import { missing, until } from './support/processes.ts';
import { metaOf, minisignKeys, publish, serveFolder } from './support/publication.ts';
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

  it('takes an expired publication when nothing is served (stale), refuses one while an unexpired snapshot is served, and one without a build time', async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const nginx = await serveFolder(pub);
    const server = await startServer({
      SNAPSHOT_PATH: join(tempDir('followed-'), 'snapshot.db'),
      SNAPSHOT_FOLLOW: `${nginx.http}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: keys.pub,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '100',
      SNAPSHOT_FOLLOW_SPREAD_MS: '0',
    });
    const readyz = async () => (await server.get('/readyz')).body;
    const past = Math.floor(Date.now() / 1000) - 60;
    const expired = (path: string) => ({ trusted: `snapshot:${metaOf(path).id}\texpires:${past}` });
    try {
      const a = (await fixtureSnapshot()).path;
      await publish(pub, a, keys, expired(a));
      const stale = await until('A served, stale', async () => {
        const r = await server.get('/readyz');
        return r.body.snapshot?.id === metaOf(a).id && r;
      });
      assert.equal(stale.status, 200);
      assert.equal(stale.body.follow.stale, 'expired');
      const b = (await fixtureSnapshot(changedSource(), { builtAt: '2026-11-02T00:00:00.000Z' })).path;
      await publish(pub, b, keys);
      await until('B served, not stale', async () => {
        const r = await readyz();
        return r.snapshot?.id === metaOf(b).id && r.follow.stale === null;
      });
      const c = (await fixtureSnapshot(changedSource(), { builtAt: '2026-11-03T00:00:00.000Z' })).path;
      await publish(pub, c, keys, expired(c));
      const refused = await until('an expired refusal', async () => (await readyz()).follow.refused);
      assert.equal(refused.reason, 'expired');
      assert.equal((await readyz()).snapshot.id, metaOf(b).id);
      await publish(pub, withoutBuiltAt(c), keys, { latest: (l) => (l.built_at = '2026-11-04T00:00:00.000Z') });
      const none = await until('a refusal without a build time', async () => {
        const r = (await readyz()).follow.refused;
        return r?.reason === 'rollback' && r;
      });
      assert.match(none.message, /no build time/);
    } finally {
      await server.close();
      await nginx.stop();
    }
  });
});

/** A copy of `good` without built_at in snapshot_meta. */
function withoutBuiltAt(good: string): string {
  const file = join(tempDir(), 'no-built-at.db');
  copyFileSync(good, file);
  const db = new Database(file);
  db.prepare("DELETE FROM snapshot_meta WHERE key = 'built_at'").run();
  db.close();
  return file;
}
