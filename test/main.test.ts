// The real entry point (src/main.ts) as a process: buffered request log lines, the sample snapshot npm start builds
// first, and npm start itself handing SIGTERM on to the server.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../snapshot-format/schema.ts';
import { ROOT, tempDir } from './support/files.ts';
import { type ProcessEnv, runScript, sleep, spawnService } from './support/processes.ts';
import { issueKey } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

describe('src/main.ts as a process: request log', () => {
  it('writes one JSON line per request within about 50 ms, and every pending line at a normal stop', async () => {
    const keysPath = join(tempDir(), 'keys.db');
    const { id: keyId, key } = issueKey(keysPath);
    const main = await spawnService({ LOG_REQUESTS: '1', KEYS_PATH: keysPath });
    try {
      const requestLines = () => main.lines().filter((l) => l.request_id !== undefined && l.status !== undefined);
      const get = (p: string) =>
        fetch(main.url + p, { headers: { Authorization: `Bearer ${key}` } }).then((r) =>
          r.arrayBuffer().then(() => r.status),
        );
      for (let i = 0; i < 30; i++) assert.equal(await get('/v1/listings/lst-001'), 200);
      await sleep(400);
      const lines = requestLines();
      assert.equal(lines.length, 30, 'the buffered lines were written by the timer');
      for (const l of lines) {
        assert.equal(l.status, 200);
        assert.equal(l.key_id, keyId);
        assert.equal(l.path, '/v1/listings/lst-001');
      }
      assert.ok(!main.stdout().includes(key), 'the key is never logged');
      // Requests right before a stop: their lines are still buffered when SIGTERM arrives.
      for (let i = 0; i < 5; i++) assert.equal(await get('/v1/listings/no-such-id'), 404);
      assert.equal(await main.stop(), 0);
      const all = requestLines();
      assert.equal(all.length, 35, 'every line is flushed at exit');
      assert.deepEqual(
        all.slice(30).map((l) => l.status),
        [404, 404, 404, 404, 404],
      );
    } finally {
      await main.stop();
    }
  });
});

/** npm start's first step (build-snapshot/sample.ts) in `cwd`, SNAPSHOT_PATH unset unless given; its output. */
async function buildSample(cwd: string, env: ProcessEnv = {}, status = 0): Promise<string> {
  const r = await runScript('build-snapshot/sample.ts', [], { cwd, env: { SNAPSHOT_PATH: null, ...env } });
  assert.equal(r.code, status, r.stderr);
  return r.stdout + r.stderr;
}

describe('npm start: the sample snapshot', { concurrency: true }, () => {
  it('says once what to do with a damaged data/snapshot.db, instead of promising a rebuild it then refuses', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'data'));
    writeFileSync(join(cwd, 'data', 'snapshot.db'), 'SQLite format 3\u0000 cut short');
    const out = await buildSample(cwd, {}, 1);
    assert.match(
      out,
      /data\/snapshot\.db is not a snapshot this server can read .*remove it \(rm data\/snapshot\.db\)/,
    );
    assert.doesNotMatch(out, /rebuilding|remove it first/);
  });

  it('rebuilds data/snapshot.db when it was made by another schema version (never a SNAPSHOT_PATH)', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'data'));
    for (const f of readdirSync(join(ROOT, 'data')))
      if (f.endsWith('.ndjson')) copyFileSync(join(ROOT, 'data', f), join(cwd, 'data', f));
    const old = new Database(join(cwd, 'data', 'snapshot.db'));
    old.exec(
      "CREATE TABLE snapshot_meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO snapshot_meta VALUES ('schema_version', '4')",
    );
    old.close();
    assert.equal(
      await buildSample(cwd, { SNAPSHOT_PATH: join(cwd, 'data', 'snapshot.db') }),
      '',
      'a SNAPSHOT_PATH is never rebuilt',
    );
    assert.match(await buildSample(cwd), /is not of schema version \d+: rebuilding it from the sample data/);
    const main = await spawnService(
      { SNAPSHOT_PATH: null, LOG_REQUESTS: '0', KEYS_PATH: join(cwd, 'keys.db') },
      { cwd },
    );
    try {
      assert.equal((await fetch(`${main.url}/v1/ping`)).status, 200);
      const db = new Database(join(cwd, 'data', 'snapshot.db'), { readonly: true });
      try {
        assert.equal(
          Number(db.prepare("SELECT value FROM snapshot_meta WHERE key = 'schema_version'").pluck().get()),
          SCHEMA_VERSION,
        );
      } finally {
        db.close();
      }
    } finally {
      await main.stop();
    }
  });
});

describe('npm start: signals', () => {
  it('hands SIGTERM to the server, which drains and exits: no process is left holding the port', async () => {
    const dir = tempDir();
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_TEST')));
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: {
        ...base,
        SNAPSHOT_PATH: (await fixtureSnapshot()).path,
        KEYS_PATH: join(dir, 'keys.db'),
        HOST: '127.0.0.1',
        PORT: '0',
        WORKERS: '1',
        DEV_KEY: '0',
      },
    });
    let stdout = '';
    npm.stdout.on('data', (d) => {
      stdout += d;
    });
    const closed = new Promise((resolve) => npm.on('close', resolve));
    const deadline = Date.now() + 60_000;
    let m: RegExpExecArray | null = null;
    while (!(m = /"msg":"listening","url":"([^"]+)".*?"pid":(\d+)/.exec(stdout)) && Date.now() < deadline)
      await sleep(20);
    assert.ok(m, `listening: ${stdout}`);
    const [, url, pid] = m;
    assert.notEqual(Number(pid), npm.pid, 'the server is its own process under npm');
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.match(stdout, new RegExp(`"msg":"listening".*"version":"${version.replaceAll('.', '\\.')}"`), 'the release');
    assert.equal((await fetch(`${url}/v1/ping`)).status, 200);
    npm.kill('SIGTERM');
    await closed;
    const gone = () => {
      try {
        process.kill(Number(pid), 0);
        return false;
      } catch {
        return true;
      }
    };
    for (let i = 0; i < 250 && !gone(); i++) await sleep(20);
    const left = !gone();
    if (left) process.kill(Number(pid), 'SIGKILL');
    assert.equal(left, false, 'the server exited');
    assert.match(stdout, /"msg":"SIGTERM: stopping"/);
    assert.match(stdout, /"msg":"drained"/);
  });
});
