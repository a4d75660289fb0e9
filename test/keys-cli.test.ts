// The operator's key command (spawned like npm run keys) and the development key made by npm start.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { digestKey, KEY_PATTERN } from '../src/access/key-format.ts';
import { ROOT, tempDir } from './support/files.ts';
import { run, runScript, sleep, spawnService, until } from './support/processes.ts';
import { issueKey, startServer } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

/**
 * `node --import tsx src/cli/keys.ts` (what npm run keys runs, without npm: that is tested once) on the store at
 * `keysPath`, run to its end; its stdout a pipe unless given ('ignore' for /dev/null, or an open file descriptor).
 */
async function keysTo(stdout: 'pipe' | 'ignore' | number, keysPath: string, ...args: string[]) {
  const r = await runScript('src/cli/keys.ts', args, { env: { KEYS_PATH: keysPath }, stdout });
  return {
    ...r,
    get lines() {
      return r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    },
  };
}
const keys = (keysPath: string, ...args: string[]) => keysTo('pipe', keysPath, ...args);

// Each case has a key store of its own: the cases run at once.
describe('npm run keys', { concurrency: true }, () => {
  it('runs as the npm script: creates a key and prints it as one JSON line', async () => {
    const path = join(tempDir(), 'keys.db');
    const r = await run('npm', ['run', '-s', 'keys', '--', 'create', '--name', 'through npm'], {
      env: { KEYS_PATH: path },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(JSON.parse(r.stdout).key, KEY_PATTERN);
    assert.deepEqual(
      (await keys(path, 'list')).lines.map((k) => k.name),
      ['through npm'],
    );
  });
  it('writes nothing to a file that is not a key store: only create makes an empty file one', async () => {
    const dir = tempDir();
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x)');
    db.close();
    // The two likeliest slips of KEYS_PATH, in words: a snapshot, and the folder the store is in.
    const snapshotPath = (await fixtureSnapshot()).path;
    const snapshotCopy = join(dir, 'snapshot.db');
    writeFileSync(snapshotCopy, readFileSync(snapshotPath));
    const commands = [['list'], ['create', '--name', 'x']];
    const [onEmpty, onOther, onSnapshot, onFolder] = await Promise.all([
      Promise.all([['list'], ['revoke', 'key_0000000000000000']].map((args) => keys(empty, ...args))),
      keys(other, 'list'),
      Promise.all(commands.map((args) => keys(snapshotCopy, ...args))),
      Promise.all(commands.map((args) => keys(dir, ...args))),
    ]);
    for (const r of onEmpty) {
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /empty, not a key store/);
    }
    assert.equal(statSync(empty).size, 0, 'still empty');
    assert.equal(onOther.code, 1);
    assert.match(onOther.stderr, /other\.db is an SQLite file but not a key store of this service\n$/);
    for (const [i, args] of commands.entries()) {
      const s = onSnapshot[i];
      assert.equal(s.code, 1, args.join(' '));
      assert.match(s.stderr, /^keys: .*snapshot\.db is a snapshot, not a key store: KEYS_PATH names a file of its own/);
      const f = onFolder[i];
      assert.equal(f.code, 1, args.join(' '));
      assert.match(f.stderr, /^keys: .* is a folder; KEYS_PATH names the key store's file \(e\.g\. .*\/keys\.db\)\n$/);
    }
    assert.deepEqual(readFileSync(snapshotCopy), readFileSync(snapshotPath), 'the snapshot is left as it was');
    const after = new Database(other, { readonly: true });
    assert.equal(after.pragma('journal_mode', { simple: true }), 'wal', 'its journal mode is left as it was');
    after.close();
    assert.equal((await keys(empty, 'create', '--name', 'first')).code, 0);
    assert.equal(statSync(empty).mode & 0o777, 0o600);
    assert.equal((await keys(empty, 'list')).lines.length, 1);
  });
  it('revokes a new key at once when it cannot be written to stdout, and refuses to create one for /dev/null', async () => {
    const path = join(tempDir(), 'keys.db');
    const full = openSync('/dev/full', 'w');
    try {
      const r = await keysTo(full, path, 'create', '--name', 'lost');
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /could not write the new key to stdout .*ENOSPC.*was revoked at once/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'one line, no stack trace');
      assert.equal((await keysTo(full, path, 'list')).code, 1, 'a list that cannot be written fails too');
    } finally {
      closeSync(full);
    }
    assert.deepEqual(
      (await keys(path, 'list')).lines.map((k) => [k.name, k.status]),
      [['lost', 'revoked']],
    );
    const nowhere = await keysTo('ignore', path, 'create', '--name', 'unseen');
    assert.equal(nowhere.code, 2);
    assert.match(nowhere.stderr, /\/dev\/null/);
    assert.equal((await keys(path, 'list')).lines.length, 1, 'no key was made');
  });
  it('ends a list quietly (exit 0, nothing on stderr) when its reader closes the pipe, as list | head -1 does', async () => {
    const path = join(tempDir(), 'keys.db');
    for (let i = 0; i < 3; i++) issueKey(path, { name: `k${i}` }); // made in-process: the list is the subject
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', 'list'], {
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
  it('creates a key, shows it once, and stores only its digest', async () => {
    const path = join(tempDir(), 'sub', 'keys.db');
    const r = await keys(path, 'create', '--name', 'partner A');
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

  it('lists keys one JSON object per line, without secrets or digests', async () => {
    const path = join(tempDir(), 'keys.db');
    const a = (await keys(path, 'create', '--name', 'a')).lines[0];
    const b = (await keys(path, 'create', '--name', 'b', '--expires-at', '2099-01-31T12:00:00+01:00')).lines[0];
    assert.equal(b.expires, '2099-01-31T11:00:00.000Z');
    const r = await keys(path, 'list');
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
    const server = await startServer({ SNAPSHOT_PATH: (await fixtureSnapshot()).path, KEYS_PATH: path });
    try {
      const k = (await keys(path, 'create', '--name', 'c')).lines[0];
      const status = async () => (await server.get('/v1/listings?limit=1', { key: k.key })).status;
      assert.equal(await status(), 200);

      let r = await keys(path, 'disable', k.id);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.lines[0].status, 'disabled');
      assert.equal(await status(), 401);
      assert.equal((await keys(path, 'disable', k.id)).code, 0, 'disabling twice is harmless');

      r = await keys(path, 'enable', k.id);
      assert.equal(r.lines[0].status, 'active');
      assert.equal(await status(), 200);

      r = await keys(path, 'revoke', k.id);
      assert.equal(r.lines[0].status, 'revoked');
      assert.equal(await status(), 401);

      r = await keys(path, 'enable', k.id);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /revoked; revocation is final/);
      assert.equal((await keys(path, 'disable', k.id)).code, 1);
      assert.equal(await status(), 401);
      assert.equal((await keys(path, 'list')).lines.find((l) => l.id === k.id).status, 'revoked');
      assert.equal((await server.get('/v1/listings?limit=1')).status, 200, 'the other key still works');
    } finally {
      await server.close();
    }
  });

  it('exits 1 with a message for an unknown id or a missing store', async () => {
    const path = join(tempDir(), 'keys.db');
    const r = await keys(path, 'list');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no key store at/);
    issueKey(path, { name: 'x' });
    const commands = ['disable', 'enable', 'revoke'];
    const runs = await Promise.all(commands.map((cmd) => keys(path, cmd, 'key_doesnotexist0000')));
    for (const [i, cmd] of commands.entries()) {
      assert.equal(runs[i].code, 1, cmd);
      assert.match(runs[i].stderr, /no key with id "key_doesnotexist0000"/);
    }
  });

  it('exits 2 with a usage message for bad arguments', async () => {
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
    const [runs, help] = await Promise.all([
      Promise.all(cases.map(([args]) => keys(path, ...args))),
      keys(path, '--help'),
    ]);
    for (const [i, [args, message]] of cases.entries()) {
      const r = runs[i];
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, message, args.join(' '));
      assert.match(r.stderr, /Usage: npm run keys/, args.join(' '));
      assert.equal(r.stdout, '', args.join(' '));
    }
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: npm run keys/);
  });
});

