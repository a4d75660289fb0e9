// Many boxes: replicas with REDIS_URL on Debian's redis-server (a free port, stopped by PID), nothing else. One limit
// shared exactly, a revocation through the keys command seen by every replica, cursors across replicas, Redis down
// and back, and what Redis persists. With HAProxy in front: redis-haproxy.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RedisLink } from '../src/access/redis.ts';
import { redisKeyStore } from '../src/access/redis-keys.ts';
import {
  connections,
  type Daemon,
  get,
  missing,
  type Reply,
  runScript,
  startRedis,
  until,
} from './support/processes.ts';
import { assertRedisDown, linkTo, ownRedis, PASSWORD, replicaEnv, SECRET, urlOf } from './support/redis.ts';
import { startServer, type TestServer } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

const noRedis = missing('/usr/bin/redis-server', 'redis-server');
const L = 10;
const A = 3;

describe('REDIS_URL: replicas share keys and limits', { skip: noRedis }, () => {
  let replicas: TestServer[] = [];
  let redis: Daemon;
  let redisUrl: string;
  let link: RedisLink;
  /** One key store on `link`, made once: each makes its scripts again (ioredis defineCommand), which raced a PING. */
  let store: ReturnType<typeof redisKeyStore>;

  before(async () => {
    ({ daemon: redis, url: redisUrl } = await ownRedis());
    link = await linkTo(redisUrl);
    store = redisKeyStore(link, 'nlr:');
    const limits = { RATE_LIMIT_PER_MINUTE: String(L), AUTH_FAILURES_PER_MINUTE: String(A) };
    const env = await replicaEnv(redisUrl, { ...limits, LOG_REQUESTS: '1', METRICS_PORT: '0' });
    replicas = await Promise.all([0, 1, 2].map(() => startServer(env)));
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await link?.close();
    await redis?.stop();
  });

  /**
   * The keys command as a child process, with REDIS_URL: its JSON output. Run without blocking: the replicas share
   * this event loop, and a blocked loop lets their Redis commands time out.
   */
  async function keysCommand(...args: string[]) {
    const r = await runScript('src/cli/keys.ts', args, { env: { REDIS_URL: redisUrl } });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  }

  const answeredBy = (rs: Reply[]) =>
    new Set(rs.map((r) => replicas.findIndex((s) => s.logs.some((l) => l.request_id === r.headers['x-request-id']))));
  const count = (rs: Reply[], status: number) => rs.filter((r) => r.status === status).length;
  /** `n` requests, each on a connection of its own, to the replicas in turn. */
  const through = (n: number, k: string | null) =>
    Promise.all(connections(n).map((agent, i) => get(`${replicas[i % 3].url}/v1/listings?limit=1`, k, agent)));

  it(`shares one limit exactly: L + 4 requests spread over the replicas get exactly 4 answers 429`, async () => {
    const k = await store.create({ name: 'limit' });
    const rs = [...(await through(L, k.key)), ...(await through(4, k.key))];
    assert.equal(count(rs, 200), L);
    assert.equal(count(rs, 429), 4);
    assert.equal(rs.find((r) => r.status === 429)!.body.error.code, 'rate_limited');
    assert.equal(answeredBy(rs).size, 3, 'every replica answered some (a count per replica would refuse none)');
    // Failed authentications from one address count in total too.
    const bad = await through(A + 2, 'nlr_live_not-a-key');
    assert.equal(count(bad, 401), A);
    assert.equal(count(bad, 429), 2);
    assert.ok(answeredBy(bad).size >= 2);
  });

  it('refuses a key revoked with npm run keys on its next request, on every replica', async () => {
    const created = await keysCommand('create', '--name', 'to revoke');
    assert.match(created.id, /^key_/);
    // From an address of its own: the failures of the test before used up 127.0.0.1's allowance.
    const own = { 'X-Forwarded-For': '198.51.100.7' };
    const owners = (r: TestServer) => get(`${r.url}/v1/owners?limit=1`, created.key, undefined, own);
    for (const r of replicas) assert.equal((await owners(r)).status, 200);
    assert.equal((await keysCommand('revoke', created.id)).status, 'revoked');
    for (const r of replicas) {
      const res = await owners(r);
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthorized');
    }
    const stored = await link.redis.hgetall(`nlr:key:${created.id}`);
    assert.equal(stored.digest.length, 44, 'a base64 SHA-256 digest');
    assert.ok(!JSON.stringify(stored).includes(created.key.slice(9)), 'never the key');
  });

  it('accepts a cursor from one replica on another (the same CURSOR_SECRET)', async () => {
    const k = await store.create({ name: 'cursor' });
    const first = await get(`${replicas[0].url}/v1/listings?limit=2`, k.key);
    const cursor = encodeURIComponent(first.body.pagination.next_cursor);
    for (const r of replicas.slice(1)) {
      const next = await get(`${r.url}/v1/listings?limit=2&cursor=${cursor}`, k.key);
      assert.equal(next.status, 200, next.text);
      assert.ok(next.body.data[0].id > first.body.data[1].id, 'the page after the first');
    }
  });

  it('fails closed while Redis is down or stuck (503 with the envelope; /readyz 200, saying so) and recovers', async () => {
    const k = await store.create({ name: 'outage' });
    const direct = () => get(`${replicas[1].url}/v1/owners?limit=1`, k.key);
    // A request with Redis up: this machine's answer time now (files run side by side), added to the bounds below.
    let t0 = Date.now();
    assert.equal((await direct()).status, 200);
    const ref = Date.now() - t0;
    // Stuck (SIGSTOP): a request waits about the command timeout, no more.
    redis.child.kill('SIGSTOP');
    t0 = Date.now();
    const stuck = await direct();
    redis.child.kill('SIGCONT');
    assert.equal(stuck.status, 503);
    assert.ok(Date.now() - t0 < 1000 + ref, `answered in ${Date.now() - t0} ms (up: ${ref} ms)`);
    await until('answers again', async () => (await direct()).status === 200);
    // Down: the keys survive in Redis's own file (production: appendonly), so SAVE first.
    await link.redis.save();
    await redis.stop();
    t0 = Date.now();
    const down = await direct();
    assertRedisDown(down);
    assert.ok(Date.now() - t0 < 1000 + ref, `answered in ${Date.now() - t0} ms (up: ${ref} ms)`);
    const readable = async (r: TestServer) =>
      /^nlr_key_store_readable\{store="redis"\} (\d)$/m.exec(
        await (await fetch(`${r.metricsUrl}/metrics`)).text(),
      )?.[1];
    assert.equal(await readable(replicas[0]), '0', 'the metric says so');
    for (const r of replicas) {
      // Every replica shares Redis: none is unready for it (there would be nowhere to send the traffic).
      const ready = await get(`${r.url}/readyz`, null);
      assert.equal(ready.status, 200);
      assert.equal(ready.body.status, 'ready');
      assert.equal(ready.body.key_store, 'unavailable');
      assert.equal((await get(`${r.url}/v1/ping`, null)).status, 200, 'no crash');
    }
    redis = await startRedis(redis.port, PASSWORD, redis.dir);
    t0 = Date.now();
    // Each replica reconnects on its own schedule (every 50-500 ms): the service is back when every one is ready.
    // Asked of /readyz, which no limit counts: polling with the key would spend its 10 a minute.
    const everyReplicaReady = async () =>
      (await Promise.all(replicas.map((r) => get(`${r.url}/readyz`, null)))).every((x) => x.body.key_store === 'ok');
    await until('every replica reads Redis again', everyReplicaReady, 2000 + ref);
    assert.equal(await readable(replicas[0]), '1');
    assert.ok(Date.now() - t0 <= 2000 + ref);
    for (const r of replicas) {
      const again = await get(`${r.url}/v1/owners?limit=1`, k.key);
      assert.equal(again.status, 200, JSON.stringify(again.body));
    }
    // The outage was logged, with Redis's address but never its password.
    const logs = replicas.flatMap((r) => r.logs.map((l) => JSON.stringify(l)));
    assert.ok(
      logs.some((l) => l.includes('redis unavailable; failing closed') && l.includes('redis://:***@127.0.0.1')),
    );
    assert.ok(logs.some((l) => l.includes('redis available again')));
    assert.deepEqual(
      logs.filter((l) => l.includes(PASSWORD)),
      [],
    );
  });
});

