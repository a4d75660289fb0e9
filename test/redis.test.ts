// Many boxes: replicas with REDIS_URL, all real: Debian's redis-server (and haproxy, where a suite needs the balancer:
// deploy/haproxy.cfg with loopback ports) on free ports, stopped by PID. One limit shared exactly, a revocation through
// the keys command seen by every replica, cursors across replicas, Redis down and back, and what Redis persists (these
// need redis-server alone); a Redis outage behind HAProxy leaves every replica in, and a snapshot rollout under load
// with a replica killed mid-run loses no request.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import autocannon from 'autocannon';
import { connectRedis, type RedisLink } from '../src/access/redis.ts';
import { redisKeyStore } from '../src/access/redis-keys.ts';
import { ROOT, tempDir } from './support/files.ts';
import { freePort } from './support/nginx.ts';
import {
  connections,
  type Daemon,
  get,
  type Listening,
  missing,
  type Reply,
  replaceIn,
  sleep,
  spawnService,
  startHaproxy,
  startRedis,
  until,
} from './support/processes.ts';
import { startServer, type TestServer } from './support/server.ts';
import { buildTestSnapshot, changedSource } from './support/snapshots.ts';

/** Why the suites that need redis-server cannot run here; and those that need HAProxy too. */
const noRedis = missing('/usr/bin/redis-server', 'redis-server');
const skip = noRedis ?? missing('/usr/sbin/haproxy', 'haproxy');
/** The API's request ids (HAProxy's own answers carry its unique-id, which has ':' and '_' in it). */
const API_REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = 'redis-test-cursor-secret-0123456789';
/** Redis's password: in REDIS_URL, and never in a log line. */
const PASSWORD = 'redis-pw-7f3a9c';
const L = 10;
const A = 3;

let redis: Daemon;
let redisUrl: string;
let link: RedisLink;
/** One key store on `link`, made once: each makes its scripts again (ioredis defineCommand), which raced a PING. */
let store: ReturnType<typeof redisKeyStore>;
let snapshot: string;

/** deploy/haproxy.cfg with the frontend on 127.0.0.1:`lb` (no TLS), these replicas, and checks every 200 ms. */
async function balancer(lb: number, replicas: string[]): Promise<Daemon> {
  let cfg = readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
  cfg = replaceIn(cfg, /bind :443 ssl .*/, `bind 127.0.0.1:${lb}`);
  cfg = replaceIn(cfg, 'bind :80', `bind 127.0.0.1:${await freePort()}`);
  cfg = replaceIn(cfg, /default-server check .*/, 'default-server check inter 200ms fall 1 rise 1 maxconn 500');
  cfg = replaceIn(cfg, /(\s+server api\d .*\n)+/, '\n');
  cfg += replicas.map((url, i) => `    server api${i + 1} ${new URL(url).host}\n`).join('');
  return startHaproxy(cfg, lb);
}

