// The BLAKE2b-256 checksum inside a password-protected minisign secret key, computed by coreutils' b2sum.
import { execFileSync } from 'node:child_process';

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
