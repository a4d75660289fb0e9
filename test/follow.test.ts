// SNAPSHOT_FOLLOW in one process: a publication folder served by real nginx and signed by the real minisign; a start
// with nothing at SNAPSHOT_PATH, a new publication swapped in, and each refusal, the old snapshot serving meanwhile.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { spreadDelay } from '../src/snapshot/follow.ts';
import { damagedCopy, wrongVersionCopy } from './support/bad-snapshots.ts';
import { BASIC, tempDir } from './support/files.ts';
import { missing, until } from './support/processes.ts';
import { type Keys, metaOf, minisignKeys, publish, type StaticNginx, serveFolder } from './support/publication.ts';
import { rawServer, startBare, startServer, type TestServer } from './support/server.ts';
import { changedSource, editedSource, fixtureSnapshot } from './support/snapshots.ts';

const skip = missing('/usr/sbin/nginx', 'nginx') ?? missing('/usr/bin/minisign', 'minisign');

describe('following a publication (one process)', { skip }, () => {
  let keys: Keys;
  let other: Keys;
  let nginx: StaticNginx;
  let server: TestServer;
  const pub = tempDir('publication-');
  const path = join(tempDir('followed-'), 'snapshot.db');
  // Three snapshots, built one day apart: A, then B, then C.
  let a: string;
  let b: string;
  let c: string;

  const served = async () => (await server.get('/readyz')).body;
  const downloads = (file: string) =>
    readFileSync(nginx.log, 'utf8')
      .split('\n')
      .filter((l) => l.includes(`GET /${file} `)).length;
  /** Waits for a refusal of `reason` (a new one), then checks the served snapshot is still `id` and answers. */
  async function refused(reason: string, id: string) {
    const r = await until(`a ${reason} refusal`, async () => {
      const body = await served();
      return body.follow?.refused?.reason === reason && body.follow.refused.at > since && body;
    });
    assert.equal(r.snapshot.id, id);
    assert.equal(r.status, 'ready');
    assert.equal((await server.get('/v1/listings?limit=1')).status, 200);
    since = r.follow.refused.at;
    return r.follow.refused;
  }
  let since = '';

  before(async () => {
    [keys, other] = await Promise.all([minisignKeys(), minisignKeys()]);
    a = (await fixtureSnapshot()).path;
    b = (await fixtureSnapshot(changedSource(), { builtAt: '2026-11-02T00:00:00.000Z' })).path;
    c = (
      await fixtureSnapshot(
        editedSource((l) => l.delete([...l.keys()].at(-1)!)),
        { builtAt: '2026-11-03T00:00:00.000Z' },
      )
    ).path;
    nginx = await serveFolder(pub);
    server = await startServer({
      SNAPSHOT_PATH: path,
      SNAPSHOT_FOLLOW: `${nginx.http}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: keys.pub,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '100',
      SNAPSHOT_FOLLOW_SPREAD_MS: '0',
      SNAPSHOT_CHECK_MS: '100',
    });
  });
  after(async () => {
    await server?.close();
    await nginx?.stop();
  });

  it('starts with nothing at SNAPSHOT_PATH: live, not ready, then serves the first publication', async () => {
    assert.equal((await server.get('/livez')).status, 200);
    const r = await server.get('/readyz');
    assert.equal(r.status, 503);
    assert.equal(r.body.status, 'no_snapshot');
    assert.equal(r.body.follow.url, `${nginx.http}/latest.json`);
    assert.equal((await server.get('/v1/listings?limit=1')).status, 503);
    const first = await publish(pub, a, keys);
    const ready = await until('the first publication served', async () => {
      const res = await server.get('/readyz');
      return res.status === 200 && res.body;
    });
    assert.equal(ready.snapshot.id, first.id);
    assert.equal(ready.follow.served.snapshot_id, first.id);
    assert.equal((await server.get('/v1/listings?limit=1')).status, 200);
  });

  it('swaps in a new publication', async () => {
    const next = await publish(pub, b, keys);
    await until('B served', async () => (await served()).snapshot.id === next.id);
    assert.ok(server.logs.some((l) => String(l.msg).includes('signature verified')));
  });

  it('refuses a publication signed by another key, names it a signature refusal, and does not download it again', async () => {
    const bad = await publish(pub, c, other);
    const r = await refused('signature', (await served()).snapshot.id);
    assert.match(r.message, /signature refused \(wrong_key\)/);
    const line = server.logs.find((l) => l.reason === 'signature');
    assert.match(String(line?.msg), /signature refused/);
    const got = downloads(bad.latest.file as string);
    await new Promise((res) => setTimeout(res, 600)); // several intervals
    assert.equal(downloads(bad.latest.file as string), got);
  });

  it('takes a corrected publication of the same snapshot (signed by the right key)', async () => {
    const good = await publish(pub, c, keys);
    await until('C served', async () => (await served()).snapshot.id === good.id);
    assert.equal((await served()).follow.refused, null);
  });

  it('refuses a file changed after signing', async () => {
    const id = (await served()).snapshot.id;
    await publish(pub, b, keys, {
      afterSigning: (f) => {
        const bytes = readFileSync(f);
        bytes[bytes.length - 1] ^= 1;
        writeFileSync(f, bytes);
      },
    });
    assert.match((await refused('signature', id)).message, /bad_signature/);
  });

  it('refuses a rollback: a publication built before the one served', async () => {
    await publish(pub, a, keys);
    assert.match((await refused('rollback', (await served()).snapshot.id)).message, /rollback/);
  });

  it('refuses another schema version', async () => {
    await publish(pub, wrongVersionCopy(b), keys);
    assert.match((await refused('schema', (await served()).snapshot.id)).message, /schema version/);
  });

  it('refuses a file shorter or larger than published', async () => {
    const id = (await served()).snapshot.id;
    await publish(pub, b, keys, { latest: (l) => (l.size = (l.size as number) + 1) });
    assert.match((await refused('size', id)).message, /shorter/);
    await publish(pub, b, keys, { latest: (l) => (l.size = (l.size as number) - 1) });
    assert.match((await refused('size', id)).message, /larger/);
  });

  it('refuses a latest.json naming a file outside its folder', async () => {
    const id = (await served()).snapshot.id;
    await publish(pub, b, keys, { latest: (l) => (l.file = '../snapshot.db') });
    assert.match(
      (await refused('manifest', id)).message,
      /latest\.json's file must be a plain file name in the same folder/,
    );
  });
  it('refuses a publication larger than the free disk before downloading it', async () => {
    const id = (await served()).snapshot.id;
    const before = downloads(`${metaOf(b).id}.db`);
    await publish(pub, b, keys, { latest: (l) => (l.size = 2 ** 50) });
    assert.match((await refused('no_space', id)).message, /free disk/);
    assert.equal(downloads(`${metaOf(b).id}.db`), before);
  });

  it('refuses a signed file holding another snapshot than latest.json names', async () => {
    const id = (await served()).snapshot.id;
    await publish(pub, b, keys, {
      trusted: 'another signature',
      latest: (l) => (l.snapshot_id = 'snap_000000000000000000000000'),
    });
    assert.match(
      (await refused('mismatch', id)).message,
      /latest\.json names snapshot snap_0+ but the signed file holds/,
    );
  });

  it("refuses a signed file that the owner's candidate checks refuse (quick_check), and keeps serving", async () => {
    const id = (await served()).snapshot.id;
    const damaged = await publish(pub, damagedCopy(c), keys);
    assert.match((await refused('candidate', id)).message, /the service's checks refused it: .*quick_check/);
    // The file's own fault (quick_check): remembered, not downloaded again (a refusal that may pass is retried).
    const got = downloads(damaged.latest.file as string);
    await new Promise((res) => setTimeout(res, 800));
    assert.equal(downloads(damaged.latest.file as string), got);
    // The served snapshot is back at the path: a restart opens it, not the refused file.
    const r = await until('the path holds the served snapshot again', async () => {
      const body = await served();
      return body.path_refused === null && body.candidate === null && body;
    });
    assert.equal(r.snapshot.id, id);
    assert.equal(metaOf(path).id, id);
  });

  it('says stale (and stays ready) once the publication served has expired', async () => {
    const id = (await served()).snapshot.id;
    await publish(pub, c, keys, { trusted: `snapshot:${id}\texpires:${Math.floor(Date.now() / 1000) - 60}` });
    const r = await until('stale', async () => {
      const res = await server.get('/readyz');
      return res.body.status === 'stale' && res;
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.follow.stale, 'expired');
    assert.equal(r.body.snapshot.id, id);
    assert.equal((await server.get('/v1/listings?limit=1')).status, 200);
  });
});

/**
 * A loopback proxy to `port` that cuts the connection of the first whole-file request for a .db after `bytes` of
 * its answer (a network that drops midway); every other request passes untouched.
 */
async function cuttingProxy(port: number, bytes: number) {
  let armed = true;
  const server = createServer((client) => {
    const up = connect(port, '127.0.0.1');
    let cutting = false;
    let sent = 0;
    const both = () => {
      client.destroy();
      up.destroy();
    };
    client.on('data', (d) => {
      const head = d.toString('latin1');
      cutting = armed && /^GET \/\S+\.db HTTP/.test(head) && !/^range:/im.test(head);
      sent = 0;
      up.write(d);
    });
    up.on('data', (d: Buffer) => {
      if (cutting && sent + d.length > bytes) {
        armed = false;
        client.write(d.subarray(0, bytes - sent), both);
        return;
      }
      sent += d.length;
      client.write(d);
    });
    up.on('end', () => client.end());
    client.on('end', () => up.end());
    up.on('error', both);
    client.on('error', both);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, cut: () => !armed, server };
}

describe('a download cut midway', { skip }, () => {
  it('is resumed with Range from where it stopped, and the publication served', async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const nginx = await serveFolder(pub);
    const snapshot = (await fixtureSnapshot()).path;
    const size = readFileSync(snapshot).length;
    const proxy = await cuttingProxy(Number(new URL(nginx.http).port), Math.floor(size / 2));
    const server = await startServer({
      SNAPSHOT_PATH: join(tempDir('followed-'), 'snapshot.db'),
      SNAPSHOT_FOLLOW: `${proxy.url}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: keys.pub,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '100',
      SNAPSHOT_FOLLOW_SPREAD_MS: '0',
    });
    try {
      const published = await publish(pub, snapshot, keys);
      await until(
        'the publication served',
        async () => (await server.get('/readyz')).body.snapshot?.id === published.id,
      );
      assert.ok(proxy.cut(), 'the proxy cut the download');
      const cut = server.logs.find((l) => String(l.msg).includes('cut; resuming'));
      assert.ok(cut, 'the cut is logged');
      // nginx answered the rest as a range (206), from the byte the cut stopped at.
      const file = `/${published.id}.db`;
      const log = readFileSync(nginx.log, 'utf8')
        .split('\n')
        .filter((l) => l.includes(`GET ${file} `));
      assert.equal(log.length, 2, log.join('\n'));
      assert.match(log[1], / 206 /);
      assert.equal(server.logs.filter((l) => String(l.msg).includes('refused')).length, 0);
    } finally {
      await server.close();
      proxy.server.close();
      await nginx.stop();
    }
  });
});

