// The operator's key command (spawned like npm run keys) and the development key made by npm start.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { digestKey, KEY_PATTERN } from '../src/access/key-format.ts';
import { tempDir } from './support/files.ts';
import { until } from './support/processes.ts';
import { startServer } from './support/server.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** `tsx file.ts` without the extra wrapper process: node with tsx's loader, as `npm run keys` runs it. */
const TSX = [process.execPath, '--import', 'tsx'];

function keys(keysPath: string, ...args: string[]) {
  return keysTo('pipe', keysPath, ...args);
}
/** keys with its stdout sent to `stdout` (a pipe, 'ignore' for /dev/null, or an open file descriptor). */
function keysTo(stdout: 'pipe' | 'ignore' | number, keysPath: string, ...args: string[]) {
  const r = spawnSync(TSX[0], [...TSX.slice(1), 'src/cli/keys.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, KEYS_PATH: keysPath },
    encoding: 'utf8',
    stdio: ['ignore', stdout, 'pipe'],
  });
  return {
    code: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    get lines() {
      return (r.stdout ?? '')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    },
  };
}

let snapshotPath: string;
before(async () => {
  snapshotPath = (await buildTestSnapshot()).path;
});

describe('npm run keys', () => {
  it('writes nothing to a file that is not a key store: only create makes an empty file one', () => {
    const dir = tempDir();
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    for (const args of [['list'], ['revoke', 'key_0000000000000000']]) {
      const r = keys(empty, ...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.match(r.stderr, /empty, not a key store/);
      assert.equal(statSync(empty).size, 0, 'still empty');
    }
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x)');
    db.close();
    const r = keys(other, 'list');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /other\.db is an SQLite file but not a key store of this service\n$/);
    // The two likeliest slips of KEYS_PATH, in words: a snapshot, and the folder the store is in.
    const snapshotCopy = join(dir, 'snapshot.db');
    writeFileSync(snapshotCopy, readFileSync(snapshotPath));
    for (const args of [['list'], ['create', '--name', 'x']]) {
      const s = keys(snapshotCopy, ...args);
      assert.equal(s.code, 1, args.join(' '));
      assert.match(s.stderr, /^keys: .*snapshot\.db is a snapshot, not a key store: KEYS_PATH names a file of its own/);
      const f = keys(dir, ...args);
      assert.equal(f.code, 1, args.join(' '));
      assert.match(f.stderr, /^keys: .* is a folder; KEYS_PATH names the key store's file \(e\.g\. .*\/keys\.db\)\n$/);
    }
    assert.deepEqual(readFileSync(snapshotCopy), readFileSync(snapshotPath), 'the snapshot is left as it was');
    const after = new Database(other, { readonly: true });
    assert.equal(after.pragma('journal_mode', { simple: true }), 'wal', 'its journal mode is left as it was');
    after.close();
    assert.equal(keys(empty, 'create', '--name', 'first').code, 0);
    assert.equal(statSync(empty).mode & 0o777, 0o600);
    assert.equal(keys(empty, 'list').lines.length, 1);
  });
  it('revokes a new key at once when it cannot be written to stdout, and refuses to create one for /dev/null', () => {
    const path = join(tempDir(), 'keys.db');
    const full = openSync('/dev/full', 'w');
    try {
      const r = keysTo(full, path, 'create', '--name', 'lost');
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /could not write the new key to stdout .*ENOSPC.*was revoked at once/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'one line, no stack trace');
      assert.equal(keysTo(full, path, 'list').code, 1, 'a list that cannot be written fails too');
    } finally {
      closeSync(full);
    }
    assert.deepEqual(
      keys(path, 'list').lines.map((k) => [k.name, k.status]),
      [['lost', 'revoked']],
    );
    const nowhere = keysTo('ignore', path, 'create', '--name', 'unseen');
    assert.equal(nowhere.code, 2);
    assert.match(nowhere.stderr, /\/dev\/null/);
    assert.equal(keys(path, 'list').lines.length, 1, 'no key was made');
  });
  it('ends a list quietly (exit 0, nothing on stderr) when its reader closes the pipe, as list | head -1 does', async () => {
    const path = join(tempDir(), 'keys.db');
    for (let i = 0; i < 3; i++) assert.equal(keys(path, 'create', '--name', `k${i}`).code, 0);
    const child = spawn(TSX[0], [...TSX.slice(1), 'src/cli/keys.ts', 'list'], {
      cwd: ROOT,
      env: { ...process.env, KEYS_PATH: path },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy(); // the reader is gone before the first line
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });
  it('creates a key, shows it once, and stores only its digest', () => {
    const path = join(tempDir(), 'sub', 'keys.db');
    const r = keys(path, 'create', '--name', 'partner A');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.lines.length, 1);
    const k = r.lines[0];
    assert.match(k.id, /^key_[0-9A-Za-z]{16}$/);
    assert.match(k.key, KEY_PATTERN);
    assert.equal(k.name, 'partner A');
    assert.equal(k.status, 'active');
    assert.equal(k.expires, null);
    assert.match(r.stderr, /shown only this once/);

    const db = new Database(path, { readonly: true });
    const rows = db.prepare('SELECT * FROM api_keys').all() as Record<string, unknown>[];
    db.close();
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0].digest, digestKey(k.key));
    assert.ok(!readFileSync(path).includes(k.key.slice(9, 49)), 'the secret is nowhere in the file');
  });

  it('lists keys one JSON object per line, without secrets or digests', () => {
    const path = join(tempDir(), 'keys.db');
    const a = keys(path, 'create', '--name', 'a').lines[0];
    const b = keys(path, 'create', '--name', 'b', '--expires-at', '2099-01-31T12:00:00+01:00').lines[0];
    assert.equal(b.expires, '2099-01-31T11:00:00.000Z');
    const r = keys(path, 'list');
    assert.equal(r.code, 0);
    assert.deepEqual(
      r.lines.map((l) => l.id),
      [a.id, b.id],
    );
    for (const l of r.lines) assert.deepEqual(Object.keys(l).sort(), ['created', 'expires', 'id', 'name', 'status']);
    assert.ok(!r.stdout.includes(a.key) && !r.stdout.includes(b.key));
  });

  it('disables, enables and revokes keys, and a running server follows at once; revocation is final', async () => {
    const path = join(tempDir(), 'keys.db');
    const server = await startServer({ SNAPSHOT_PATH: snapshotPath, KEYS_PATH: path });
    try {
      const k = keys(path, 'create', '--name', 'c').lines[0];
      const status = async () => (await server.get('/v1/listings?limit=1', { key: k.key })).status;
      assert.equal(await status(), 200);

      let r = keys(path, 'disable', k.id);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.lines[0].status, 'disabled');
      assert.equal(await status(), 401);
      assert.equal(keys(path, 'disable', k.id).code, 0, 'disabling twice is harmless');

      r = keys(path, 'enable', k.id);
      assert.equal(r.lines[0].status, 'active');
      assert.equal(await status(), 200);

      r = keys(path, 'revoke', k.id);
      assert.equal(r.lines[0].status, 'revoked');
      assert.equal(await status(), 401);

      r = keys(path, 'enable', k.id);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /revoked; revocation is final/);
      assert.equal(keys(path, 'disable', k.id).code, 1);
      assert.equal(await status(), 401);
      assert.equal(keys(path, 'list').lines.find((l) => l.id === k.id).status, 'revoked');
      assert.equal((await server.get('/v1/listings?limit=1')).status, 200, 'the other key still works');
    } finally {
      await server.close();
    }
  });

  it('exits 1 with a message for an unknown id or a missing store', () => {
    const path = join(tempDir(), 'keys.db');
    let r = keys(path, 'list');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no key store at/);
    keys(path, 'create', '--name', 'x');
    for (const cmd of ['disable', 'enable', 'revoke']) {
      r = keys(path, cmd, 'key_doesnotexist0000');
      assert.equal(r.code, 1, cmd);
      assert.match(r.stderr, /no key with id "key_doesnotexist0000"/);
    }
  });

  it('exits 2 with a usage message for bad arguments', () => {
    const path = join(tempDir(), 'keys.db');
    const cases: [string[], RegExp][] = [
      [[], /missing command/],
      [['frobnicate'], /unknown command "frobnicate"/],
      [['create'], /create needs --name/],
      [['create', '--name', '   '], /create needs --name/],
      [['create', '--name'], /argument missing|--name/],
      [['create', '--name', 'x', '--expires-at', 'tomorrow'], /--expires-at must be an ISO-8601/],
      [['create', '--name', 'x', '--expires-at', '2027-01-31T12:00:00'], /--expires-at must be an ISO-8601/],
      [['create', '--name', 'x', '--expires-at', '2020-01-01'], /must be in the future/],
      [['create', '--name', 'x', '--expires-at', '2099-02-30'], /--expires-at must be an ISO-8601/],
      [['create', '--name', 'x', '--expires-at', '2099-04-31T12:00:00Z'], /--expires-at must be an ISO-8601/],
      [['create', '--name', 'x', 'extra'], /no positional arguments/],
      [['create', '--name', 'x', '--bogus'], /^keys: unknown option --bogus\n/],
      [['create', '--name', 'a', '--name', 'b'], /--name is given more than once/],
      [
        ['create', '--name', 'a', '--expires-at', '2099-01-01', '--expires-at=2098-01-01'],
        /--expires-at is given more than once/,
      ],
      [['list', 'extra'], /list takes no arguments/],
      [['list', '--name', 'x'], /takes no --name/],
      [['disable'], /needs exactly one key id/],
      [['revoke', 'a', 'b'], /needs exactly one key id/],
    ];
    for (const [args, message] of cases) {
      const r = keys(path, ...args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, message, args.join(' '));
      assert.match(r.stderr, /Usage: npm run keys/, args.join(' '));
      assert.equal(r.stdout, '', args.join(' '));
    }
    const help = keys(path, '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: npm run keys/);
  });
});

