// A minisign secret key: read (unencrypted, or encrypted with a password by scrypt as minisign does) and written.
import { execFileSync } from 'node:child_process';
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  scrypt,
} from 'node:crypto';
import { promisify } from 'node:util';
import { decodeBase64, keyIdOf, linesOf, UNTRUSTED_PREFIX } from './encoding.ts';
import type { Signer } from './signature.ts';

/** A key that cannot sign: not minisign's format, encrypted without a password given, or the wrong password. */
export class SecretKeyError extends Error {
  override name = 'SecretKeyError';
}

/** A secret key ready to sign, with the public key and key id that verify its signatures. */
export interface SecretKey extends Signer {
  readonly keyId: string;
  readonly publicKey: KeyObject;
}

// The layout (minisign.h, SeckeyStruct): algorithm "Ed", KDF "Sc" or two zero bytes, checksum "B2", the scrypt
// salt and limits, then the part the password encrypts: key number, libsodium's 64-byte key (seed, public key) and
// the BLAKE2b-256 checksum of algorithm, key number and key.
const SECRET_KEY_BYTES = 158;
const SALT = 6;
const OPSLIMIT = 38;
const MEMLIMIT = 46;
const ENCRYPTED = 54;
/** scrypt's cost as minisign stores it: libsodium's opslimit and memlimit, from which N, r and p follow. */
export interface ScryptLimits {
  readonly opslimit: bigint;
  readonly memlimit: bigint;
}
/** libsodium's limits for "sensitive" keys, what `minisign -G` uses: N = 2^20, r = 8, p = 1 (1 GiB, seconds). */
export const SENSITIVE: ScryptLimits = { opslimit: 33554432n, memlimit: 1073741824n };
/** libsodium's "interactive" limits: N = 2^14, r = 8, p = 1 (16 MiB); for tests, whose keys protect nothing. */
export const INTERACTIVE: ScryptLimits = { opslimit: 524288n, memlimit: 16777216n };
/** The most memory a key's scrypt may ask for: twice minisign's own. */
const MAX_SCRYPT_BYTES = 2 ** 31;

