// The single executable (scripts/sea.ts, made by npm run bundle) serves on its own: copied to an empty folder,
// with no node_modules anywhere near and no NODE_PATH, it loads better-sqlite3's addon from itself.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildSea, SEA_NAME } from '../scripts/sea.ts';
import { addonFile } from '../scripts/sea-addon.ts';
import { buildTestSnapshot, FIXTURES, issueKey, tempDir } from './helpers.ts';

const ROOT = join(FIXTURES, '..', '..');
const uid = process.getuid?.() ?? -1;

describe('single executable', () => {
  it('serves ping, a keyed search and the docs files from an empty folder, and runs the key command', async () => {
    // Its own folder holds the executable and nothing else; the parents have no node_modules either.
    const dir = tempDir();
    copyFileSync(await buildSea(tempDir()), join(dir, SEA_NAME));
    const exePath = join(dir, SEA_NAME);
    assert.deepEqual(readdirSync(dir), [SEA_NAME]);
    assert.ok(!existsSync(join(dir, '..', 'node_modules')) && !existsSync('/node_modules'));
    const { path: snapshot } = await buildTestSnapshot();
    const keysPath = join(tempDir(), 'keys.db');
    const { key, id } = issueKey(keysPath, { name: 'sea test' });
    const tmp = tempDir(); // where the addon is written: observable, and removed with the test's folders
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      TMPDIR: tmp,
      HOST: '127.0.0.1',
      PORT: '0',
      SNAPSHOT_PATH: snapshot,
      KEYS_PATH: keysPath,
      DEV_KEY: '0',
      LOG_REQUESTS: '0',
      CURSOR_SECRET: 'sea-test-cursor-secret-0123',
    }; // no NODE_PATH, NODE_OPTIONS or anything else of this process

    const list = spawnSync(exePath, ['keys', 'list'], { cwd: dir, env, encoding: 'utf8' });
    assert.equal(list.status, 0, list.stderr);
    assert.equal(JSON.parse(list.stdout).id, id);

    const server = spawn(exePath, [], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    server.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let buf = '';
        server.stdout.on('data', (d) => {
          buf += d;
          const m = /"msg":"listening","url":"([^"]+)"/.exec(buf);
          if (m) resolve(m[1]);
        });
        void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
        setTimeout(() => reject(new Error(`no listening line in 10 s: ${stderr}`)), 10_000).unref();
      });
      assert.deepEqual(await (await fetch(`${url}/v1/ping`)).json(), { service: 'nl-rental-data-api', status: 'ok' });
      const search = await fetch(`${url}/v1/listings?q=balcony&max_price=2500&limit=2`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      assert.equal(search.status, 200);
      const body = await search.json();
      assert.equal(body.data.length, 2);
      assert.ok(body.data.every((l: { id: string }) => l.id.startsWith('lst-')));
      assert.equal((await fetch(`${url}/v1/listings?limit=1`)).status, 401, 'the key is what let the search in');
      // The docs page's files are inside the executable, byte for byte.
      const swagger = join(ROOT, 'node_modules/swagger-ui-dist');
      const version = JSON.parse(readFileSync(join(swagger, 'package.json'), 'utf8')).version;
      const css = await fetch(`${url}/docs/assets/${version}/swagger-ui.css`, { headers: { 'Accept-Encoding': '' } });
      assert.equal(css.status, 200);
      assert.ok(Buffer.from(await css.arrayBuffer()).equals(readFileSync(join(swagger, 'swagger-ui.css'))));

      // The addon the process loaded is the one it wrote to its private folder under TMPDIR.
      const folder = join(tmp, `nl-rental-api-${uid}`);
      assert.equal(statSync(folder).mode & 0o777, 0o700);
      const maps = readFileSync(`/proc/${server.pid}/maps`, 'utf8');
      const loaded = maps.split('\n').filter((l) => l.includes('better_sqlite3'));
      assert.ok(loaded.length > 0 && loaded.every((l) => l.includes(`${folder}/better_sqlite3-`)), loaded.join('\n'));
      assert.deepEqual(readdirSync(dir), [SEA_NAME], 'nothing was written beside the executable');
    } finally {
      server.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
  });
});

describe('the addon file', () => {
  const bytes = new TextEncoder().encode('not really an addon');

  it('is written once under its hash and rewritten when the file there differs', () => {
    const base = tempDir();
    const a = addonFile(bytes, base);
    assert.equal(a.cleanup, undefined);
    assert.match(a.path, new RegExp(`/nl-rental-api-${uid}/better_sqlite3-[0-9a-f]{32}\\.node$`));
    const written = statSync(a.path).mtimeMs;
    assert.equal(addonFile(bytes, base).path, a.path);
    assert.equal(statSync(a.path).mtimeMs, written, 'the same content is not written again');
    chmodSync(a.path, 0o600);
    writeFileSync(a.path, 'tampered');
    assert.equal(addonFile(bytes, base).path, a.path);
    assert.deepEqual(new Uint8Array(readFileSync(a.path)), bytes);
    assert.equal(readdirSync(join(a.path, '..')).length, 1, 'no temporary file is left');
  });

  it('goes to a fresh private folder when the shared one is not private', () => {
    const base = tempDir();
    mkdirSync(join(base, `nl-rental-api-${uid}`), { mode: 0o777 });
    chmodSync(join(base, `nl-rental-api-${uid}`), 0o777); // past the umask
    const a = addonFile(bytes, base);
    assert.ok(a.cleanup);
    assert.ok(!a.path.includes(`nl-rental-api-${uid}/`));
    assert.equal(statSync(join(a.path, '..')).mode & 0o777, 0o700);
    assert.deepEqual(new Uint8Array(readFileSync(a.path)), bytes);
    a.cleanup();
    assert.ok(!existsSync(join(a.path, '..')));
  });
});