describe('key store file', () => {
  it('is created readable by its owner only (0600), its new folder 0700', async () => {
    const dir = join(tempDir(), 'new-folder');
    const path = join(dir, 'keys.db');
    await keys(path, 'create', '--name', 'mode');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });
});

/** src/main.ts as npm start runs it (on the basic fixture), with a development key if the store at `keysPath` is empty. */
const start = (keysPath: string, env: Record<string, string> = {}) =>
  spawnService({ KEYS_PATH: keysPath, DEV_KEY: '1', LOG_REQUESTS: '0', ...env });

describe('npm start', () => {
  it('creates and prints one development key when the key store is empty, and only then', async () => {
    const path = join(tempDir(), 'keys.db');
    const first = await start(path);
    let key: string;
    try {
      // The banner follows the listening line once the key store was read: on a loaded machine, not at once.
      const m = await until(
        `a key on stderr: ${first.stderr()}`,
        () => /(nlr_live_[0-9A-Za-z]{46})/.exec(first.stderr()),
        15_000,
      );
      key = m[1];
      assert.match(first.stderr(), /curl -H "Authorization: Bearer nlr_live_/);
      assert.ok(!first.stdout().includes(key), 'the key is not in the JSON log');
      const r = await fetch(`${first.url}/v1/listings?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
      assert.equal(r.status, 200);
    } finally {
      await first.stop();
    }

    const second = await start(path);
    try {
      await sleep(200); // the development key's step comes after the listening line
      assert.ok(!/nlr_live_/.test(second.stderr()), 'no second key');
      assert.equal((await keys(path, 'list')).lines.length, 1);
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
    const s = await start(path, { TRUST_PROXY: '1' });
    try {
      await until('the warning', () => s.stdout().includes('the key store is empty'), 15_000);
      assert.ok(!/nlr_live_/.test(s.stderr() + s.stdout()), 'no key printed');
      assert.match(
        s.stdout(),
        /the key store is empty; issue a key with: npm run -s keys -- create --name NAME \(no development key is made behind a proxy/,
      );
      assert.equal((await keys(path, 'list')).lines.length, 0);
    } finally {
      await s.stop();
    }
  });
  it('makes no development key with DEV_KEY=0', async () => {
    const path = join(tempDir(), 'keys.db');
    const s = await start(path, { DEV_KEY: '0' });
    try {
      await sleep(200); // where a key would be printed
      assert.ok(!/nlr_live_/.test(s.stderr()));
      assert.equal((await keys(path, 'list')).lines.length, 0, 'the store exists and is empty');
    } finally {
      await s.stop();
    }
  });
});
