// Many boxes behind HAProxy (deploy/haproxy.cfg with loopback ports), replicas with REDIS_URL, all real (Debian's
// redis-server and haproxy on free ports, stopped by PID): a Redis outage leaves every replica in, and a snapshot
// rollout under load with a replica killed mid-run loses no request.
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import autocannon from 'autocannon';
import { ROOT } from './support/files.ts';
import { freePort } from './support/nginx.ts';
import {
  type Daemon,
  get,
  type Listening,
  missing,
  replaceIn,
  sleep,
  spawnService,
  startHaproxy,
  startRedis,
  until,
} from './support/processes.ts';
import { assertRedisDown, createKeyIn, ownRedis, PASSWORD, replicaEnv } from './support/redis.ts';
import { startServer, type TestServer } from './support/server.ts';
import { changedSource, fixtureSnapshot, snapshotCopy } from './support/snapshots.ts';

/** Why these suites cannot run here: they need redis-server and HAProxy. */
const skip = missing('/usr/bin/redis-server', 'redis-server') ?? missing('/usr/sbin/haproxy', 'haproxy');
/** The API's request ids (HAProxy's own answers carry its unique-id, which has ':' and '_' in it). */
const API_REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** deploy/haproxy.cfg with the frontend on a free loopback port (no TLS), these replicas, and checks every 200 ms. */
async function balancer(replicas: string[]): Promise<{ lb: Daemon; lbUrl: string }> {
  const lb = await freePort();
  let cfg = readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
  cfg = replaceIn(cfg, /bind :443 ssl .*/, `bind 127.0.0.1:${lb}`);
  cfg = replaceIn(cfg, 'bind :80', `bind 127.0.0.1:${await freePort()}`);
  cfg = replaceIn(cfg, /default-server check .*/, 'default-server check inter 200ms fall 1 rise 1 maxconn 500');
  cfg = replaceIn(cfg, /(\s+server api\d .*\n)+/, '\n');
  cfg += replicas.map((url, i) => `    server api${i + 1} ${new URL(url).host}\n`).join('');
  return { lb: await startHaproxy(cfg, lb), lbUrl: `http://127.0.0.1:${lb}` };
}

describe('REDIS_URL behind HAProxy: a Redis outage', { skip }, () => {
  let own: Daemon;
  let ownUrl: string;
  let replicas: TestServer[] = [];
  let lb: Daemon;
  let lbUrl: string;

  before(async () => {
    ({ daemon: own, url: ownUrl } = await ownRedis());
    const env = await replicaEnv(ownUrl, { LOG_REQUESTS: '1' });
    replicas = await Promise.all([0, 1].map(() => startServer(env)));
    ({ lb, lbUrl } = await balancer(replicas.map((r) => r.url)));
    await until('every replica in the balancer', async () => (await get(`${lbUrl}/readyz`, null)).status === 200);
  });
  after(async () => {
    await lb?.stop();
    await Promise.all(replicas.map((r) => r.close()));
    await own?.stop();
  });

  it("keeps every replica in: ping, the OpenAPI document and /docs answer, keyed requests get the API's 503", async () => {
    // Saved: kept across the restart below (production: appendonly).
    const key = await createKeyIn(ownUrl, 'outage behind haproxy', true);
    const keyed = () => get(`${lbUrl}/v1/owners?limit=1`, key);
    assert.equal((await keyed()).status, 200);
    await own.stop();
    // Checks every 200 ms, out at the first failure: 1.5 s is seven checks (deploy/haproxy.cfg took every replica out
    // after two, 1.8 s in production, while /readyz answered 503 for Redis).
    await sleep(1500);
    for (const path of ['/v1/ping', '/v1/openapi.json', '/docs', '/readyz']) {
      const r = await get(`${lbUrl}${path}`, null);
      assert.equal(r.status, 200, `${path}: ${r.text.slice(0, 200)}`);
    }
    const ready = await get(`${lbUrl}/readyz`, null);
    assert.equal(ready.body.status, 'ready');
    assert.equal(ready.body.key_store, 'unavailable');
    const down = await keyed();
    assertRedisDown(down);
    assert.match(down.body.error.request_id, API_REQUEST_ID, "the API's answer, not HAProxy's");
    assert.equal(down.headers['x-request-id'], down.body.error.request_id);
    assert.doesNotMatch(lb.output(), /is DOWN/, 'no replica was taken out');
    // A 503 for what every replica shares is not tried again on the others: one replica answer per client request.
    const answers503 = () => replicas.flatMap((r) => r.logs).filter((l) => l.status === 503 && l.request_id).length;
    const before = answers503();
    for (let i = 0; i < 5; i++) assertRedisDown(await keyed());
    assert.equal(answers503() - before, 5, '5 client requests, 5 replica answers');
    own = await startRedis(own.port, PASSWORD, own.dir);
    await until('keyed requests served again', async () => (await keyed()).status === 200, 5000);
  });
});

