// SNAPSHOT_FOLLOW's download beside SNAPSHOT_PATH: the part file of a publication superseded while it was cut is
// removed, a resume answered with another range starts again from byte 0, and a write refused (a file-size limit, as a
// full disk) removes the part and refuses the publication as no_space, the process still up.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from './support/files.ts';
import { missing, spawnService, until } from './support/processes.ts';
import { metaOf, minisignKeys, publish, serveFolder } from './support/publication.ts';
import { rawServer, startServer } from './support/server.ts';
import { changedSource, editedSource, fixtureSnapshot } from './support/snapshots.ts';

const skip = missing('/usr/bin/minisign', 'minisign');

/** How the publisher answers the n-th request (0 first) for one .db file; undefined: the file, whole or its range. */
type Behaviour = (n: number, range: boolean, res: ServerResponse, bytes: Buffer) => true | undefined;

/**
 * A loopback publisher of `dir` that answers each .db as `behave` says (else as a plain static server would); with a
 * `token`, a request without `?token=<token>` gets 403 (a CDN's folder-wide token).
 */
async function publisher(dir: string, behave: Record<string, Behaviour>, token?: string) {
  const seen: Record<string, number> = {};
  return rawServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (token !== undefined && url.searchParams.get('token') !== token) return res.writeHead(403).end();
    const name = decodeURIComponent(url.pathname.slice(1));
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(dir, name));
    } catch {
      return res.writeHead(404).end();
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const n = (seen[name] = (seen[name] ?? -1) + 1);
    if (behave[name]?.(n, range !== null, res, bytes)) return;
    const headers = { ETag: '"same"', 'Last-Modified': new Date(0).toUTCString() };
    if (range === null) return res.writeHead(200, headers).end(bytes);
    const from = Number(range[1]);
    res.writeHead(206, { ...headers, 'Content-Range': `bytes ${from}-${bytes.length - 1}/${bytes.length}` });
    res.end(bytes.subarray(from));
  });
}

/** Half the file, then the connection cut. */
const cutHalfway = (res: ServerResponse, bytes: Buffer) => {
  res.writeHead(200, { 'Content-Length': bytes.length, ETag: '"same"' });
  res.write(bytes.subarray(0, bytes.length >> 1), () => res.destroy());
  return true as const;
};
const parts = (path: string) => readdirSync(dirname(path)).filter((n) => n.includes('.follow-'));

describe('following: the file downloaded beside SNAPSHOT_PATH', { skip }, () => {
  it('removes the part of a publication superseded while cut, and starts a resume answered with another range from byte 0', async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const path = join(tempDir('followed-'), 'snapshot.db');
    const [x, y, z] = await Promise.all([
      fixtureSnapshot(),
      fixtureSnapshot(changedSource(), { builtAt: '2026-11-02T00:00:00.000Z' }),
      fixtureSnapshot(
        editedSource((l) => l.delete([...l.keys()].at(-1)!)),
        { builtAt: '2026-11-03T00:00:00.000Z' },
      ),
    ]);
    const behave: Record<string, Behaviour> = {};
    const web = await publisher(pub, behave);
    const server = await startServer({
      SNAPSHOT_PATH: path,
      SNAPSHOT_FOLLOW: `${web.url}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: keys.pub,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '100',
      SNAPSHOT_FOLLOW_SPREAD_MS: '0',
    });
    const servedId = async () => (await server.get('/readyz')).body.snapshot?.id;
    try {
      // X: cut halfway, then 503 for good: its part stays beside the path.
      behave[`${metaOf(x.path).id}.db`] = (n, _range, res, bytes) => {
        if (n === 0) return cutHalfway(res, bytes);
        res.writeHead(503).end();
        return true;
      };
      await publish(pub, x.path, keys);
      await until(
        'the part of X',
        () => parts(path).length === 1 && server.logs.some((l) => String(l.msg).includes('check failed')),
      );
      // Y replaces X in latest.json: X's part is removed before Y is downloaded.
      const published = await publish(pub, y.path, keys);
      await until('Y served', async () => (await servedId()) === published.id);
      assert.deepEqual(parts(path), []);

      // Z: cut halfway; the resume is answered with the whole file as a range from byte 0 (another range).
      behave[`${metaOf(z.path).id}.db`] = (n, range, res, bytes) => {
        if (n === 0) return cutHalfway(res, bytes);
        if (!range) return undefined;
        res.writeHead(206, { 'Content-Range': `bytes 0-${bytes.length - 1}/${bytes.length}`, ETag: '"same"' });
        res.end(bytes);
        return true;
      };
      const third = await publish(pub, z.path, keys);
      await until('Z served', async () => (await servedId()) === third.id);
      assert.ok(server.logs.some((l) => String(l.error).includes('restarting from byte 0')));
      assert.deepEqual(parts(path), []);
    } finally {
      await server.close();
      await web.close();
    }
  });
});

describe("SNAPSHOT_FOLLOW's query (a folder-wide token)", { skip }, () => {
  it('is sent with latest.json, the signature and the snapshot, and never shown', async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const web = await publisher(pub, {}, 'query-secret');
    const server = await startServer({
      SNAPSHOT_PATH: join(tempDir('followed-'), 'snapshot.db'),
      SNAPSHOT_FOLLOW: `${web.url}/latest.json?token=query-secret`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: keys.pub,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '100',
    });
    try {
      const published = await publish(pub, (await fixtureSnapshot()).path, keys);
      const body = await until('the publication served', async () => {
        const r = (await server.get('/readyz')).body;
        return r.snapshot?.id === published.id && r;
      });
      assert.ok(!JSON.stringify([server.logs, body]).includes('query-secret'));
    } finally {
      await server.close();
      await web.close();
    }
  });
});

describe('following under a file-size limit (ulimit -f, standing for a full disk)', {
  skip: skip ?? missing('/usr/sbin/nginx', 'nginx'),
}, () => {
  it('refuses the publication as no_space when a write is refused (EFBIG), removes the part, and stays up', async () => {
    const keys = await minisignKeys();
    const pub = tempDir('publication-');
    const path = join(tempDir('followed-'), 'snapshot.db');
    const snapshot = (await fixtureSnapshot()).path;
    const kib = Math.floor(readFileSync(snapshot).length / 2048); // half the snapshot
    const nginx = await serveFolder(pub);
    await publish(pub, snapshot, keys);
    const service = await spawnService(
      {
        SNAPSHOT_PATH: path,
        SNAPSHOT_FOLLOW: `${nginx.http}/latest.json`,
        SNAPSHOT_FOLLOW_PUBLIC_KEY: keys.pub,
        SNAPSHOT_FOLLOW_INTERVAL_MS: '600000', // one check
        SNAPSHOT_FOLLOW_SPREAD_MS: '0',
        LOG_REQUESTS: '0',
      },
      { fileLimitKiB: kib },
    );
    try {
      const refusal = await until('a no_space refusal', () => service.lines().find((l) => l.reason === 'no_space'));
      assert.match(refusal.error, /EFBIG.*removed the partial file/);
      assert.deepEqual(parts(path), []);
      const r = await fetch(`${service.url}/readyz`);
      assert.equal(r.status, 503);
      assert.equal((await r.json()).follow.refused.reason, 'no_space');
      assert.equal(service.child.exitCode, null);
    } finally {
      await service.stop();
      await nginx.stop();
    }
  });
});
