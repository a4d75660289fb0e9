// `snapshot keygen` and `snapshot verify`, and what publish reads with them: a password file, a --valid-for duration.
import { closeSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import {
  formatPublicKey,
  formatSecretKey,
  generateSecretKey,
  loadPublicKey,
  parseTrustedComment,
  verifyFile,
} from '../minisign/index.ts';
import { UsageError } from './output.ts';

/** A key file keygen will not write (one already there): exit status 1. */
export class KeyFileError extends Error {}

/** minisign reads a password of at most 1,023 bytes: a longer one could not be typed into it. */
const PASSWORD_MAX_BYTES = 1023;

/**
 * The password in the file at `path`: its first line (without the line end), as minisign reads it from a terminal
 * or a pipe. `/dev/stdin` reads it from a pipe. Never printed: a mistake names the file only.
 */
export function readPassword(path: string): string {
  let text: string;
  try {
    text = firstBytes(path, PASSWORD_MAX_BYTES + 2);
  } catch (e) {
    throw new UsageError(`--password-file ${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const password = text.split('\n')[0].replace(/\r$/, '');
  if (password === '') throw new UsageError(`--password-file ${path} holds no password on its first line`);
  if (Buffer.byteLength(password) > PASSWORD_MAX_BYTES)
    throw new UsageError(`--password-file ${path}: the password is longer than minisign's ${PASSWORD_MAX_BYTES} bytes`);
  return password;
}

/** At most `max` bytes from the start of `path`, up to its first line end (a pipe or /dev/zero is read no further). */
function firstBytes(path: string, max: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(max);
    let length = 0;
    for (let n = 1; n > 0 && length < max && !buffer.subarray(0, length).includes(10); length += n)
      n = readSync(fd, buffer, length, max - length, null);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The longest --valid-for: ten years (a publication meant never to expire is published without one). */
const MAX_VALID_MS = 3650 * UNITS.d;

/** --valid-for: a whole number and a unit, s, m, h or d ("7d", "36h"), up to ten years; null when not given. */
export function validFor(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const m = /^([1-9]\d{0,9})([smhd])$/.exec(raw);
  const ms = m ? Number(m[1]) * UNITS[m[2]] : Number.NaN;
  if (!(ms <= MAX_VALID_MS))
    throw new UsageError(
      `--valid-for must be a duration such as 7d, 36h or 90m, at most 3650d (got ${JSON.stringify(raw)})`,
    );
  return ms;
}

/** Creates `path` with `text`, readable by its owner only when `secret`; never replaces an existing file. */
function create(path: string, text: string, secret: boolean): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', secret ? 0o600 : 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw new KeyFileError(`${path} already exists: keygen never replaces a key (choose another --out)`);
    throw e;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** keygen: PREFIX.key (encrypted with `password`, or unencrypted when null) and PREFIX.pub; returns the report line. */
export async function keygen(prefix: string, password: string | null): Promise<string> {
  const key = generateSecretKey();
  const secret = await formatSecretKey(key, password);
  create(`${prefix}.key`, secret, true);
  try {
    create(`${prefix}.pub`, formatPublicKey(key.keyNumber, key.publicKey), false);
  } catch (e) {
    rmSync(`${prefix}.key`, { force: true }); // a pair or nothing
    throw e;
  }
  const how = password === null ? 'unencrypted' : 'encrypted with the password';
  return `key ${key.keyId}: secret key ${prefix}.key (${how}; keep it secret), public key ${prefix}.pub (give it to followers)\n`;
}

/**
 * verify: the file at `file` against its minisign signature (`signature`, default FILE.minisig) and the public key
 * `publicKey` (a .pub file or a bare key line). Returns the report line; throws SignatureRefused or a read error.
 */
export async function verify(file: string, publicKey: string, signature = `${file}.minisig`): Promise<string> {
  const key = loadPublicKey(publicKey);
  const comment = await verifyFile(file, readFileSync(signature, 'utf8'), key);
  const { expiresAt } = parseTrustedComment(comment);
  const expiry =
    expiresAt === undefined
      ? 'no expiry'
      : `${expiresAt < new Date() ? 'expired' : 'expires'} ${expiresAt.toISOString()}`;
  return `${file}: signed by key ${key.keyId} (${expiry}); trusted comment: ${comment}\n`;
}
