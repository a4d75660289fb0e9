// The real entry point (npx tsx src/main.ts) as a process: request log lines are buffered, yet none is lost.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
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
    const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
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
      child.kill('SIGKILL');
    }
  });
});