describe('REDIS_URL: what Redis persists', { skip: noRedis }, () => {
  /** A replica on a fresh redis-server with this persistence: its /readyz once checked, and its warnings. */
  async function replicaOn(persistence: 'none' | 'aof' | 'rdb', opts: { noConfig?: boolean } = {}) {
    const { daemon: own, url: adminUrl } = await ownRedis(persistence);
    let url = adminUrl;
    if (opts.noConfig) {
      // An ACL user that may do everything but CONFIG, as a managed Redis often has it.
      const admin = await linkTo(url);
      await admin.redis.call('ACL', 'SETUSER', 'api', 'on', `>${PASSWORD}`, '~*', '+@all', '-config');
      await admin.close();
      url = urlOf(own.port, 'api');
    }
    const replica = await startServer({
      SNAPSHOT_PATH: (await fixtureSnapshot()).path,
      REDIS_URL: url,
      CURSOR_SECRET: SECRET,
    });
    try {
      const ready = await until('the persistence check', async () => {
        const r = await get(`${replica.url}/readyz`, null);
        return r.body.key_store_persistence !== null && r;
      });
      const warned = replica.logs.filter((l) => l.level === 'warn' && /appendonly/.test(String(l.msg)));
      return { ready, warned };
    } finally {
      await replica.close();
      await own.stop();
    }
  }

  it('warns at start and on /readyz (still 200) when Redis persists nothing', async () => {
    const { ready, warned } = await replicaOn('none');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.key_store_persistence, 'none');
    assert.equal(warned.length, 1);
    assert.match(
      String(warned[0].msg),
      /^redis persists nothing .*every API key is lost when it restarts.*appendonly yes/,
    );
    assert.deepEqual(ready.body.warnings, [warned[0].msg]);
  });

  it('warns that keys since the last save can be lost when Redis keeps snapshots only', async () => {
    const { ready, warned } = await replicaOn('rdb');
    assert.equal(ready.body.key_store_persistence, 'rdb');
    assert.equal(warned.length, 1);
    assert.deepEqual(ready.body.warnings, [warned[0].msg]);
  });

  it('says it cannot tell where CONFIG GET is refused and appendonly is off', async () => {
    const { ready, warned } = await replicaOn('none', { noConfig: true });
    assert.equal(ready.status, 200);
    assert.equal(ready.body.key_store, 'ok', 'the user may do what the service needs');
    assert.equal(ready.body.key_store_persistence, 'unknown');
    assert.equal(warned.length, 1);
    assert.match(String(warned[0].msg), /refuses CONFIG GET save/);
  });

  it('warns on stderr when the keys command writes to a Redis that persists nothing, and not with appendonly yes', async () => {
    for (const persistence of ['none', 'aof'] as const) {
      const { daemon: own, url } = await ownRedis(persistence);
      try {
        const r = await runScript('src/cli/keys.ts', ['create', '--name', 'ci'], { env: { REDIS_URL: url } });
        assert.equal(r.code, 0, r.stderr);
        assert.match(JSON.parse(r.stdout).key, /^nlr_live_/);
        if (persistence === 'none')
          assert.match(r.stderr, /^warning: redis persists nothing .*every API key is lost when it restarts/m);
        else assert.doesNotMatch(r.stderr, /warning/);
      } finally {
        await own.stop();
      }
    }
  });

  it('says nothing when Redis has appendonly yes', async () => {
    const { ready, warned } = await replicaOn('aof');
    assert.equal(ready.body.key_store_persistence, 'aof');
    assert.equal(ready.body.warnings, undefined);
    assert.deepEqual(warned, []);
  });
});
