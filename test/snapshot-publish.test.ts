// The snapshot command's publishing half (spawned like npm run snapshot): keygen, publish, verify, with the real
// minisign checking what publish signs and making keys publish signs with.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { parseLatest, parseTrustedComment } from '../src/minisign/index.ts';
import { damagedCopy, otherSqlite, truncatedCopy, wrongVersionCopy } from './support/bad-snapshots.ts';
import { tempDir } from './support/files.ts';
import { missing, type Ran, run, runScript } from './support/processes.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

const MINISIGN = '/usr/bin/minisign';
const snapshot = (...args: string[]) => runScript('src/cli/snapshot.ts', args);

function assertOk(r: Ran, what = '') {
  assert.equal(r.code, 0, `${what}: ${r.stderr}`);
}
/** A failure is exit 1 with one line naming the reason: no usage text, no stack trace. */
function assertFails(r: Ran, reason: RegExp) {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, reason);
}

/** An unencrypted key pair from our own keygen, in a folder of its own: its .key and .pub paths. */
async function ownKeys() {
  const prefix = join(tempDir(), 'publisher');
  assertOk(await snapshot('keygen', '--out', prefix, '--unencrypted'), 'keygen');
  return { key: `${prefix}.key`, pub: `${prefix}.pub` };
}

/** What `publish` left in `dir`: latest.json parsed, and every file name there. */
function published(dir: string) {
  return { latest: parseLatest(readFileSync(join(dir, 'latest.json'), 'utf8')), files: readdirSync(dir).sort() };
}

let good: string;
let id: string;
before(async () => {
  const built = await fixtureSnapshot();
  good = built.path;
  id = built.result.snapshotId!;
});