describe('following settings', () => {
  it('sends SNAPSHOT_FOLLOW_HEADER and never logs it, nor the query or password of the URL', async () => {
    const seen: (string | undefined)[] = [];
    const publisher = await rawServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(404).end();
    });
    const url = new URL(`${publisher.url}/latest.json?X-Amz-Signature=query-secret`);
    url.username = 'user';
    url.password = 'url-secret';
    const server = await startServer({
      SNAPSHOT_PATH: join(tempDir('followed-'), 'snapshot.db'),
      SNAPSHOT_FOLLOW: url.href,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: (await minisignKeys()).key,
      SNAPSHOT_FOLLOW_HEADER: 'Authorization: Bearer header-secret',
      SNAPSHOT_FOLLOW_INTERVAL_MS: '50',
    });
    try {
      await until('a failed check', () => server.logs.some((l) => String(l.msg).includes('check failed')));
      assert.equal(seen[0], 'Bearer header-secret');
      const said = JSON.stringify([server.logs, (await server.get('/readyz')).body]);
      for (const secret of ['header-secret', 'query-secret', 'url-secret']) assert.ok(!said.includes(secret), secret);
      assert.match(said, /HTTP 404/);
    } finally {
      await server.close();
      await publisher.close();
    }
  });

  it('takes a bad redirect (another protocol, an invalid URL, https down to http) as a failed check, never a crash', async () => {
    const locations = ['ftp://example.com/latest.json', 'http://[::1', 'https://127.0.0.1:9/latest.json'];
    let n = 0;
    const publisher = await rawServer((_req, res) => res.writeHead(302, { Location: locations[n++ % 3] }).end());
    const server = await startServer({
      SNAPSHOT_PATH: join(tempDir('followed-'), 'snapshot.db'),
      SNAPSHOT_FOLLOW: `${publisher.url}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: (await minisignKeys()).key,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '50',
    });
    try {
      const errors = () =>
        server.logs.filter((l) => String(l.msg).includes('check failed')).map((l) => String(l.error));
      await until('three failed checks', () => errors().length >= 3);
      assert.match(errors()[0], /redirected to a ftp: URL \(only http: and https: are followed\)/);
      assert.match(errors()[1], /redirected to an invalid URL/);
      assert.equal((await server.get('/livez')).status, 200);
      assert.equal((await server.get('/readyz')).status, 503);
    } finally {
      await server.close();
      await publisher.close();
    }
  });

  it('never shows the query or password of the URL in a redirect loop (logs, /readyz)', async () => {
    const publisher = await rawServer((req, res) =>
      res.writeHead(302, { Location: `${req.url}x?X-Amz-Signature=query-secret` }).end(),
    );
    const url = new URL(`${publisher.url}/latest.json?X-Amz-Signature=query-secret`);
    url.username = 'user';
    url.password = 'url-secret';
    const server = await startServer({
      SNAPSHOT_PATH: join(tempDir('followed-'), 'snapshot.db'),
      SNAPSHOT_FOLLOW: url.href,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: (await minisignKeys()).key,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '50',
    });
    try {
      await until('a failed check', () => server.logs.some((l) => String(l.msg).includes('check failed')));
      const readyz = (await server.get('/readyz')).body;
      assert.match(readyz.follow.last_error, /more than 5 redirects/);
      const said = JSON.stringify([server.logs, readyz]);
      for (const secret of ['query-secret', 'url-secret']) assert.ok(!said.includes(secret), secret);
    } finally {
      await server.close();
      await publisher.close();
    }
  });

  it('refuses to start on a public key that is not one, naming the setting', async () => {
    await assert.rejects(
      startBare({ SNAPSHOT_FOLLOW: 'http://127.0.0.1:9/latest.json', SNAPSHOT_FOLLOW_PUBLIC_KEY: BASIC }),
      /^Error: SNAPSHOT_FOLLOW_PUBLIC_KEY: no minisign public key in /,
    );
    assert.throws(
      () => loadConfig({ SNAPSHOT_FOLLOW: 'http://127.0.0.1:9/latest.json' }),
      /SNAPSHOT_FOLLOW_PUBLIC_KEY: needed/,
    );
    assert.throws(
      () => loadConfig({ SNAPSHOT_FOLLOW: 'ftp://example.com/latest.json' }),
      /SNAPSHOT_FOLLOW: must be an http/,
    );
  });

  it('spreads replicas by a delay derived from the instance name: the same name, the same delay', () => {
    const delays = ['api-0', 'api-1', 'api-2', 'api-3'].map((n) => spreadDelay(n, 30_000));
    assert.deepEqual(
      delays,
      ['api-0', 'api-1', 'api-2', 'api-3'].map((n) => spreadDelay(n, 30_000)),
    );
    assert.ok(delays.every((d) => d >= 0 && d <= 30_000));
    assert.ok(new Set(delays).size > 1, delays.join(', '));
    assert.equal(spreadDelay('api-0', 0), 0);
  });
});