/** The keys command as a child process, with REDIS_URL: its exit status and JSON output. */
function keysCommand(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: redisUrl },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe('REDIS_URL: replicas share keys and limits', { skip: noRedis }, () => {
  let replicas: TestServer[] = [];

  before(async () => {
    redis = await startRedis(await freePort(), PASSWORD);
    redisUrl = `redis://:${PASSWORD}@127.0.0.1:${redis.port}`;
    link = connectRedis(redisUrl, { name: 'test' });
    assert.ok(await link.waitReady(5000));
    store = redisKeyStore(link, 'nlr:');
    snapshot = (await buildTestSnapshot()).path;
    const env = {
      SNAPSHOT_PATH: snapshot,
      REDIS_URL: redisUrl,
      CURSOR_SECRET: SECRET,
      RATE_LIMIT_PER_MINUTE: String(L),
      AUTH_FAILURES_PER_MINUTE: String(A),
      TRUST_PROXY: '1',
      LOG_REQUESTS: '1',
      METRICS_PORT: '0',
    };
    replicas = await Promise.all([0, 1, 2].map(() => startServer(env)));
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await link?.close();
    await redis?.stop();
  });

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
    const created = keysCommand('create', '--name', 'to revoke');
    assert.match(created.id, /^key_/);
    // From an address of its own: the failures of the test before used up 127.0.0.1's allowance.
    const own = { 'X-Forwarded-For': '198.51.100.7' };
    const owners = (r: TestServer) => get(`${r.url}/v1/owners?limit=1`, created.key, undefined, own);
    for (const r of replicas) assert.equal((await owners(r)).status, 200);
    assert.equal(keysCommand('revoke', created.id).status, 'revoked');
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
    assert.equal((await direct()).status, 200);
    // Stuck (SIGSTOP): a request waits about the command timeout, no more.
    redis.child.kill('SIGSTOP');
    let t0 = Date.now();
    const stuck = await direct();
    redis.child.kill('SIGCONT');
    assert.equal(stuck.status, 503);
    assert.ok(Date.now() - t0 < 1000, `answered in ${Date.now() - t0} ms`);
    await until('answers again', async () => (await direct()).status === 200);
    // Down: the keys survive in Redis's own file (production: appendonly), so SAVE first.
    await link.redis.save();
    await redis.stop();
    t0 = Date.now();
    const down = await direct();
    assert.equal(down.status, 503);
    assert.deepEqual(Object.keys(down.body.error), ['code', 'message', 'request_id']);
    assert.equal(down.body.error.code, 'service_unavailable');
    assert.equal(down.headers['retry-after'], '1');
    assert.ok(Date.now() - t0 < 1000, `answered in ${Date.now() - t0} ms`);
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
    await until('every replica reads Redis again', everyReplicaReady, 2000);
    assert.equal(await readable(replicas[0]), '1');
    assert.ok(Date.now() - t0 <= 2000);
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

describe('REDIS_URL behind HAProxy: a Redis outage', { skip }, () => {
  let own: Daemon;
  let ownUrl: string;
  let replicas: TestServer[] = [];
  let lb: Daemon;
  let lbUrl: string;

  before(async () => {
    own = await startRedis(await freePort(), PASSWORD);
    ownUrl = `redis://:${PASSWORD}@127.0.0.1:${own.port}`;
    snapshot ??= (await buildTestSnapshot()).path;
    const env = { SNAPSHOT_PATH: snapshot, REDIS_URL: ownUrl, CURSOR_SECRET: SECRET, TRUST_PROXY: '1' };
    replicas = await Promise.all([0, 1].map(() => startServer(env)));
    const port = await freePort();
    lb = await balancer(
      port,
      replicas.map((r) => r.url),
    );
    lbUrl = `http://127.0.0.1:${port}`;
    await until('every replica in the balancer', async () => (await get(`${lbUrl}/readyz`, null)).status === 200);
  });
  after(async () => {
    await lb?.stop();
    await Promise.all(replicas.map((r) => r.close()));
    await own?.stop();
  });

  it("keeps every replica in: ping, the OpenAPI document and /docs answer, keyed requests get the API's 503", async () => {
    const ownLink = connectRedis(ownUrl, { name: 'test' });
    assert.ok(await ownLink.waitReady(5000));
    const { key } = await redisKeyStore(ownLink, 'nlr:').create({ name: 'outage behind haproxy' });
    await ownLink.redis.save(); // kept across the restart below (production: appendonly)
    await ownLink.close();
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
    assert.equal(down.status, 503);
    assert.deepEqual(Object.keys(down.body.error), ['code', 'message', 'request_id']);
    assert.equal(down.body.error.code, 'service_unavailable');
    assert.equal(down.headers['retry-after'], '1');
    assert.match(down.body.error.request_id, API_REQUEST_ID, "the API's answer, not HAProxy's");
    assert.equal(down.headers['x-request-id'], down.body.error.request_id);
    assert.doesNotMatch(lb.output(), /is DOWN/, 'no replica was taken out');
    own = await startRedis(own.port, PASSWORD, own.dir);
    await until('keyed requests served again', async () => (await keyed()).status === 200, 5000);
  });
});

describe('REDIS_URL: a snapshot rollout under load, one replica killed', { skip }, () => {
  const main: Listening[] = [];
  let lb: Daemon;
  let lbUrl: string;
  let paths: string[];

  before(async () => {
    if (!redis || redis.child.exitCode !== null) redis = await startRedis(await freePort(), PASSWORD);
    redisUrl = `redis://:${PASSWORD}@127.0.0.1:${redis.port}`;
    snapshot ??= (await buildTestSnapshot()).path;
    paths = [0, 1, 2].map(() => join(tempDir(), 'snapshot.db'));
    for (const p of paths) copyFileSync(snapshot, p);
    const started = await Promise.all(
      paths.map((p) =>
        spawnService({
          SNAPSHOT_PATH: p,
          SNAPSHOT_CHECK_MS: '100',
          REDIS_URL: redisUrl,
          CURSOR_SECRET: SECRET,
          WORKERS: '1',
          TRUST_PROXY: '1',
          LOG_REQUESTS: '0',
          RATE_LIMIT_PER_MINUTE: '100000000',
        }),
      ),
    );
    main.push(...started);
    const port = await freePort();
    lb = await balancer(
      port,
      main.map((m) => m.url),
    );
    lbUrl = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await lb?.stop();
    await Promise.all(main.map((m) => m.stop()));
    await redis?.stop();
  });

  it('serves every request (0 non-2xx, 0 errors) while each replica swaps snapshots in turn and one is killed', async () => {
    const rlink = connectRedis(redisUrl, { name: 'test' });
    assert.ok(await rlink.waitReady(5000));
    const { key } = await redisKeyStore(rlink, 'nlr:').create({ name: 'load' });
    await rlink.close();
    const next = join(tempDir(), 'next.db');
    await buildTestSnapshot(changedSource(), next);
    const readyId = async (m: Listening) => (await get(`${m.url}/readyz`, null)).body?.snapshot?.id;
    const oldId = await readyId(main[0]);

    const load = autocannon({
      url: lbUrl,
      connections: 6,
      duration: 20,
      headers: { Authorization: `Bearer ${key}` },
      requests: [{ path: '/v1/listings/lst-001' }, { path: '/v1/listings?limit=20' }, { path: '/v1/owners?limit=5' }],
    });
    const steps: string[] = [];
    const rollout = (async () => {
      // One replica at a time: rename the new file over its snapshot, wait until its /readyz names the new id.
      for (const i of [0, 1]) {
        await sleep(3000);
        const file = `${paths[i]}.next`;
        copyFileSync(next, file);
        renameSync(file, paths[i]);
        const id = await until(`replica ${i} on the new snapshot`, async () => {
          const id = await readyId(main[i]);
          return id !== oldId && id;
        });
        steps.push(`replica ${i}: ${id}`);
      }
      await sleep(2000);
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

describe('REDIS_URL: what Redis persists', { skip: noRedis }, () => {
  /** A replica on a fresh redis-server with this persistence: its /readyz once checked, and its warnings. */
  async function replicaOn(persistence: 'none' | 'aof' | 'rdb', opts: { noConfig?: boolean } = {}) {
    const own = await startRedis(await freePort(), PASSWORD, undefined, persistence);
    let url = `redis://:${PASSWORD}@127.0.0.1:${own.port}`;
    if (opts.noConfig) {
      // An ACL user that may do everything but CONFIG, as a managed Redis often has it.
      const admin = connectRedis(url, { name: 'test' });
      assert.ok(await admin.waitReady(5000));
      await admin.redis.call('ACL', 'SETUSER', 'api', 'on', `>${PASSWORD}`, '~*', '+@all', '-config');
      await admin.close();
      url = `redis://api:${PASSWORD}@127.0.0.1:${own.port}`;
    }
    snapshot ??= (await buildTestSnapshot()).path;
    const replica = await startServer({ SNAPSHOT_PATH: snapshot, REDIS_URL: url, CURSOR_SECRET: SECRET });
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

  it('says nothing when Redis has appendonly yes', async () => {
    const { ready, warned } = await replicaOn('aof');
    assert.equal(ready.body.key_store_persistence, 'aof');
    assert.equal(ready.body.warnings, undefined);
    assert.deepEqual(warned, []);
  });
});
