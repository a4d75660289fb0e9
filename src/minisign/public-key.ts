// A minisign public key: parsed from a .pub file or its bare base64 line, and written as minisign writes one.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { decodeBase64, keyIdOf, linesOf, SignatureRefused, UNTRUSTED_PREFIX } from './encoding.ts';

/** A publisher's Ed25519 public key and the key id that signatures made with its secret key carry. */
export interface PublicKey {
  /** 16 upper-case hex digits, as minisign prints it ("minisign public key 1A2B…"). */
  readonly keyId: string;
  /** The 8 raw key number bytes, as they appear in a signature. */
  readonly keyNumber: Buffer;
  readonly key: KeyObject;
  /** The key line: "Ed", the key number and the 32 key bytes in base64 (what `minisign -P` takes). */
  readonly line: string;
}

const PUBLIC_KEY_BYTES = 2 + 8 + 32;

/** An Ed25519 public key object from its 32 raw bytes. */
export function ed25519PublicKey(raw: Buffer): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/**
 * The public key in `text`: a minisign .pub file ("untrusted comment: …" then the key line) or the bare key line.
 * Throws SignatureRefused('malformed') with one sentence for anything else.
 */
export function parsePublicKey(text: string): PublicKey {
  const lines = linesOf(text.trim()).filter((line) => line.trim() !== '');
  let line: string | undefined;
  if (lines.length === 1) line = lines[0].trim();
  else if (lines.length === 2 && lines[0].startsWith(UNTRUSTED_PREFIX)) line = lines[1].trim();
  const bytes = line === undefined ? null : decodeBase64(line, PUBLIC_KEY_BYTES);
  if (line === undefined || bytes === null)
    throw new SignatureRefused(
      'malformed',
      'the public key is not a minisign public key (a .pub file, or its base64 line starting "RW")',
    );
  if (bytes.toString('latin1', 0, 2) !== 'Ed')
    throw new SignatureRefused(
      'malformed',
      'the public key is not an Ed25519 minisign key (its algorithm is not "Ed")',
    );
  const keyNumber = bytes.subarray(2, 10);
  return { keyId: keyIdOf(keyNumber), keyNumber, key: ed25519PublicKey(bytes.subarray(10)), line };
}

/** The key line of an Ed25519 public key with this key number. */
export function publicKeyLine(keyNumber: Buffer, key: KeyObject): string {
  const raw = Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url');
  return Buffer.concat([Buffer.from('Ed', 'latin1'), keyNumber, raw]).toString('base64');
}

/** A .pub file's text, as `minisign -G` writes it. */
export function formatPublicKey(keyNumber: Buffer, key: KeyObject): string {
  return `${UNTRUSTED_PREFIX}minisign public key ${keyIdOf(keyNumber)}\n${publicKeyLine(keyNumber, key)}\n`;
}

/** A bare key line: "RW" and the rest of 42 bytes in base64 (a path never looks like one: it has no 56 such characters). */
const KEY_LINE = /^RW[A-Za-z0-9+/]{54}$/;

/**
 * The public key `source` names: a bare key line (as `minisign -P` takes it) or the path of a .pub file. Throws
 * SignatureRefused('malformed') for a file that holds no key, or the read's error (ENOENT…) for a missing file.
 */
export function loadPublicKey(source: string): PublicKey {
  const trimmed = source.trim();
  return parsePublicKey(KEY_LINE.test(trimmed) ? trimmed : readFileSync(source, 'utf8'));
}
