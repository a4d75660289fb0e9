// A file's BLAKE2b-512 digest, what a prehashed minisign signature signs: computed from a stream, never whole in memory.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { PublicKey } from './public-key.ts';
import { parseSignature, verifyDigest } from './signature.ts';

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