describe('snapshot publish', { concurrency: true }, () => {
  it('writes DIR/<id>.db (a copy), its signature, then latest.json naming them, and nothing else', async () => {
    const keys = await ownKeys();
    const dir = join(tempDir(), 'out', 'nested');
    const r = await snapshot('publish', good, '--key', keys.key, '--out', dir, '--valid-for', '7d');
    assertOk(r);
    assert.match(r.stdout, new RegExp(`^published ${id} \\(\\d+ bytes, copied\\) to ${dir}: .*expires 20`));
    const { latest, files } = published(dir);
    assert.deepEqual(files, ['latest.json', `${id}.db`, `${id}.db.minisig`]);
    assert.equal(latest.file, `${id}.db`);
    assert.equal(latest.signature, `${id}.db.minisig`);
    assert.equal(latest.size, statSync(good).size);
    assert.equal(latest.built_at, '2026-11-01T00:00:00.000Z');
    assert.ok(readFileSync(join(dir, latest.file)).equals(readFileSync(good)), 'the same bytes');
    assert.notEqual(statSync(join(dir, latest.file)).ino, statSync(good).ino, 'a copy, not a link to the build');
    const validMs = Date.parse(latest.expires_at!) - Date.parse(latest.published_at);
    assert.equal(validMs, 7 * 86_400_000);
    // The signature's trusted comment says the same as latest.json: the follower trusts only the signed one.
    const comment = readFileSync(join(dir, latest.signature), 'utf8').split('\n')[2];
    const fields = parseTrustedComment(comment.replace(/^trusted comment: /, ''));
    assert.equal(fields.snapshotId, id);
    assert.equal(fields.file, latest.file);
    assert.equal(fields.expiresAt?.getTime(), Math.floor(Date.parse(latest.expires_at!) / 1000) * 1000);
    // Written in order: the snapshot, its signature, then the manifest.
    const changed = (name: string) => statSync(join(dir, name)).ctimeMs;
    assert.ok(changed(latest.file) <= changed(latest.signature));
    assert.ok(changed(latest.signature) <= changed('latest.json'));
    const v = await snapshot('verify', join(dir, latest.file), '--public-key', keys.pub);
    assertOk(v);
    assert.match(v.stdout, /^[^\n]+: signed by key [0-9A-F]{16} \(expires 20[^)]+\); trusted comment: timestamp:\d+\t/);
  });

  it('publishes the same snapshot again (a new signature, the file kept) but never another build under its id', async () => {
    const keys = await ownKeys();
    const dir = tempDir();
    assertOk(await snapshot('publish', good, '--key', keys.key, '--out', dir));
    const first = statSync(join(dir, `${id}.db`)).ino;
    const again = await snapshot('publish', good, '--key', keys.key, '--out', dir, '--valid-for', '1h');
    assertOk(again);
    assert.match(again.stdout, /already published/);
    assert.equal(statSync(join(dir, `${id}.db`)).ino, first, 'the published file is not rewritten');
    assert.notEqual(published(dir).latest.expires_at, null);
    const other = await fixtureSnapshot(undefined, { builtAt: '2026-11-02T00:00:00.000Z' });
    assert.equal(other.result.snapshotId, id, 'the same source: the same id, another build time');
    const before = readFileSync(join(dir, 'latest.json'), 'utf8');
    assertFails(
      await snapshot('publish', other.path, '--key', keys.key, '--out', dir),
      new RegExp(`${id}\\.db holds another build of this snapshot, and a published file is never changed`),
    );
    assert.equal(readFileSync(join(dir, 'latest.json'), 'utf8'), before, 'latest.json untouched');
  });

  it('refuses a build older than the one latest.json names (followers would refuse the rollback)', async () => {
    const keys = await ownKeys();
    const dir = tempDir();
    const newer = await fixtureSnapshot(undefined, { builtAt: '2026-11-05T00:00:00.000Z' });
    assertOk(await snapshot('publish', newer.path, '--key', keys.key, '--out', dir));
    const before = readFileSync(join(dir, 'latest.json'), 'utf8');
    assertFails(
      await snapshot('publish', good, '--key', keys.key, '--out', dir),
      /latest\.json names snap_\w+ built 2026-11-05T00:00:00\.000Z, later than this snapshot .*: followers refuse an older build/,
    );
    assert.equal(readFileSync(join(dir, 'latest.json'), 'utf8'), before);
  });

  it('refuses a file that is not a valid snapshot, writing nothing', async () => {
    const keys = await ownKeys();
    const dir = tempDir();
    for (const [file, reason] of [
      [truncatedCopy(good, 8192), /truncated\.db: it is truncated/],
      [damagedCopy(good), /damaged\.db is not published: it fails quick_check: /],
      [
        wrongVersionCopy(good),
        /other-version\.db is not published: it fails schema version: version \d+; this server reads version/,
      ],
      [otherSqlite(), /not a snapshot|snapshot_meta/],
      [join(dir, 'missing.db'), /missing\.db/],
    ] as const)
      assertFails(await snapshot('publish', file, '--key', keys.key, '--out', dir), reason);
    assert.deepEqual(readdirSync(dir), []);
  });

  it('--keep N leaves the N newest publications, the current one always, and other files alone', async () => {
    const keys = await ownKeys();
    const dir = tempDir();
    const old = (name: string, daysAgo: number) => {
      const at = new Date(Date.now() - daysAgo * 86_400_000);
      for (const file of [`${name}.db`, `${name}.db.minisig`]) {
        writeFileSync(join(dir, file), 'an older publication');
        utimesSync(join(dir, file), at, at);
      }
    };
    old('snap_older', 2);
    old('snap_oldest', 3);
    writeFileSync(join(dir, 'notes.txt'), 'not a publication');
    const r = await snapshot('publish', good, '--key', keys.key, '--out', dir, '--keep', '2');
    assertOk(r);
    assert.match(r.stdout, /; pruned snap_oldest\.db; [\d.]+ s$/m);
    assert.deepEqual(published(dir).files, [
      'latest.json',
      'notes.txt',
      `${id}.db`,
      `${id}.db.minisig`,
      'snap_older.db',
      'snap_older.db.minisig',
    ]);
    assertOk(await snapshot('publish', good, '--key', keys.key, '--out', dir, '--keep', '1'));
    assert.deepEqual(published(dir).files, ['latest.json', 'notes.txt', `${id}.db`, `${id}.db.minisig`]);
  });

  it('refuses bad arguments with exit 2 and the usage', async () => {
    const keys = await ownKeys();
    const dir = tempDir();
    const cases = [
      ['publish', good, '--out', dir],
      ['publish', good, '--key', keys.key],
      ['publish', '--key', keys.key, '--out', dir],
      ['publish', good, '--key', keys.key, '--out', dir, '--keep', '0'],
      ['publish', good, '--key', keys.key, '--out', dir, '--valid-for', '7'],
      ['publish', good, '--key', keys.key, '--out', dir, '--valid-for', '4000d'],
      ['publish', good, '--key', keys.key, '--out', dir, '--json'],
      ['publish', good, '--key', keys.key, '--out', dir, '--password-file', join(dir, 'none')],
      ['keygen', '--out', join(dir, 'k')],
      ['keygen', '--out', join(dir, 'k'), '--unencrypted', '--password-file', keys.key],
      ['keygen', '--unencrypted'],
      ['keygen', '--out', join(dir, 'k'), '--password-file', '/dev/zero'], // read no further than a password's length
      ['verify', good],
      ['inspect', good, '--key', keys.key],
    ];
    const runs = await Promise.all(cases.map((args) => snapshot(...args)));
    for (const [i, args] of cases.entries()) {
      assert.equal(runs[i].code, 2, `${args.join(' ')}: ${runs[i].stderr}`);
      assert.match(runs[i].stderr, /^snapshot: [^\n]+\n\nUsage: npm run -s snapshot/, args.join(' '));
    }
    assert.deepEqual(readdirSync(dir), []);
  });
});