const scryptAsync = promisify(scrypt) as (
  password: Buffer,
  salt: Buffer,
  length: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/** libsodium's choice of scrypt's N, r and p for an opslimit and memlimit (crypto_pwhash_scryptsalsa208sha256). */
export function scryptParams(opslimit: bigint, memlimit: bigint): { N: number; r: number; p: number } {
  const ops = opslimit < 32768n ? 32768n : opslimit;
  const r = 8n;
  const log2Above = (max: bigint) => {
    let n = 1n;
    while (n < 63n && !(1n << n > max / 2n)) n += 1n;
    return n;
  };
  if (ops < memlimit / 32n) return { N: Number(1n << log2Above(ops / (r * 4n))), r: 8, p: 1 };
  const log2N = log2Above(memlimit / (r * 128n));
  let maxrp = ops / 4n / (1n << log2N);
  if (maxrp > 0x3fffffffn) maxrp = 0x3fffffffn;
  return { N: Number(1n << log2N), r: 8, p: Number(maxrp / r) };
}

/** The key stream scrypt derives from the password for this key's salt and limits (104 bytes). */
async function keyStream(password: Buffer, salt: Buffer, opslimit: bigint, memlimit: bigint): Promise<Buffer> {
  const { N, r, p } = scryptParams(opslimit, memlimit);
  const bytes = 128 * N * r * Math.max(p, 1);
  if (p < 1 || bytes > MAX_SCRYPT_BYTES)
    throw new SecretKeyError(`the secret key asks for scrypt parameters this command does not run (N=${N}, p=${p})`);
  return scryptAsync(password, salt, SECRET_KEY_BYTES - ENCRYPTED, { N, r, p, maxmem: bytes + 2 ** 24 });
}

const xor = (data: Buffer, stream: Buffer) => Buffer.from(data.map((byte, i) => byte ^ stream[i]));

/** The raw 32-byte public key of an Ed25519 key object. */
const rawPublic = (key: KeyObject) => Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url');

/** The signer in minisign's decrypted key part, when its public half is the one its seed derives. */
function signerOf(plain: Buffer): SecretKey | null {
  const keyNumber = plain.subarray(0, 8);
  const seed = plain.subarray(8, 40);
  const storedPublic = plain.subarray(40, 72);
  const jwk = { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: storedPublic.toString('base64url') };
  const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
  const publicKey = createPublicKey(privateKey);
  if (!rawPublic(publicKey).equals(storedPublic)) return null;
  return { keyId: keyIdOf(keyNumber), keyNumber: Buffer.from(keyNumber), privateKey, publicKey };
}

/** The base64 line of a secret key file, decoded, or a SecretKeyError. */
function keyBytes(text: string): Buffer {
  const lines = linesOf(text.trim()).filter((line) => line.trim() !== '');
  const line = lines.length === 2 && lines[0].startsWith(UNTRUSTED_PREFIX) ? lines[1].trim() : undefined;
  const bytes = line === undefined ? null : decodeBase64(line, SECRET_KEY_BYTES);
  if (bytes === null) throw new SecretKeyError('the secret key is not a minisign secret key file');
  if (bytes.toString('latin1', 0, 2) !== 'Ed' || bytes.toString('latin1', 4, 6) !== 'B2')
    throw new SecretKeyError('the secret key is not an Ed25519 minisign key with a BLAKE2b checksum');
  return bytes;
}

/**
 * The signer in a minisign secret key file's text. An encrypted key ("Sc") needs `password` (the line minisign
 * would read); an unencrypted one (`minisign -G -W`, `snapshot keygen --unencrypted`) takes none. The decrypted key
 * is checked by deriving its public half from its seed: a wrong password gives another key, and is refused.
 */
export async function parseSecretKey(text: string, password?: string): Promise<SecretKey> {
  const bytes = keyBytes(text);
  const kdf = bytes.subarray(2, 4);
  let plain = bytes.subarray(ENCRYPTED);
  if (kdf.toString('latin1') === 'Sc') {
    if (password === undefined)
      throw new SecretKeyError('the secret key is encrypted: give its password (--password-file)');
    const salt = bytes.subarray(SALT, SALT + 32);
    const stream = await keyStream(
      Buffer.from(password, 'utf8'),
      salt,
      bytes.readBigUInt64LE(OPSLIMIT),
      bytes.readBigUInt64LE(MEMLIMIT),
    );
    plain = xor(plain, stream);
  } else if (!kdf.equals(Buffer.alloc(2))) {
    throw new SecretKeyError('the secret key uses a key derivation other than scrypt');
  } else if (password !== undefined) {
    throw new SecretKeyError('the secret key is not encrypted: give no password');
  }
  const signer = signerOf(plain);
  if (signer === null)
    throw new SecretKeyError(
      kdf[0] === 0 ? 'the secret key is damaged (its two halves do not match)' : 'wrong password for the secret key',
    );
  return signer;
}

/**
 * BLAKE2b with a 32-byte output of `data`. minisign checks it when it decrypts a key, to tell a wrong password.
 * node:crypto offers BLAKE2b only with its 64-byte output on OpenSSL 3.0 (a shorter BLAKE2b is not a truncation of
 * the longer), and this project writes no cryptography of its own, so `b2sum -l 256` (coreutils) computes it; the
 * key material goes to it on a pipe, never on its command line. Only `snapshot keygen` with a password needs it.
 */
export function keyChecksum(data: Buffer): Buffer {
  let out: string;
  try {
    out = execFileSync('b2sum', ['-l', '256'], { input: data, encoding: 'latin1', stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(
      `an encrypted key needs coreutils' b2sum for minisign's key checksum, which failed (${(e as Error).message.split('\n')[0]}): install coreutils, or use --unencrypted`,
    );
  }
  const hex = out.slice(0, 64);
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error('b2sum -l 256 printed no 256-bit digest');
  return Buffer.from(hex, 'hex');
}

/** A new key pair: a random 8-byte key number and an Ed25519 key. */
export function generateSecretKey(): SecretKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keyNumber = randomBytes(8);
  return { keyId: keyIdOf(keyNumber), keyNumber, privateKey, publicKey };
}

/**
 * A secret key file's text as `minisign -G` writes it: encrypted with `password` by scrypt at minisign's limits
 * (`limits`, SENSITIVE unless told), or unencrypted (as `-W`: no salt, no limits, a zero checksum) when `password`
 * is null.
 */
export async function formatSecretKey(
  key: SecretKey,
  password: string | null,
  limits: ScryptLimits = SENSITIVE,
): Promise<string> {
  const seed = Buffer.from(key.privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const secret = Buffer.concat([seed, rawPublic(key.publicKey)]);
  const bytes = Buffer.alloc(SECRET_KEY_BYTES);
  bytes.write('Ed', 0, 'latin1');
  bytes.write('B2', 4, 'latin1');
  key.keyNumber.copy(bytes, ENCRYPTED);
  secret.copy(bytes, ENCRYPTED + 8);
  if (password !== null) {
    bytes.write('Sc', 2, 'latin1');
    randomBytes(32).copy(bytes, SALT);
    bytes.writeBigUInt64LE(limits.opslimit, OPSLIMIT);
    bytes.writeBigUInt64LE(limits.memlimit, MEMLIMIT);
    keyChecksum(Buffer.concat([Buffer.from('Ed', 'latin1'), key.keyNumber, secret])).copy(bytes, ENCRYPTED + 72);
    const stream = await keyStream(
      Buffer.from(password, 'utf8'),
      bytes.subarray(SALT, SALT + 32),
      limits.opslimit,
      limits.memlimit,
    );
    xor(bytes.subarray(ENCRYPTED), stream).copy(bytes, ENCRYPTED);
  }
  const comment = password === null ? 'minisign secret key' : 'minisign encrypted secret key';
  return `${UNTRUSTED_PREFIX}${comment}\n${bytes.toString('base64')}\n`;
}
