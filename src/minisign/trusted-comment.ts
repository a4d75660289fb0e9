// The trusted comment a publication's signature vouches for: what `snapshot publish` writes and how it is read back.
import { SignatureRefused } from './encoding.ts';

/** What a publication's trusted comment says. Every field is optional: plain `minisign -S` writes only some. */
export interface TrustedFields {
  /** When it was signed ("timestamp:", which minisign writes too). */
  readonly timestamp?: Date;
  /** The file name signed ("file:", which minisign writes too). */
  readonly file?: string;
  /** The snapshot id the publisher signed ("snapshot:"). */
  readonly snapshotId?: string;
  /** After this the publication is stale ("expires:", from `publish --valid-for`); none from plain minisign. */
  readonly expiresAt?: Date;
  /** Every "key:value" field as written, unknown ones included. */
  readonly fields: Readonly<Record<string, string>>;
}

const unixSeconds = (date: Date) => String(Math.floor(date.getTime() / 1000));

/** The trusted comment `snapshot publish` signs: "timestamp:<unix>\tfile:<id>.db\tsnapshot:<id>[\texpires:<unix>]". */
export function formatTrustedComment(fields: {
  timestamp: Date;
  file: string;
  snapshotId: string;
  expiresAt?: Date | null;
}): string {
  const parts = [`timestamp:${unixSeconds(fields.timestamp)}`, `file:${fields.file}`, `snapshot:${fields.snapshotId}`];
  if (fields.expiresAt) parts.push(`expires:${unixSeconds(fields.expiresAt)}`);
  return parts.join('\t');
}

const refuse = (what: string) => new SignatureRefused('bad_trusted_comment', `the signature's trusted comment ${what}`);

/** A field holding Unix seconds, as a Date. */
function timeField(fields: Record<string, string>, name: string): Date | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (!/^\d{1,12}$/.test(value)) throw refuse(`has ${name}:${JSON.stringify(value)}, not a Unix time in seconds`);
  return new Date(Number(value) * 1000);
}

/**
 * The fields of a (verified) trusted comment: tab-separated "key:value" fields; a word without a colon (minisign's
 * "hashed") is a flag and ignored. Throws SignatureRefused('bad_trusted_comment') for a field given twice or a time
 * that is not Unix seconds: the publisher signed something this server cannot read unambiguously.
 */
export function parseTrustedComment(text: string): TrustedFields {
  const fields: Record<string, string> = {};
  for (const part of text.split('\t')) {
    const colon = part.indexOf(':');
    if (colon <= 0) continue;
    const key = part.slice(0, colon);
    if (Object.hasOwn(fields, key)) throw refuse(`gives ${key} twice`);
    fields[key] = part.slice(colon + 1);
  }
  return {
    timestamp: timeField(fields, 'timestamp'),
    file: fields.file,
    snapshotId: fields.snapshot,
    expiresAt: timeField(fields, 'expires'),
    fields,
  };
}
