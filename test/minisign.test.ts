// src/minisign/: keys, signatures and their refusals, the trusted comment, latest.json (no minisign binary needed).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  digestFile,
  formatLatest,
  formatPublicKey,
  formatSecretKey,
  formatTrustedComment,
  generateSecretKey,
  INTERACTIVE,
  type Latest,
  parseLatest,
  parsePublicKey,
  parseSecretKey,
  parseSignature,
  parseTrustedComment,
  type RefusalReason,
  type SecretKey,
  signDigest,
  verifyDigest,
  verifyFile,
  writeLatest,
} from '../src/minisign/index.ts';
import { scryptParams } from '../src/minisign/secret-key.ts';
import { tempDir } from './support/files.ts';

const publicOf = (key: SecretKey) => parsePublicKey(formatPublicKey(key.keyNumber, key.publicKey));
const COMMENT = formatTrustedComment({
  timestamp: new Date('2026-11-01T00:00:00Z'),
  file: 'snap_x.db',
  snapshotId: 'snap_x',
  expiresAt: new Date('2026-11-08T00:00:00Z'),
});

/** A 3 MiB file (several 1 MiB reads) and its signature by `key`. */
async function signedFile(key: SecretKey) {
  const path = join(tempDir(), 'snap_x.db');
  writeFileSync(path, randomBytes(3 * 1024 * 1024 + 17));
  const { digest, size } = await digestFile(path);
  return { path, size, signature: signDigest(digest, key, COMMENT, 'signature from snapshot publish') };
}

async function refused(promise: Promise<unknown> | (() => unknown), reason: RefusalReason) {
  await assert.rejects(
    async () => (typeof promise === 'function' ? promise() : promise),
    (e: Error & { reason?: string }) => {
      assert.equal(e.name, 'SignatureRefused');
      assert.equal(e.reason, reason, e.message);
      assert.match(e.message, /^[^\n]+$/);
      return true;
    },
  );
}

/** The signature text with line `n` (0-based) replaced by what `edit` makes of it. */
const editLine = (text: string, n: number, edit: (line: string) => string) =>
  text
    .split('\n')
    .map((line, i) => (i === n ? edit(line) : line))
    .join('\n');

describe('minisign signatures', { concurrency: true }, () => {
  const key = generateSecretKey();

  it('verifies a file it signed, streamed, and returns the trusted comment', async () => {
    const { path, size, signature } = await signedFile(key);
    assert.equal(size, statSync(path).size);
    assert.equal(await verifyFile(path, signature, publicOf(key)), COMMENT);
    const parsed = parseSignature(signature);
    assert.equal(parsed.algorithm, 'ED');
    assert.equal(parsed.keyId, key.keyId);
  });

  it('refuses a file changed after signing (one byte in the middle)', async () => {
    const { path, signature } = await signedFile(key);
    const bytes = readFileSync(path);
    bytes[1_500_000] ^= 1;
    writeFileSync(path, bytes);
    await refused(verifyFile(path, signature, publicOf(key)), 'bad_signature');
  });

  it('refuses a truncated file', async () => {
    const { path, signature } = await signedFile(key);
    writeFileSync(path, readFileSync(path).subarray(0, 1024 * 1024));
    await refused(verifyFile(path, signature, publicOf(key)), 'bad_signature');
  });

  it('refuses a signature by another key, naming both key ids', async () => {
    const { path, signature } = await signedFile(generateSecretKey());
    await refused(verifyFile(path, signature, publicOf(key)), 'wrong_key');
  });

  it("refuses another key's signature that claims the trusted key's id", async () => {
    const other = generateSecretKey();
    const forger = { ...other, keyNumber: key.keyNumber };
    const { path, signature } = await signedFile(forger);
    await refused(verifyFile(path, signature, publicOf(key)), 'bad_signature');
  });

  it('refuses a trusted comment changed after signing (a later expiry)', async () => {
    const { path, signature } = await signedFile(key);
    const later = editLine(signature, 2, (line) => line.replace(/expires:\d+/, 'expires:9999999999'));
    assert.notEqual(later, signature);
    await refused(verifyFile(path, later, publicOf(key)), 'bad_trusted_comment');
  });

  it('refuses truncated, reordered and undecodable signature files as malformed', async () => {
    const { signature } = await signedFile(key);
    const cut = signature.slice(0, signature.length - 30);
    await refused(() => parseSignature(cut), 'malformed');
    await refused(() => parseSignature(signature.split('\n').slice(0, 3).join('\n')), 'malformed');
    await refused(() => parseSignature(editLine(signature, 1, (l) => `${l.slice(0, 20)}*${l.slice(21)}`)), 'malformed');
    await refused(() => parseSignature(editLine(signature, 0, () => 'comment: x')), 'malformed');
    await refused(() => parseSignature(editLine(signature, 2, (l) => `${l}\u0007`)), 'malformed');
    await refused(() => parseSignature(''), 'malformed');
  });

  it('refuses a legacy signature (Ed, not prehashed) with its own reason', async () => {
    const { signature } = await signedFile(key);
    const legacy = editLine(signature, 1, (line) => {
      const bytes = Buffer.from(line, 'base64');
      bytes.write('Ed', 0, 'latin1');
      return bytes.toString('base64');
    });
    await refused(() => parseSignature(legacy), 'legacy');
  });

  it('verifies a digest hashed chunk by chunk as a download would', async () => {
    const { path, signature } = await signedFile(key);
    const { createFileHasher } = await import('../src/minisign/index.ts');
    const hasher = createFileHasher();
    const bytes = readFileSync(path);
    for (let at = 0; at < bytes.length; at += 65_537) hasher.update(bytes.subarray(at, at + 65_537));
    assert.equal(verifyDigest(hasher.digest(), parseSignature(signature), publicOf(key)), COMMENT);
  });
});

