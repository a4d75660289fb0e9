// src/minisign/ against the real minisign (Debian package minisign), both ways: keys, signatures, trusted comments.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  digestFile,
  formatPublicKey,
  formatSecretKey,
  formatTrustedComment,
  generateSecretKey,
  INTERACTIVE,
  parsePublicKey,
  parseSecretKey,
  parseSignature,
  parseTrustedComment,
  signDigest,
  verifyFile,
} from '../src/minisign/index.ts';
import { tempDir } from './support/files.ts';
import { missing, run } from './support/processes.ts';

const MINISIGN = '/usr/bin/minisign';

/** A folder with a 2 MiB file to sign. */
function folder() {
  const dir = tempDir();
  const file = join(dir, 'snap_x.db');
  writeFileSync(file, randomBytes(2 * 1024 * 1024 + 3));
  return { dir, file };
}

/**
 * `minisign -G -W` in `dir` (unencrypted). A password-protected key costs seconds and 1 GiB of scrypt per use, so
 * test/snapshot-publish.test.ts tests one once, through publish.
 */
async function minisignKeys(dir: string) {
  const r = await run(MINISIGN, ['-G', '-W', '-p', join(dir, 'k.pub'), '-s', join(dir, 'k.key')]);
  assert.equal(r.code, 0, r.stderr);
  return { pub: readFileSync(join(dir, 'k.pub'), 'utf8'), key: readFileSync(join(dir, 'k.key'), 'utf8') };
}

/** Signs `file` with `key` as publish does, writing FILE.minisig. */
async function signAsPublish(file: string, key: Awaited<ReturnType<typeof parseSecretKey>>) {
  const { digest } = await digestFile(file);
  const comment = formatTrustedComment({
    timestamp: new Date(),
    file: 'snap_x.db',
    snapshotId: 'snap_x',
    expiresAt: new Date(Date.now() + 7 * 86_400_000),
  });
  writeFileSync(`${file}.minisig`, signDigest(digest, key, comment, 'signature from snapshot publish'));
  return comment;
}

const minisignVerifies = (pub: string, file: string) => run(MINISIGN, ['-V', '-H', '-p', pub, '-m', file]);

describe('interoperating with the real minisign', { skip: missing(MINISIGN, 'minisign'), concurrency: true }, () => {
  it('signs with a key from minisign -G -W, and minisign -V -H verifies it (trusted comment included)', async () => {
    const { dir, file } = folder();
    const keys = await minisignKeys(dir);
    const key = await parseSecretKey(keys.key);
    assert.equal(key.keyId, parsePublicKey(keys.pub).keyId);
    const comment = await signAsPublish(file, key);
    const r = await minisignVerifies(join(dir, 'k.pub'), file);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Signature and comment signature verified/);
    assert.ok(r.stdout.includes(`Trusted comment: ${comment}`), r.stdout);
    writeFileSync(file, 'changed');
    assert.equal((await minisignVerifies(join(dir, 'k.pub'), file)).code, 1, 'minisign refuses a changed file too');
  });

  it('writes keys minisign -S signs with: encrypted (its checksum checked) and unencrypted', async () => {
    const { dir, file } = folder();
    const key = generateSecretKey();
    writeFileSync(join(dir, 'k.pub'), formatPublicKey(key.keyNumber, key.publicKey));
    writeFileSync(join(dir, 'e.key'), await formatSecretKey(key, 'pw 1', INTERACTIVE));
    writeFileSync(join(dir, 'u.key'), await formatSecretKey(key, null));
    const encrypted = await run(MINISIGN, ['-S', '-s', join(dir, 'e.key'), '-m', file, '-x', `${file}.e`], {
      input: 'pw 1\n',
    });
    assert.equal(encrypted.code, 0, encrypted.stdout + encrypted.stderr);
    const wrong = await run(MINISIGN, ['-S', '-s', join(dir, 'e.key'), '-m', file, '-x', `${file}.w`], {
      input: 'pw 2\n',
    });
    assert.match(wrong.stderr, /Wrong password for that key/);
    const plain = await run(MINISIGN, ['-S', '-W', '-s', join(dir, 'u.key'), '-m', file, '-x', `${file}.u`]);
    assert.equal(plain.code, 0, plain.stderr);
    for (const sig of [`${file}.e`, `${file}.u`])
      assert.ok(
        await verifyFile(file, readFileSync(sig, 'utf8'), parsePublicKey(readFileSync(join(dir, 'k.pub'), 'utf8'))),
      );
  });

  it('accepts what minisign -S signs: its default trusted comment carries no expiry', async () => {
    const { dir, file } = folder();
    const keys = await minisignKeys(dir);
    const r = await run(MINISIGN, ['-S', '-W', '-s', join(dir, 'k.key'), '-m', file]);
    assert.equal(r.code, 0, r.stderr);
    const comment = await verifyFile(file, readFileSync(`${file}.minisig`, 'utf8'), parsePublicKey(keys.pub));
    const fields = parseTrustedComment(comment);
    assert.equal(fields.file, 'snap_x.db');
    assert.equal(fields.expiresAt, undefined);
    assert.ok(fields.timestamp);
    const custom = await run(MINISIGN, [
      '-S',
      '-W',
      '-s',
      join(dir, 'k.key'),
      '-m',
      file,
      '-x',
      `${file}.t`,
      '-t',
      'expires:1\tnote:x',
    ]);
    assert.equal(custom.code, 0, custom.stderr);
    const signed = await verifyFile(file, readFileSync(`${file}.t`, 'utf8'), parsePublicKey(keys.pub.split('\n')[1]));
    assert.equal(parseTrustedComment(signed).expiresAt?.getTime(), 1000);
  });

  it('refuses what minisign -S -l signs (legacy), and a file minisign signed then changed', async () => {
    const { dir, file } = folder();
    const keys = await minisignKeys(dir);
    const legacy = await run(MINISIGN, ['-S', '-l', '-W', '-s', join(dir, 'k.key'), '-m', file, '-x', `${file}.l`]);
    assert.equal(legacy.code, 0, legacy.stderr);
    assert.throws(() => parseSignature(readFileSync(`${file}.l`, 'utf8')), { reason: 'legacy' });
    assert.equal((await run(MINISIGN, ['-S', '-W', '-s', join(dir, 'k.key'), '-m', file])).code, 0);
    writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from('x')]));
    await assert.rejects(verifyFile(file, readFileSync(`${file}.minisig`, 'utf8'), parsePublicKey(keys.pub)), {
      reason: 'bad_signature',
    });
  });
});
