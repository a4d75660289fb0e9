// SNAPSHOT_FOLLOW with a file at SNAPSHOT_PATH that cannot be served (garbage, another schema version, a first
// publication the owner's checks refused): the service starts as with nothing there (live, /readyz 503), and the
// follower replaces the file with the publication.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { damagedCopy, wrongVersionCopy } from './support/bad-snapshots.ts';
import { tempDir } from './support/files.ts';
import { missing, spawnService, until } from './support/processes.ts';
import { minisignKeys, publish, serveFolder } from './support/publication.ts';
import { startServer } from './support/server.ts';
import { changedSource, fixtureSnapshot } from './support/snapshots.ts';

const skip = missing('/usr/sbin/nginx', 'nginx') ?? missing('/usr/bin/minisign', 'minisign');

const follow = (path: string, url: string, pub: string) => ({
  SNAPSHOT_PATH: path,
  SNAPSHOT_FOLLOW: `${url}/latest.json`,
  SNAPSHOT_FOLLOW_PUBLIC_KEY: pub,
  SNAPSHOT_FOLLOW_INTERVAL_MS: '100',
  SNAPSHOT_FOLLOW_SPREAD_MS: '0',
  SNAPSHOT_CHECK_MS: '100',
});

describe('following with an unusable file at SNAPSHOT_PATH', { skip }, () => {
  it('one process on a garbage file: listens, /readyz 503, then serves the publication', async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const nginx = await serveFolder(pub);
    const path = join(tempDir('followed-'), 'snapshot.db');
    writeFileSync(path, 'not a snapshot, left by a crash\n'.repeat(100));
    const server = await startServer(follow(path, nginx.http, keys.pub));
    try {
      const r = await server.get('/readyz');
      assert.equal(r.status, 503);
      assert.equal(r.body.status, 'no_snapshot');
      assert.ok(server.logs.some((l) => String(l.msg).includes('cannot be served; removed it')));
      const published = await publish(pub, (await fixtureSnapshot()).path, keys);
      await until(
        'the publication served',
        async () => (await server.get('/readyz')).body.snapshot?.id === published.id,
      );
    } finally {
      await server.close();
      await nginx.stop();
    }
  });

  it('WORKERS=2 on a file of another schema version (an upgrade): listens, /readyz 503, then serves the publication', async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const nginx = await serveFolder(pub);
    const path = join(tempDir('followed-'), 'snapshot.db');
    copyFileSync(wrongVersionCopy((await fixtureSnapshot()).path), path);
    const m = await spawnService({ ...follow(path, nginx.http, keys.pub), WORKERS: '2', LOG_REQUESTS: '0' });
    try {
      const r = await fetch(`${m.url}/readyz`);
      assert.equal(r.status, 503);
      assert.ok(m.lines().some((l) => l.level === 'warn' && /schema version/.test(l.error)));
      const published = await publish(pub, (await fixtureSnapshot()).path, keys);
      await until(
        'the publication served',
        async () => (await (await fetch(`${m.url}/readyz`)).json()).snapshot?.id === published.id,
      );
    } finally {
      await m.stop();
      await nginx.stop();
    }
  });

  it("removes a first publication the owner's checks refuse (nothing served), so a restart starts empty", async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const nginx = await serveFolder(pub);
    const path = join(tempDir('followed-'), 'snapshot.db');
    const server = await startServer(follow(path, nginx.http, keys.pub));
    try {
      await publish(pub, damagedCopy((await fixtureSnapshot()).path), keys);
      await until(
        'a candidate refusal',
        async () => (await server.get('/readyz')).body.follow?.refused?.reason === 'candidate',
      );
      assert.equal(existsSync(path), false, 'the refused file is removed from SNAPSHOT_PATH');
      assert.equal((await server.get('/readyz')).status, 503);
      const good = await publish(pub, (await fixtureSnapshot(changedSource())).path, keys);
      await until(
        'the next publication served',
        async () => (await server.get('/readyz')).body.snapshot?.id === good.id,
      );
    } finally {
      await server.close();
      await nginx.stop();
    }
  });
});
