// The real entry point (npx tsx src/main.ts) as a process: request log lines are buffered, yet none is lost.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../src/snapshot.ts';
import { buildTestSnapshot, issueKey, tempDir } from './helpers.ts';
import { ROOT } from './support.ts';

describe('npx tsx src/main.ts: request log', () => {
  it('writes one JSON line per request within about 50 ms, and every pending line at a normal stop', async () => {
    const { path: snapshot } = await buildTestSnapshot();
    const keysPath = join(tempDir(), 'keys.db');
    const { id: keyId, key } = issueKey(keysPath);
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_TEST')));
    const child = spawn(process.execPath, [tsx, 'src/main.ts'], {
      cwd: ROOT, env: { ...base, HOST: '127.0.0.1', PORT: '0', DEV_KEY: '0', LOG_REQUESTS: '1', KEYS_PATH: keysPath, SNAPSHOT_PATH: snapshot },
    });
    let stdout = '';
    child.stdout.on('data', (d) => { stdout += d; });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const kill = setTimeout(() => child.kill('SIGTERM'), 30_000);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const poll = setInterval(() => { const m = /"url":"([^"]+)"/.exec(stdout); if (m) { clearInterval(poll); resolve(m[1]); } }, 20);
        child.on('close', () => { clearInterval(poll); reject(new Error(`exited before listening: ${stdout}`)); });
      });
      const requestLines = () => stdout.split('\n').filter((l) => l.includes('"request_id"') && l.includes('"status"')).map((l) => JSON.parse(l));
      const get = (p: string) => fetch(url + p, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.arrayBuffer().then(() => r.status));
      for (let i = 0; i < 30; i++) assert.equal(await get('/v1/listings/lst-001'), 200);
      await new Promise((r) => setTimeout(r, 400));
      const lines = requestLines();
      assert.equal(lines.length, 30, 'the buffered lines were written by the timer');
      for (const l of lines) {
        assert.equal(l.status, 200);
        assert.equal(l.key_id, keyId);
        assert.equal(l.path, '/v1/listings/lst-001');
      }
      assert.ok(!stdout.includes(key), 'the key is never logged');
      // Requests right before a stop: their lines are still buffered when SIGTERM arrives.
      for (let i = 0; i < 5; i++) assert.equal(await get('/v1/listings/no-such-id'), 404);
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      const all = requestLines();
      assert.equal(all.length, 35, 'every line is flushed at exit');
      assert.deepEqual(all.slice(30).map((l) => l.status), [404, 404, 404, 404, 404]);
    } finally {
      clearTimeout(kill);
      // SIGTERM, not SIGKILL: the tsx CLI passes it on to the server it started (a SIGKILL would orphan it).
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    }
  });
});

describe('npx tsx src/main.ts: the sample snapshot', () => {
  it('rebuilds data/snapshot.db when it was made by another schema version (never a SNAPSHOT_PATH)', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'data'));
    for (const f of readdirSync(join(ROOT, 'data'))) if (f.endsWith('.ndjson')) copyFileSync(join(ROOT, 'data', f), join(cwd, 'data', f));
    const old = new Database(join(cwd, 'data', 'snapshot.db'));
    old.exec("CREATE TABLE snapshot_meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO snapshot_meta VALUES ('schema_version', '4')");
    old.close();
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_TEST') && k !== 'SNAPSHOT_PATH'));
    const child = spawn(process.execPath, [tsx, join(ROOT, 'src', 'main.ts')], {
      cwd, env: { ...base, HOST: '127.0.0.1', PORT: '0', DEV_KEY: '0', LOG_REQUESTS: '0', KEYS_PATH: join(cwd, 'keys.db') },
    });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const kill = setTimeout(() => child.kill('SIGTERM'), 60_000);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const poll = setInterval(() => { const m = /"url":"([^"]+)"/.exec(stdout); if (m) { clearInterval(poll); resolve(m[1]); } }, 50);
        child.on('close', () => { clearInterval(poll); reject(new Error(`exited before listening: ${stdout} ${stderr}`)); });
      });
      assert.match(stdout, /is not of schema version \d+: rebuilding it from the sample data/);
      assert.equal((await fetch(url + '/v1/ping')).status, 200);
      const db = new Database(join(cwd, 'data', 'snapshot.db'), { readonly: true });
      try { assert.equal(Number(db.prepare("SELECT value FROM snapshot_meta WHERE key = 'schema_version'").pluck().get()), SCHEMA_VERSION); } finally { db.close(); }
    } finally {
      clearTimeout(kill);
      // SIGTERM: the tsx CLI passes it on to the server it started (a SIGKILL would orphan that process).
      const closed = new Promise((r) => child.on('close', r));
      child.kill('SIGTERM');
      await closed;
    }
  });
});
