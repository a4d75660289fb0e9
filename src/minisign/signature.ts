// A minisign signature (.minisig): parsed, written, made over a file's BLAKE2b-512 digest (streamed, never the whole
// file in memory) and checked against a key.
import { createHash, type Hash, type KeyObject, sign, verify } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  decodeBase64,
  isPrintable,
  keyIdOf,
  linesOf,
  SignatureRefused,
  TRUSTED_PREFIX,
  UNTRUSTED_PREFIX,
} from './encoding.ts';
import type { PublicKey } from './public-key.ts';

/** What a .minisig file holds. */
export interface Signature {
  /** 'ED': Ed25519 over the file's BLAKE2b-512 digest (minisign's default); 'Ed': legacy, over the whole file. */
  readonly algorithm: 'ED' | 'Ed';
  readonly keyId: string;
  readonly keyNumber: Buffer;
  /** The Ed25519 signature of the digest (64 bytes). */
  readonly signature: Buffer;
  readonly untrustedComment: string;
  /** Signed together with the signature by the global signature: what the publisher vouches for beside the file. */
  readonly trustedComment: string;
  readonly globalSignature: Buffer;
}

const SIGNATURE_BYTES = 2 + 8 + 64;
/** minisign's limit on the trusted comment line (TRUSTEDCOMMENTMAXBYTES less its prefix and line end). */
export const TRUSTED_COMMENT_MAX_BYTES = 8192 - TRUSTED_PREFIX.length - 2;

const malformed = (what: string) => new SignatureRefused('malformed', `the signature file is not minisign's: ${what}`);

/** The signature in a .minisig file's text; throws SignatureRefused('malformed' or 'legacy') with one sentence. */
export function parseSignature(text: string): Signature {
  const lines = linesOf(text);
  while (lines.length > 4 && lines.at(-1) === '') lines.pop();
  if (lines.length !== 4) throw malformed(`it has ${lines.length} lines, not 4`);
  const [untrusted, sigLine, trusted, globalLine] = lines;
  if (!untrusted.startsWith(UNTRUSTED_PREFIX)) throw malformed(`its first line does not start "${UNTRUSTED_PREFIX}"`);
  if (!trusted.startsWith(TRUSTED_PREFIX)) throw malformed(`its third line does not start "${TRUSTED_PREFIX}"`);
  const trustedComment = trusted.slice(TRUSTED_PREFIX.length);
  if (Buffer.byteLength(trustedComment) > TRUSTED_COMMENT_MAX_BYTES) throw malformed('its trusted comment is too long');
  if (!isPrintable(trustedComment)) throw malformed('its trusted comment holds control characters');
  const body = decodeBase64(sigLine.trim(), SIGNATURE_BYTES);
  const globalSignature = decodeBase64(globalLine.trim(), 64);
  if (body === null || globalSignature === null) throw malformed('a signature line is not base64 of the right length');
  const algorithm = body.toString('latin1', 0, 2);
  if (algorithm === 'Ed')
    throw new SignatureRefused(
      'legacy',
      'the signature is in the legacy format (minisign -l), which cannot be checked without the whole file in memory: sign without -l',
    );
  if (algorithm !== 'ED') throw malformed(`its algorithm ${JSON.stringify(algorithm)} is not "ED"`);
  const keyNumber = body.subarray(2, 10);
  return {
    algorithm,
    keyId: keyIdOf(keyNumber),
    keyNumber,
    signature: body.subarray(10),
    untrustedComment: untrusted.slice(UNTRUSTED_PREFIX.length),
    trustedComment,
    globalSignature,
  };
}

/** The message the global signature covers: the file's signature followed by the trusted comment's bytes. */
const globalMessage = (signature: Buffer, trustedComment: string) =>
  Buffer.concat([signature, Buffer.from(trustedComment, 'utf8')]);

/**
 * Checks `signature` of a file whose BLAKE2b-512 digest is `digest` against `publicKey`, and returns the trusted
 * comment it vouches for. Throws SignatureRefused: 'wrong_key' (another key signed it), 'bad_signature' (the file is
 * not the one signed), 'bad_trusted_comment' (the comment was changed after signing).
 */
export function verifyDigest(digest: Buffer, signature: Signature, publicKey: PublicKey): string {
  if (!signature.keyNumber.equals(publicKey.keyNumber))
    throw new SignatureRefused(
      'wrong_key',
      `the signature was made by key ${signature.keyId}, not by the trusted key ${publicKey.keyId}`,
    );
  if (!verify(null, digest, publicKey.key, signature.signature))
    throw new SignatureRefused(
      'bad_signature',
      `the file is not the one key ${publicKey.keyId} signed (changed or truncated after signing, or a forged signature)`,
    );
  const message = globalMessage(signature.signature, signature.trustedComment);
  if (!verify(null, message, publicKey.key, signature.globalSignature))
    throw new SignatureRefused(
      'bad_trusted_comment',
      `the signature's trusted comment is not the one key ${publicKey.keyId} signed (changed after signing)`,
    );
  return signature.trustedComment;
}

/** A signer: the secret key and its key number (see secret-key.ts). */
export interface Signer {
  readonly keyNumber: Buffer;
  readonly privateKey: KeyObject;
}

/**
 * A .minisig file's text for a file whose BLAKE2b-512 digest is `digest`, as `minisign -S` writes it (prehashed).
 * The trusted comment must be one printable line within minisign's limit.
 */
export function signDigest(digest: Buffer, signer: Signer, trustedComment: string, untrustedComment: string): string {
  if (!isPrintable(trustedComment) || Buffer.byteLength(trustedComment) > TRUSTED_COMMENT_MAX_BYTES)
    throw new Error('a trusted comment is one printable line of at most 8 KiB');
  if (/[\r\n]/.test(untrustedComment)) throw new Error('an untrusted comment is one line');
  const signature = sign(null, digest, signer.privateKey);
  const body = Buffer.concat([Buffer.from('ED', 'latin1'), signer.keyNumber, signature]);
  const globalSignature = sign(null, globalMessage(signature, trustedComment), signer.privateKey);
  return [
    `${UNTRUSTED_PREFIX}${untrustedComment}`,
    body.toString('base64'),
    `${TRUSTED_PREFIX}${trustedComment}`,
    `${globalSignature.toString('base64')}\n`,
  ].join('\n');
}

/** A hasher to feed a file's bytes as they arrive (a download's chunks): `update(chunk)` for each, then `digest()` once. */
export function createFileHasher(): Hash {
  return createHash('blake2b512');
}

/** Reads of 1 MiB: a 1.2 GiB snapshot hashes with about 1,200 reads and a constant 1 MiB buffer. */
const READ_BYTES = 1 << 20;

/** The BLAKE2b-512 digest of the file at `path` and the number of bytes read, streamed. */
export async function digestFile(path: string): Promise<{ digest: Buffer; size: number }> {
  const hasher = createFileHasher();
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: READ_BYTES }) as AsyncIterable<Buffer>) {
    hasher.update(chunk);
    size += chunk.length;
  }
  return { digest: hasher.digest(), size };
}

/**
 * Checks the file at `path` against the .minisig text `signatureText` and `publicKey`, streaming the file; returns
 * the trusted comment. Throws SignatureRefused for a signature that proves nothing, or the read's error.
 */
export async function verifyFile(path: string, signatureText: string, publicKey: PublicKey): Promise<string> {
  const signature = parseSignature(signatureText);
  const { digest } = await digestFile(path);
  return verifyDigest(digest, signature, publicKey);
}