describe('snapshot verify', { concurrency: true }, () => {
  let keys: { key: string; pub: string };
  let dir: string;
  let file: string;
  before(async () => {
    keys = await ownKeys();
    dir = tempDir();
    assertOk(await snapshot('publish', good, '--key', keys.key, '--out', dir));
    file = join(dir, `${id}.db`);
  });
  const copyWith = (name: string, edit: (bytes: Buffer) => Buffer) => {
    const path = join(tempDir(), name);
    writeFileSync(path, edit(Buffer.from(readFileSync(file))));
    return path;
  };

  it('refuses a file changed after signing', async () => {
    const changed = copyWith('changed.db', (b) => {
      b[b.length >> 1] ^= 1;
      return b;
    });
    const r = await snapshot('verify', changed, '--public-key', keys.pub, '--signature', `${file}.minisig`);
    assertFails(r, /^snapshot: the file is not the one key [0-9A-F]{16} signed \(changed or truncated after signing/);
  });

  it('refuses a truncated file', async () => {
    const cut = copyWith('cut.db', (b) => b.subarray(0, b.length - 4096));
    assertFails(
      await snapshot('verify', cut, '--public-key', keys.pub, '--signature', `${file}.minisig`),
      /is not the one key/,
    );
  });

  it("refuses another key's signature, naming both key ids", async () => {
    const other = await ownKeys();
    const r = await snapshot('verify', file, '--public-key', other.pub);
    assertFails(r, /^snapshot: the signature was made by key [0-9A-F]{16}, not by the trusted key [0-9A-F]{16}$/m);
  });

  it('refuses a truncated signature', async () => {
    const signature = join(tempDir(), 'cut.minisig');
    writeFileSync(signature, readFileSync(`${file}.minisig`, 'utf8').slice(0, 150));
    const r = await snapshot('verify', file, '--public-key', keys.pub, '--signature', signature);
    assertFails(r, /^snapshot: the signature file is not minisign's/);
  });

  it('takes the bare key line as --public-key', async () => {
    const line = readFileSync(keys.pub, 'utf8').split('\n')[1];
    assertOk(await snapshot('verify', file, '--public-key', line));
  });
});

describe('with the real minisign', { skip: missing(MINISIGN, 'minisign') }, () => {
  /** `minisign -G` keys in a folder of their own: unencrypted (-W) without a password. */
  async function minisignKeys(password?: string) {
    const prefix = join(tempDir(), 'minisign');
    const args = ['-G', '-p', `${prefix}.pub`, '-s', `${prefix}.key`];
    const input = password === undefined ? undefined : `${password}\n${password}\n`;
    assertOk(await run(MINISIGN, password === undefined ? [...args, '-W'] : args, { input }), 'minisign -G');
    return { key: `${prefix}.key`, pub: `${prefix}.pub` };
  }
  const minisignVerifies = (pub: string, dir: string) =>
    run(MINISIGN, ['-V', '-H', '-p', pub, '-m', join(dir, `${id}.db`)]);

  it('verifies what publish signs with a key from minisign -G -W', async () => {
    const keys = await minisignKeys();
    const dir = tempDir();
    assertOk(await snapshot('publish', good, '--key', keys.key, '--out', dir, '--valid-for', '30d'));
    const r = await minisignVerifies(keys.pub, dir);
    assertOk(r, 'minisign -V');
    assert.match(
      r.stdout,
      new RegExp(`Trusted comment: timestamp:\\d+\tfile:${id}\\.db\tsnapshot:${id}\texpires:\\d+`),
    );
  });

  it("publishes with minisign's password-protected key given its password file, and refuses a wrong one", async () => {
    const password = 'correct horse battery staple';
    const keys = await minisignKeys(password);
    const dir = tempDir();
    const passwordFile = join(tempDir(), 'password');
    writeFileSync(passwordFile, 'wrong horse\n');
    const wrong = await snapshot('publish', good, '--key', keys.key, '--out', dir, '--password-file', passwordFile);
    assertFails(wrong, /^snapshot: wrong password for the secret key\n$/);
    assertFails(await snapshot('publish', good, '--key', keys.key, '--out', dir), /is encrypted: give its password/);
    assert.deepEqual(readdirSync(dir), [], 'nothing published');
    writeFileSync(passwordFile, `${password}\n`);
    assertOk(await snapshot('publish', good, '--key', keys.key, '--out', dir, '--password-file', passwordFile));
    assertOk(await minisignVerifies(keys.pub, dir), 'minisign -V');
  });

  it("keygen's password-protected key signs with minisign -S, and verify accepts minisign's signature", async () => {
    const prefix = join(tempDir(), 'ours');
    const passwordFile = join(tempDir(), 'password');
    writeFileSync(passwordFile, 'our pass phrase\n');
    const made = await snapshot('keygen', '--out', prefix, '--password-file', passwordFile);
    assertOk(made);
    assert.doesNotMatch(made.stdout + made.stderr, /our pass phrase/);
    assert.equal(statSync(`${prefix}.key`).mode & 0o777, 0o600);
    const file = join(tempDir(), `${id}.db`);
    writeFileSync(file, readFileSync(good));
    assertOk(
      await run(MINISIGN, ['-S', '-s', `${prefix}.key`, '-m', file], { input: 'our pass phrase\n' }),
      'minisign -S',
    );
    const r = await snapshot('verify', file, '--public-key', `${prefix}.pub`);
    assertOk(r);
    assert.match(r.stdout, /\(no expiry\); trusted comment: timestamp:\d+\tfile:snap_\w+\.db\thashed\n$/);
    assertFails(await snapshot('keygen', '--out', prefix, '--unencrypted'), /publisher|ours\.key already exists/);
  });
});
