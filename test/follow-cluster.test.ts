// SNAPSHOT_FOLLOW with WORKERS=2 as a process, over HTTPS from real nginx with a test CA (NODE_EXTRA_CA_CERTS): a
// start with nothing at SNAPSHOT_PATH, then 0 failed requests at ~200 requests/s through a followed swap and through
// refusals, and what /readyz and /metrics say of following.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { damagedCopy, wrongVersionCopy } from './support/bad-snapshots.ts';
import { tempDir } from './support/files.ts';
import {
  connections,
  get,
  type Listening,
  missing,
  runScript,
  sleep,
  spawnService,
  until,
} from './support/processes.ts';
import { type Keys, metaOf, minisignKeys, publish, type StaticNginx, serveFolder } from './support/publication.ts';
import { changedSource, editedSource, fixtureSnapshot } from './support/snapshots.ts';

const skip = missing('/usr/sbin/nginx', 'nginx') ?? missing('/usr/bin/minisign', 'minisign');

/** Requests at about `rate` per second on 4 connections until stop(): how many, and every one that was not a 200. */
function load(m: Listening, rate: number) {
  let stopped = false;
  const failed: string[] = [];
  let count = 0;
  const ids = new Set<string>();
  const each = 4000 / rate; // ms between one connection's requests
  const loops = connections(4).map(async (agent) => {
    while (!stopped) {
      const t = Date.now();
      try {
        const r = await get(`${m.url}/v1/listings?limit=1`, m.key!, agent);
        if (r.status !== 200) failed.push(`${r.status} ${r.text.slice(0, 200)}`);
        ids.add(String(r.headers['x-snapshot-id']));
      } catch (e) {
        failed.push((e as Error).message);
      }
      count++;
      await sleep(Math.max(0, each - (Date.now() - t)));
    }
  });
  return {
    ids,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return { count, failed };
    },
  };
}

describe('WORKERS=2 following a publication over HTTPS', { skip }, () => {
  let keys: Keys;
  let other: Keys;
  let nginx: StaticNginx;
  let m: Listening;
  const pub = tempDir('publication-');
  const path = join(tempDir('followed-'), 'snapshot.db');

  before(async () => {
    [keys, other] = await Promise.all([minisignKeys(), minisignKeys()]);
    nginx = await serveFolder(pub);
  });
  after(async () => {
    await m?.stop();
    await nginx?.stop();
  });

  it('starts with nothing at SNAPSHOT_PATH, then follows with 0 failed requests through a swap and every kind of refusal', async () => {
    const a = (await fixtureSnapshot()).path;
    const b = (await fixtureSnapshot(changedSource(), { builtAt: '2026-11-02T00:00:00.000Z' })).path;
    const c = (
      await fixtureSnapshot(
        editedSource((l) => l.delete([...l.keys()].at(-1)!)),
        { builtAt: '2026-11-03T00:00:00.000Z' },
      )
    ).path;
    m = await spawnService({
      WORKERS: '2',
      SNAPSHOT_PATH: path,
      SNAPSHOT_FOLLOW: `${nginx.https}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: keys.key, // the key itself, not its file
      SNAPSHOT_FOLLOW_INTERVAL_MS: '200',
      SNAPSHOT_FOLLOW_SPREAD_MS: '0',
      NODE_EXTRA_CA_CERTS: nginx.ca,
      METRICS_PORT: '0',
      LOG_REQUESTS: '0',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    assert.equal((await get(`${m.url}/livez`, null)).status, 200);
    const empty = await get(`${m.url}/readyz`, null);
    assert.equal(empty.status, 503);
    assert.equal(empty.body.status, 'no_snapshot');
    assert.equal(empty.body.follow.url, `${nginx.https}/latest.json`);

    const first = await publish(pub, a, keys);
    await until('A served', async () => (await get(`${m.url}/readyz`, null)).body.snapshot?.id === first.id, 20_000);
    const traffic = load(m, 200);
    await sleep(500);
    // The next one published by `snapshot publish` with the key minisign -G -W made.
    const published = await runScript('src/cli/snapshot.ts', ['publish', b, '--key', keys.sec, '--out', pub]);
    assert.equal(published.code, 0, published.stderr);
    const second = { id: metaOf(b).id };
    await until(
      'B served by both workers',
      async () => {
        const r = await Promise.all([1, 2, 3, 4].map(() => get(`${m.url}/readyz`, null)));
        return r.every((x) => x.body.snapshot.id === second.id);
      },
      20_000,
    );
    await sleep(300);
    await publish(pub, c, other);
    const signature = await until(
      'a signature refusal',
      async () => (await get(`${m.url}/readyz`, null)).body.follow.refused,
    );
    assert.equal(signature.reason, 'signature');
    // Every other kind of refusal, each while the load is answered.
    const refusals: [string, () => Promise<unknown>][] = [
      ['schema', () => publish(pub, wrongVersionCopy(c), keys)],
      ['rollback', () => publish(pub, a, keys)],
      ['size', () => publish(pub, c, keys, { latest: (l) => (l.size = (l.size as number) + 1) })],
      ['candidate', () => publish(pub, damagedCopy(c), keys)],
      ['manifest', () => publish(pub, c, keys, { latest: (l) => (l.file = '../snapshot.db') })],
    ];
    for (const [reason, publishIt] of refusals) {
      await sleep(300);
      await publishIt();
      await until(
        `a ${reason} refusal`,
        async () => (await get(`${m.url}/readyz`, null)).body.follow.refused?.reason === reason,
        20_000,
      );
    }
    await sleep(300);
    const { count, failed } = await traffic.stop();
    assert.deepEqual(failed, [], `${failed.length} of ${count} requests failed`);
    assert.ok(count > 200, `only ${count} requests`);
    assert.deepEqual([...traffic.ids].sort(), [first.id, second.id].sort());
    assert.ok(m.lines().some((l) => l.reason === 'signature' && /signature refused/.test(l.msg)));

    const ready = await get(`${m.url}/readyz`, null);
    assert.equal(ready.status, 200);
    assert.equal(ready.body.follow.served.snapshot_id, second.id);
    assert.equal(ready.body.follow.stale, null);
    const metrics = await (await fetch(`${m.metricsUrl}`)).text();
    const url = `url="${nginx.https}/latest.json"`;
    assert.match(metrics, new RegExp(`nlr_follow_refused\\{${url},reason="manifest"\\} 1`));
    // At least once each: the next case rewrites the same snapshot's signature before its latest.json, and a poll in
    // between sees a new signature under the old latest.json, which is checked (and refused) again.
    for (const reason of ['schema', 'rollback', 'size', 'candidate'])
      assert.match(metrics, new RegExp(`nlr_follow_refusals_total\\{${url},reason="${reason}"\\} [1-9]`));
    assert.match(metrics, new RegExp(`nlr_follow_refusals_total\\{${url},reason="signature"\\} 1`));
    assert.match(metrics, new RegExp(`nlr_follow_stale\\{${url}\\} 0`));
    assert.match(metrics, /nlr_follow_last_success_time_seconds\{[^}]*\} \d/);
  });
});