/**
 * Runs src/main.ts as npm start does, until it logs "listening" and then, the development key's step coming after
 * it, until its output matches `expect` (at most 15 s: a loaded machine is slow) or, without `expect`, 200 ms more.
 */
async function start(
  env: Record<string, string>,
  expect?: RegExp,
): Promise<{ url: string; stderr: string; stdout: string; stop(): Promise<void> }> {
  const child = spawn(TSX[0], [...TSX.slice(1), 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_REQUESTS: '0', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      for (const line of stdout.split('\n')) {
        if (line.includes('"listening"')) resolve(JSON.parse(line).url);
      }
    });
    child.on('exit', (code) => reject(new Error(`main.ts exited ${code}: ${stderr}`)));
  });
  const deadline = Date.now() + (expect ? 15_000 : 200);
  while (Date.now() < deadline && !(expect?.test(stdout + stderr) ?? false))
    await new Promise((r) => setTimeout(r, 20));
  return {
    url,
    get stderr() {
      return stderr;
    },
    get stdout() {
      return stdout;
    },
    stop: () =>
      new Promise<void>((r) => {
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

describe('key store file', () => {
  it('is created readable by its owner only (0600), its new folder 0700', () => {
    const dir = join(tempDir(), 'new-folder');
    const path = join(dir, 'keys.db');
    keys(path, 'create', '--name', 'mode');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });
});

describe('npm start', () => {
  it('creates and prints one development key when the key store is empty, and only then', async () => {
    const path = join(tempDir(), 'keys.db');
    const first = await start({ SNAPSHOT_PATH: snapshotPath, KEYS_PATH: path, DEV_KEY: '1' }, /nlr_live_/);
    let key: string;
    try {
      // The banner follows the listening line once the key store was read: on a loaded machine, not within 200 ms.
      const m = await until(`a key on stderr: ${first.stderr}`, () => /(nlr_live_[0-9A-Za-z]{46})/.exec(first.stderr));
      key = m[1];
      assert.match(first.stderr, /curl -H "Authorization: Bearer nlr_live_/);
      assert.ok(!first.stdout.includes(key), 'the key is not in the JSON log');
      const r = await fetch(`${first.url}/v1/listings?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
      assert.equal(r.status, 200);
    } finally {
      await first.stop();
    }

    const second = await start({ SNAPSHOT_PATH: snapshotPath, KEYS_PATH: path, DEV_KEY: '1' });
    try {
      assert.ok(!/nlr_live_/.test(second.stderr), 'no second key');
      assert.equal(keys(path, 'list').lines.length, 1);
      assert.equal(
        (await fetch(`${second.url}/v1/listings?limit=1`, { headers: { Authorization: `Bearer ${key}` } })).status,
        200,
      );
    } finally {
      await second.stop();
    }
  });

  it('makes no development key behind a proxy (TRUST_PROXY=1), even on a loopback HOST, and says how to issue one', async () => {
    const path = join(tempDir(), 'keys.db');
    const s = await start(
      { SNAPSHOT_PATH: snapshotPath, KEYS_PATH: path, DEV_KEY: '1', TRUST_PROXY: '1' },
      /the key store is empty/,
    );
    try {
      await until('the warning', () => s.stdout.includes('the key store is empty'));
      assert.ok(!/nlr_live_/.test(s.stderr + s.stdout), 'no key printed');
      assert.match(
        s.stdout,
        /the key store is empty; issue a key with: npm run -s keys -- create --name NAME \(no development key is made behind a proxy/,
      );
      assert.equal(keys(path, 'list').lines.length, 0);
    } finally {
      await s.stop();
    }
  });
  it('makes no development key with DEV_KEY=0', async () => {
    const path = join(tempDir(), 'keys.db');
    const s = await start({ SNAPSHOT_PATH: snapshotPath, KEYS_PATH: path, DEV_KEY: '0' });
    try {
      assert.ok(!/nlr_live_/.test(s.stderr));
      assert.equal(keys(path, 'list').lines.length, 0, 'the store exists and is empty');
    } finally {
      await s.stop();
    }
  });
});
