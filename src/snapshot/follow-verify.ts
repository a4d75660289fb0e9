// What the follower needs of minisign (src/minisign/): a publication's signature checked over the digest of the bytes
// downloaded, or over a file on disk, refused as a FollowRefusal 'signature', and the expiry its trusted comment signs.
import {
  createFileHasher,
  type PublicKey,
  parseSignature,
  parseTrustedComment,
  SignatureRefused,
  verifyDigest,
  verifyFile,
} from '../minisign/index.ts';
import { FollowRefusal } from './follow-state.ts';

export { type Latest, LatestError, loadPublicKey, type PublicKey, parseLatest } from '../minisign/index.ts';

export const newHasher = createFileHasher;

export interface Vouched {
  /** The signed expiry (`publish --valid-for`), ISO 8601, or null. */
  expiresAt: string | null;
  /** The snapshot id the publisher signed, when the trusted comment names one. */
  snapshotId?: string;
}

const signed = (trusted: string): Vouched => {
  const t = parseTrustedComment(trusted);
  return { expiresAt: t.expiresAt?.toISOString() ?? null, snapshotId: t.snapshotId };
};

/** The refusal of a signature that proves nothing, named as such in the log and /readyz. */
const refusal = (e: SignatureRefused) =>
  new FollowRefusal('signature', `signature refused (${e.reason}): ${e.message}`);

/** Checks the signature of the bytes whose BLAKE2b-512 is `digest`; throws FollowRefusal 'signature'. */
export function verifyPublication(digest: Buffer, signature: string, key: PublicKey): Vouched {
  try {
    return signed(verifyDigest(digest, parseSignature(signature), key));
  } catch (e) {
    if (e instanceof SignatureRefused) throw refusal(e);
    throw e;
  }
}

/** Whether the file on disk is the one `signature` signs (streamed, never opened as a database): what it vouches, or null. */
export async function vouchedFor(file: string, signature: string, key: PublicKey): Promise<Vouched | null> {
  try {
    return signed(await verifyFile(file, signature, key));
  } catch {
    return null;
  }
}