describe('REDIS_URL: a snapshot rollout under load, one replica killed', { skip }, () => {
  const main: Listening[] = [];
  let redis: Daemon;
  let redisUrl: string;
  let lb: Daemon;
  let lbUrl: string;
  let paths: string[];

  before(async () => {
    ({ daemon: redis, url: redisUrl } = await ownRedis());
    paths = await Promise.all([0, 1, 2].map(() => snapshotCopy()));
    const env = { SNAPSHOT_CHECK_MS: '100', WORKERS: '1', LOG_REQUESTS: '0', RATE_LIMIT_PER_MINUTE: '100000000' };
    const started = await Promise.all(
      paths.map(async (p) => spawnService(await replicaEnv(redisUrl, { ...env, SNAPSHOT_PATH: p }))),
    );
    main.push(...started);
    ({ lb, lbUrl } = await balancer(main.map((m) => m.url)));
  });
  after(async () => {
    await lb?.stop();
    await Promise.all(main.map((m) => m.stop()));
    await redis?.stop();
  });

  it('serves every request (0 non-2xx, 0 errors) while each replica swaps snapshots in turn and one is killed', async () => {
    const key = await createKeyIn(redisUrl, 'load');
    const next = (await fixtureSnapshot(changedSource())).path; // shared: read only
    const readyId = async (m: Listening) => (await get(`${m.url}/readyz`, null)).body?.snapshot?.id;
    const oldId = await readyId(main[0]);

    const load = autocannon({
      url: lbUrl,
      connections: 6,
      duration: 12,
      headers: { Authorization: `Bearer ${key}` },
      requests: [{ path: '/v1/listings/lst-001' }, { path: '/v1/listings?limit=20' }, { path: '/v1/owners?limit=5' }],
    });
    const steps: string[] = [];
    const rollout = (async () => {
      // One replica at a time: rename the new file over its snapshot, wait until its /readyz names the new id.
      for (const i of [0, 1]) {
        await sleep(2000);
        const file = `${paths[i]}.next`;
        copyFileSync(next, file);
        renameSync(file, paths[i]);
        const id = await until(`replica ${i} on the new snapshot`, async () => {
          const id = await readyId(main[i]);
          return id !== oldId && id;
        });
        steps.push(`replica ${i}: ${id}`);
      }
      await sleep(1500);
      main[2].child.kill('SIGKILL');
      steps.push('replica 2 killed');
    })();
    const result = await load;
    await rollout;
    assert.deepEqual(steps.slice(2), ['replica 2 killed']);
    assert.ok(result['2xx'] > 1000, `${result['2xx']} answers`);
    process.stderr.write(`rollout under load: ${result['2xx']} answers in ${result.duration} s, ${steps.join(', ')}\n`);
    assert.equal(result.non2xx, 0, `non-2xx answers: ${JSON.stringify(result.statusCodeStats)}`);
    assert.equal(result.errors, 0, 'connection errors');
    assert.equal(result.timeouts, 0, 'timeouts');
    for (const i of [0, 1]) assert.notEqual(await readyId(main[i]), oldId);
    assert.equal(await main[2].exited, null, 'killed');

    // No replica left: the balancer's own 503 has the error envelope too.
    await Promise.all(main.slice(0, 2).map((m) => m.stop()));
    const none = await until('the balancer sees no replica', async () => {
      const r = await get(`${lbUrl}/v1/listings?limit=1`, key);
      return r.status === 503 && r;
    });
    assert.equal(none.body.error.code, 'service_unavailable');
    assert.ok(none.body.error.request_id);
  });
});