describe('minisign public keys', () => {
  const key = generateSecretKey();
  const file = formatPublicKey(key.keyNumber, key.publicKey);

  it('reads a .pub file and its bare key line alike', () => {
    const line = file.split('\n')[1];
    assert.match(file, new RegExp(`^untrusted comment: minisign public key ${key.keyId}\n`));
    assert.match(line, /^RW/);
    assert.equal(parsePublicKey(file).keyId, key.keyId);
    assert.equal(parsePublicKey(`  ${line}\r\n`).keyId, key.keyId);
  });

  it('refuses anything else as malformed', async () => {
    const line = file.split('\n')[1];
    for (const bad of ['', 'RWQ', `${line}x`, `${line.slice(0, -4)}!!!!`, `comment\n${line}`, `${file}${line}\n`])
      await refused(() => parsePublicKey(bad), 'malformed');
    const other = Buffer.from(line, 'base64');
    other.write('ED', 0, 'latin1');
    await refused(() => parsePublicKey(other.toString('base64')), 'malformed');
  });
});

describe('minisign secret keys', { concurrency: true }, () => {
  it('reads back an unencrypted key', async () => {
    const key = generateSecretKey();
    const text = await formatSecretKey(key, null);
    const read = await parseSecretKey(text);
    assert.equal(read.keyId, key.keyId);
    await assert.rejects(parseSecretKey(text, 'pw'), /not encrypted/);
  });

  it('reads back an encrypted key with its password, and refuses a wrong or missing one', async () => {
    const key = generateSecretKey();
    const text = await formatSecretKey(key, 'correct horse', INTERACTIVE);
    assert.equal((await parseSecretKey(text, 'correct horse')).keyId, key.keyId);
    await assert.rejects(parseSecretKey(text, 'wrong horse'), /^SecretKeyError: wrong password for the secret key$/);
    await assert.rejects(parseSecretKey(text), /is encrypted: give its password/);
  });

  it('picks scrypt parameters as libsodium does', () => {
    assert.deepEqual(scryptParams(33554432n, 1073741824n), { N: 2 ** 20, r: 8, p: 1 });
    assert.deepEqual(scryptParams(524288n, 16777216n), { N: 2 ** 14, r: 8, p: 1 });
    assert.deepEqual(scryptParams(1000n, 1n << 40n), { N: 2 ** 10, r: 8, p: 1 });
  });

  it('refuses a file that is not a secret key', async () => {
    await assert.rejects(parseSecretKey('untrusted comment: x\nRWQ=\n'), /not a minisign secret key/);
    const pub = generateSecretKey();
    await assert.rejects(parseSecretKey(formatPublicKey(pub.keyNumber, pub.publicKey)), /not a minisign secret key/);
  });
});

