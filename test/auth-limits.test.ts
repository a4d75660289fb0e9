// Rate limits per key and per address over HTTP, and the key store failing closed: 503 while it is missing, garbage,
// in WAL mode or locked, a change seen on the next lookup, a missing snapshot file not mistaken for it.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs, { copyFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { digestKeyBase64, generateKey } from '../src/access/key-format.ts';
import { KeyReader, KeyStoreUnavailable } from '../src/access/key-reader.ts';
import { changeKey, createKey, openKeyStore } from '../src/access/key-store.ts';
import { addressBucket, createLimits } from '../src/access/rate-limit.ts';
import { ROOT, tempDir } from './support/files.ts';
import { sleep } from './support/processes.ts';
import { issueKey, startBare, startServer, useServer } from './support/server.ts';
import { assertUnauthorized } from './support/shapes.ts';
import { fixtureSnapshot, snapshotCopy } from './support/snapshots.ts';

describe('rate limits per key', () => {
  const server = useServer({ RATE_LIMIT_PER_MINUTE: '3' }, { rateWindowSeconds: 2 });
  it('answers 429 with a truthful Retry-After once a key used its allowance, and counts down RateLimit', async () => {
    const other = issueKey(server.keysPath);
    for (const left of [2, 1, 0]) {
      const r = await server.get('/v1/listings?limit=1');
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('ratelimit-policy'), '"per-key";q=3;w=2');
      assert.match(r.headers.get('ratelimit')!, new RegExp(`^"per-key";r=${left};t=[12]$`));
    }
    const r = await server.get('/v1/listings?limit=1');
    assert.equal(r.status, 429);
    assert.equal(r.body.error.code, 'rate_limited');
    const wait = Number(r.headers.get('retry-after'));
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 2, `Retry-After ${wait}`);
    assert.match(r.headers.get('ratelimit')!, /^"per-key";r=0;t=[12]$/);
    assert.equal((await server.get('/v1/listings?limit=1', { key: other.key })).status, 200, 'limits are per key');
    assert.equal((await server.get('/v1/ping', { key: null })).status, 200, 'ping is not limited');
    await sleep(wait * 1000);
    assert.equal((await server.get('/v1/listings?limit=1')).status, 200, 'after Retry-After the key gets through');
  });
});

describe('rate limits per address', () => {
  const server = useServer({ AUTH_FAILURES_PER_MINUTE: '2', TRUST_PROXY: '1' }, { rateWindowSeconds: 2 });
  it('answers 429 to failed authentications from an address after too many, until Retry-After; a valid key is still served', async () => {
    // The proxy appends the address it saw; the entries before it are the client's to choose.
    const from = (ip: string, spoof = '198.18.0.99') => ({
      'X-Forwarded-For': `${spoof}, ${ip}`,
      Authorization: 'Bearer nope',
    });
    assertUnauthorized(await server.get('/v1/listings', { headers: from('203.0.113.7') }), 'first');
    assertUnauthorized(
      await server.get('/v1/listings', { headers: from('203.0.113.7', '192.0.2.1') }),
      'second (another spoofed entry counts for the same address)',
    );
    const r = await server.get('/v1/listings', { headers: from('203.0.113.7', '192.0.2.2') });
    assert.equal(r.status, 429);
    assert.equal(r.body.error.code, 'rate_limited');
    const wait = Number(r.headers.get('retry-after'));
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 2, `Retry-After ${wait}`);
    assert.equal(
      (await server.get('/v1/listings', { headers: { 'X-Forwarded-For': '203.0.113.7' } })).status,
      200,
      'a valid key from the blocked address is served',
    );
    assert.equal(
      (await server.get('/v1/listings', { headers: { 'X-Forwarded-For': '203.0.113.7, 198.51.100.1' } })).status,
      200,
      'another address is unaffected',
    );
    assertUnauthorized(
      await server.get('/v1/listings', { headers: from('198.51.100.1', '203.0.113.7') }),
      'naming the blocked address first does not aim the block at it',
    );
    assert.equal(
      (await server.get('/v1/ping', { key: null, headers: { 'X-Forwarded-For': '203.0.113.7' } })).status,
      200,
      'ping stays public',
    );
    await sleep(wait * 1000);
    assertUnauthorized(
      await server.get('/v1/listings', { headers: from('203.0.113.7') }),
      'after Retry-After a failure is a 401 again',
    );
  });
});

