// minisign's text encodings: the strict base64 of its key and signature lines, its key id, and the refusal error.

/**
 * Why a signature or a key was refused: a closed set that logs, metrics and tests name.
 * - malformed: the signature or the key is not in minisign's format;
 * - legacy: a legacy ("Ed", not prehashed) signature, which cannot be checked without the whole file in memory;
 * - wrong_key: signed by another key (the key ids differ);
 * - bad_signature: the file is not the one signed (changed, truncated, or the signature forged);
 * - bad_trusted_comment: the trusted comment is not the one signed, or its fields are not valid.
 */
export const REFUSAL_REASONS = ['malformed', 'legacy', 'wrong_key', 'bad_signature', 'bad_trusted_comment'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** A signature (or the public key checking it) that proves nothing: `reason` says which check refused it. */
export class SignatureRefused extends Error {
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason, message: string) {
    super(message);
    this.name = 'SignatureRefused';
    this.reason = reason;
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The bytes of one base64 line of exactly `length` bytes, or null (another length, characters outside base64, bad
 * padding): minisign's own decoder accepts nothing looser, and Buffer.from(…, 'base64') silently skips junk.
 */
export function decodeBase64(line: string, length: number): Buffer | null {
  if (line.length === 0 || !BASE64.test(line)) return null;
  const bytes = Buffer.from(line, 'base64');
  return bytes.length === length ? bytes : null;
}

/** A key id as minisign prints it: the 8 key number bytes read as a little-endian integer, 16 upper-case hex digits. */
export function keyIdOf(keyNumber: Buffer): string {
  return Buffer.from(keyNumber).reverse().toString('hex').toUpperCase();
}

export const UNTRUSTED_PREFIX = 'untrusted comment: ';
export const TRUSTED_PREFIX = 'trusted comment: ';

/** The lines of a minisign text file: split on \n, each without a trailing \r (minisign's own trim). */
export function linesOf(text: string): string[] {
  return text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/**
 * Whether minisign would print `text` as a trusted comment: UTF-8 text with tabs but no other control character
 * (no C0, DEL or C1 code point). A JavaScript string is already decoded: bytes that were not UTF-8 became U+FFFD,
 * which is refused with them.
 */
export function isPrintable(text: string): boolean {
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\t') continue;
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp === 0xfffd) return false;
  }
  return true;
}