describe('the trusted comment', () => {
  it("reads publish's fields back", () => {
    const fields = parseTrustedComment(COMMENT);
    assert.equal(fields.file, 'snap_x.db');
    assert.equal(fields.snapshotId, 'snap_x');
    assert.equal(fields.timestamp?.toISOString(), '2026-11-01T00:00:00.000Z');
    assert.equal(fields.expiresAt?.toISOString(), '2026-11-08T00:00:00.000Z');
  });

  it("reads minisign's default comment: no expiry, no snapshot id", () => {
    const fields = parseTrustedComment('timestamp:1764000000\tfile:snap_x.db\thashed');
    assert.equal(fields.expiresAt, undefined);
    assert.equal(fields.snapshotId, undefined);
    assert.equal(fields.file, 'snap_x.db');
    assert.deepEqual(parseTrustedComment('anything the signer wrote').fields, {});
  });

  it('refuses a field given twice or a time that is not Unix seconds', async () => {
    await refused(() => parseTrustedComment('expires:1\texpires:9999999999'), 'bad_trusted_comment');
    await refused(() => parseTrustedComment('timestamp:1\texpires:soon'), 'bad_trusted_comment');
    await refused(() => parseTrustedComment('expires:-5'), 'bad_trusted_comment');
  });
});

const LATEST: Latest = {
  format: 1,
  snapshot_id: 'snap_0123456789abcdef01234567',
  schema_version: 14,
  built_at: '2026-11-01T10:00:00.000Z',
  published_at: '2026-11-01T11:00:00.000Z',
  file: 'snap_0123456789abcdef01234567.db',
  signature: 'snap_0123456789abcdef01234567.db.minisig',
  size: 1_234_567_890,
  expires_at: null,
};

describe('latest.json', () => {
  const withField = (name: string, value: unknown) => JSON.stringify({ ...LATEST, [name]: value });

  it('reads back what it writes, ignoring fields it does not know', () => {
    assert.deepEqual(parseLatest(formatLatest(LATEST)), LATEST);
    assert.deepEqual(parseLatest(withField('compressed', 'x.zst')), LATEST);
    const { expires_at: _, ...noExpiry } = LATEST;
    assert.deepEqual(parseLatest(JSON.stringify(noExpiry)), LATEST);
    const expiring = { ...LATEST, expires_at: '2026-11-08T11:00:00.000Z' };
    assert.deepEqual(parseLatest(JSON.stringify(expiring)), expiring);
  });

  it('refuses a file or signature outside its folder', () => {
    const outside = [
      '../snap.db',
      'a/snap.db',
      '/snap.db',
      '..',
      '.hidden',
      'x..db',
      'snap%2f..%2fx.db',
      'https://evil.example/snap.db',
      'snap.db\n',
      'snap\\x.db',
      '',
    ];
    for (const name of ['file', 'signature'])
      for (const bad of outside)
        assert.throws(
          () => parseLatest(withField(name, bad)),
          new RegExp(`^LatestError: latest.json's ${name} must be a plain file name`),
          `${name}: ${bad}`,
        );
  });

  it('refuses a size that is not a positive safe integer, and wrong types or format', () => {
    for (const size of [0, -1, 1.5, 2 ** 53, '100', null])
      assert.throws(() => parseLatest(withField('size', size)), /latest.json's size must be/, String(size));
    assert.throws(() => parseLatest(withField('format', 2)), /format must be 1/);
    assert.throws(() => parseLatest(withField('built_at', 'yesterday')), /built_at must be an ISO 8601 time/);
    assert.throws(() => parseLatest(withField('expires_at', 1764000000)), /expires_at must be/);
    assert.throws(() => parseLatest(withField('snapshot_id', '../x')), /snapshot_id must be/);
    const { file: _, ...noFile } = LATEST;
    assert.throws(() => parseLatest(JSON.stringify(noFile)), /latest.json's file must be .* \(got nothing\)/);
    assert.throws(() => parseLatest('{"format":1'), /^LatestError: latest.json is not JSON/);
    assert.throws(() => parseLatest('[1]'), /not a JSON object/);
  });

  it('is written to a temporary file and renamed into place: a reader holding the old one keeps it whole', () => {
    const dir = tempDir();
    writeLatest(dir, LATEST);
    const path = join(dir, 'latest.json');
    const before = statSync(path).ino;
    const held = openSync(path, 'r');
    writeLatest(dir, { ...LATEST, snapshot_id: 'snap_next', size: 5 });
    assert.notEqual(statSync(path).ino, before, 'a new file (renamed over), not the old one rewritten');
    const old = Buffer.alloc(4096);
    const n = readSync(held, old, 0, old.length, 0);
    closeSync(held);
    assert.deepEqual(parseLatest(old.subarray(0, n).toString()), LATEST);
    assert.equal(parseLatest(readFileSync(path, 'utf8')).snapshot_id, 'snap_next');
    assert.deepEqual(readdirSync(dir), ['latest.json'], 'no temporary file left');
  });
});