describe('rate limit bookkeeping', () => {
  it('keeps memory bounded: entries vanish when their window ends', async () => {
    // The windows' clock is the test's: on a busy machine the 2500 entries may take longer to make than a window.
    let now = Date.now();
    const limits = createLimits({ perKey: 5, authFailures: 5, windowSeconds: 0.2, now: () => now });
    for (let i = 0; i < 2000; i++) await limits.recordFailure(`10.${i >> 8}.${i & 255}.1`);
    for (let i = 0; i < 500; i++) await limits.consumeKey(`key_${i}`);
    assert.equal(limits.size(), 2500);
    now += 400;
    assert.equal(limits.size(), 0);
  });

  it('groups IPv6 addresses by /64 and unwraps IPv4-mapped addresses', () => {
    assert.equal(addressBucket('2001:db8:1:2:aaaa::1'), addressBucket('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
    assert.notEqual(addressBucket('2001:db8:1:2::1'), addressBucket('2001:db8:1:3::1'));
    assert.equal(addressBucket('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(addressBucket('192.0.2.1'), '192.0.2.1');
  });
});

describe('fail closed: a key store missing, garbage or in WAL mode', () => {
  const server = useServer({}, { keysRetryMs: 50 });
  it('answers 503 while the key store is missing or garbage, and recovers when it is back', async () => {
    const backup = `${tempDir()}/keys.bak`;
    copyFileSync(server.keysPath, backup);
    const unavailable = async (what: string) => {
      const r = await server.get('/v1/listings');
      assert.equal(r.status, 503, what);
      assert.equal(r.body.error.code, 'service_unavailable', what);
      assert.match(r.headers.get('retry-after') ?? '', /^\d+$/, what);
      assert.equal((await server.get('/v1/ping', { key: null })).status, 200, `${what}: ping still answers`);
    };

    rmSync(server.keysPath);
    await unavailable('deleted');
    await unavailable('still deleted');
    copyFileSync(backup, server.keysPath);
    await sleep(60);
    assert.equal((await server.get('/v1/listings')).status, 200, 'recovered after restore');

    writeFileSync(server.keysPath, Buffer.alloc(8192, 0x41)); // garbage in place (same inode)
    await unavailable('garbage');
    await sleep(60);
    await unavailable('garbage, retried');
    writeFileSync(server.keysPath, readFileSync(backup));
    await sleep(60);
    assert.equal((await server.get('/v1/listings')).status, 200, 'recovered after rewrite');
    assert.ok(server.logs.some((l) => l.msg === 'key store unavailable; failing closed'));

    // Switched to WAL by hand: the change counter no longer tracks revocations, so the store is refused.
    const journal = (mode: string) => {
      const db = new Database(server.keysPath);
      db.pragma(`journal_mode = ${mode}`);
      db.close();
    };
    journal('WAL');
    await unavailable('WAL mode');
    assert.ok(
      server.logs.some((l) => String(l.reason ?? '').includes('WAL mode')),
      'the log says why',
    );
    journal('DELETE');
    await sleep(60);
    assert.equal((await server.get('/v1/listings')).status, 200, 'recovered in rollback mode');
  });
});

describe('fail closed: the key store', () => {
  it('sees a change written in place on the very next lookup, and a file renamed into place from the next turn on (one stat per turn)', async () => {
    const dir = tempDir();
    const path = `${dir}/keys.db`;
    const k = issueKey(path);
    const k2 = issueKey(path);
    const digest = digestKeyBase64(k.key);
    const turn = () => new Promise((r) => setImmediate(r));
    // Counts the stats of the key store (fileIdentity's statSync, seen through the synced ESM binding).
    let stats = 0;
    const realStat = fs.statSync;
    const writable = fs as { statSync: typeof fs.statSync };
    writable.statSync = ((...a: Parameters<typeof fs.statSync>) => {
      if (a[0] === path) stats++;
      return realStat(...a);
    }) as typeof fs.statSync;
    syncBuiltinESMExports();
    const reader = new KeyReader(path, { retryMs: 0 });
    try {
      // What the keys command does, a write in place, made fast (an open connection, no fsync) so that
      // the lookups around it come within microseconds of each other, well inside one turn.
      const writer = openKeyStore(path, { create: false });
      writer.pragma('synchronous = OFF');
      try {
        assert.equal(reader.lookup(digest)?.revoked_at, null);
        changeKey(writer, k.id, 'revoke');
        assert.notEqual(
          reader.lookup(digest)?.revoked_at,
          null,
          'the lookup right after the commit, in the same turn, sees the revocation',
        );
        changeKey(writer, k2.id, 'disable');
        assert.notEqual(reader.lookup(digestKeyBase64(k2.key))?.disabled_at, null, 'and a disable');
      } finally {
        writer.close();
      }
      stats = 0;
      for (let i = 0; i < 5; i++) reader.lookup(digest);
      assert.equal(stats, 0, 'no more stats in this turn: writes in place are seen by the change counter');
      await turn();
      for (let i = 0; i < 5; i++) reader.lookup(digest);
      assert.equal(stats, 1, 'one stat for the lookups of the next turn');

      const other = `${dir}/other.db`; // another store renamed into place (a restored backup): a new inode
      const k3 = issueKey(other);
      renameSync(other, path);
      await turn();
      assert.equal(reader.lookup(digestKeyBase64(k3.key))?.id, k3.id, 'the next turn reads the new file');
      assert.equal(reader.lookup(digest), undefined, 'and forgets the old one');

      const third = `${dir}/third.db`; // a turn that lasts: the stat is reused for less than a millisecond
      const k4 = issueKey(third);
      reader.lookup(digest);
      renameSync(third, path);
      const until = performance.now() + 2;
      while (performance.now() < until);
      assert.equal(
        reader.lookup(digestKeyBase64(k4.key))?.id,
        k4.id,
        'the same turn, 2 ms later, reads the renamed file',
      );

      rmSync(path);
      await turn();
      assert.throws(
        () => reader.lookup(digest),
        (e) => e instanceof KeyStoreUnavailable,
        'a deleted store fails closed on the next turn',
      );
      assert.throws(
        () => reader.lookup(digest),
        (e) => e instanceof KeyStoreUnavailable,
        'and within the same turn too',
      );
      reader.close();
      assert.throws(
        () => reader.lookup(digest),
        (e) => e instanceof KeyStoreUnavailable,
        'a closed reader fails closed, not with a TypeError',
      );
    } finally {
      reader.close();
      (fs as { statSync: typeof fs.statSync }).statSync = realStat;
      syncBuiltinESMExports();
    }
  });

  it('goes on serving the open snapshot (not 500) while its file is missing, with a valid key', async () => {
    const snap = await snapshotCopy();
    const server = await startServer({ SNAPSHOT_PATH: snap, SNAPSHOT_CHECK_MS: '1' });
    try {
      rmSync(snap);
      await sleep(5);
      const r = await server.get('/v1/listings');
      assert.equal(r.status, 200);
      assert.equal(r.body.data.length > 0, true);
    } finally {
      await server.close();
    }
  });

  it('creates an empty key store at start-up when none exists, and refuses a file that is not a key store', async () => {
    const snapshotPath = (await fixtureSnapshot()).path;
    const dir = tempDir();
    const s = await startBare({ SNAPSHOT_PATH: snapshotPath, KEYS_PATH: `${dir}/new/keys.db` });
    try {
      const r = await fetch(`${s.url}/v1/listings`);
      assert.equal(r.status, 401);
    } finally {
      await s.close();
    }
    await assert.rejects(
      startBare({ SNAPSHOT_PATH: snapshotPath, KEYS_PATH: snapshotPath }),
      /is a snapshot, not a key store/,
    );
    await assert.rejects(
      startBare({ SNAPSHOT_PATH: snapshotPath, KEYS_PATH: dir }),
      /is a folder; KEYS_PATH names the key store's file/,
    );
  });
});

describe('a key store held locked by a writer: requests meanwhile', () => {
  const server = useServer();
  it('answers keyed requests 503 after a bounded wait (not the 2.5 s of the lock) and ping at once, then serves the change when the lock is gone', async () => {
    const other = issueKey(server.keysPath);
    assert.equal((await server.get('/v1/listings?limit=1', { key: other.key })).status, 200);
    /** 20 keyed requests at once, then a ping, and how long they took. */
    const burst = async () => {
      const t0 = performance.now();
      const busy = await Promise.all(Array.from({ length: 20 }, () => server.get('/v1/listings?limit=1')));
      const ping = await server.get('/v1/ping', { key: null });
      return { busy, ping, ms: performance.now() - t0 };
    };
    // The same with the store free: how long they take on this machine now (files run side by side).
    const free = (await burst()).ms;
    // A writer revokes the other key, then holds the store locked (a sqlite3 shell in BEGIN EXCLUSIVE).
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const D = require('better-sqlite3'); const db = new D(process.argv[1]);
           db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").run(new Date().toISOString(), process.argv[2]);
           db.exec('BEGIN EXCLUSIVE'); console.log('locked');
           setTimeout(() => { db.exec('COMMIT'); db.close(); console.log('released'); }, 2500);`,
        server.keysPath,
        other.id,
      ],
      { cwd: ROOT },
    );
    let released = false;
    await new Promise<void>((resolve) =>
      holder.stdout.on('data', (d) => {
        if (String(d).includes('released')) released = true;
        resolve();
      }),
    );
    const { busy, ping, ms } = await burst();
    assert.equal(released, false, 'answered while the store was still locked: nothing waited for the lock');
    for (const r of busy) {
      assert.equal(r.status, 503);
      assert.equal(r.body.error.code, 'service_unavailable');
    }
    assert.equal(ping.status, 200);
    // Waiting for the lock would take its 2.5 s: the 1 s wait for the re-read plus 0.5 s, or four free bursts on a
    // busy machine, and less than 2.4 s.
    const bound = Math.min(2400, 1000 + Math.max(500, 4 * free));
    assert.ok(
      ms < bound,
      `20 keyed requests and a ping took ${ms.toFixed(0)} ms while the store was locked (free: ${free.toFixed(0)} ms)`,
    );
    await new Promise((resolve) => holder.on('close', resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await server.get('/v1/listings?limit=1')).status, 200);
    assert.equal((await server.get('/v1/listings?limit=1', { key: other.key })).status, 401, 'the revoke applies');
  });
});

describe('a key store held locked by a writer: the re-read under way', () => {
  const server = useServer();
  it('lets every key wait for the re-read of a changed store (no 503 for a new or a known key), at most ~1 s', async () => {
    const writer = openKeyStore(server.keysPath, { create: false });
    const timed = async (key: string | null, path = '/v1/listings?limit=1') => {
      const t0 = performance.now();
      const r = await server.get(path, { key });
      return { status: r.status, code: r.body?.error?.code, ms: performance.now() - t0 };
    };
    try {
      // A keyed request with the store free, the slowest of three: this machine's answer time now (files run side by
      // side), added to each bound below, which are for the wait on the store alone.
      let ref = 0;
      for (let i = 0; i < 3; i++) {
        const r = await timed(server.key);
        assert.equal(r.status, 200);
        ref = Math.max(ref, r.ms);
      }
      // `keys create` commits a key, and the server looks while the writer still holds the lock (here held on
      // purpose, in place of the last moments of its commit): the reader has seen the change and cannot read it yet.
      const fresh = createKey(writer, { name: 'fresh' });
      writer.exec('BEGIN EXCLUSIVE');
      const known = timed(server.key);
      const during = timed(fresh.key);
      await sleep(100);
      writer.exec('COMMIT'); // the writer has finished; the reader's re-read is still to come
      const after = timed(fresh.key);
      const [k, d, a] = await Promise.all([known, during, after]);
      assert.equal(k.status, 200, 'a key the table holds waits for the re-read too, and is served');
      assert.equal(d.status, 200, 'the new key sent during the lock is served once it is gone');
      assert.equal(a.status, 200, 'the new key sent right after the writer finished is served');

      // A key nobody issued, while the store stays locked: a 503 after the bounded wait; ping is never held up.
      createKey(writer, { name: 'another' });
      writer.exec('BEGIN EXCLUSIVE');
      try {
        assert.equal((await timed(server.key)).status, 503);
        const unknown = timed(generateKey());
        const ping = await timed(null, '/v1/ping');
        const u = await unknown;
        assert.equal(ping.status, 200);
        assert.ok(ping.ms < 250 + ref, `ping took ${ping.ms.toFixed(0)} ms while a request waited for the re-read`);
        assert.equal(u.status, 503);
        assert.equal(u.code, 'service_unavailable');
        assert.ok(u.ms >= 900 && u.ms < 2000 + ref, `the unknown key waited ${u.ms.toFixed(0)} ms`);
      } finally {
        writer.exec('COMMIT');
      }
      writer.close();
      await sleep(100);
      assert.equal((await timed(server.key)).status, 200, 'readable again');

      // A store that cannot be read at all (deleted) is no re-read under way: an unknown key fails closed at once.
      rmSync(server.keysPath);
      const gone = await timed(generateKey());
      assert.equal(gone.status, 503);
      assert.ok(gone.ms < 200 + ref, `the 503 for a deleted store took ${gone.ms.toFixed(0)} ms`);
    } finally {
      if (writer.open) writer.close();
    }
  });
});
