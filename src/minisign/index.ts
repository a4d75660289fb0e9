// minisign's formats for publishing snapshots: keys, signatures over a file's BLAKE2b-512 digest, and latest.json.
export { REFUSAL_REASONS, type RefusalReason, SignatureRefused } from './encoding.ts';
export { formatLatest, LATEST_FILE, type Latest, LatestError, parseLatest, writeLatest, writeWhole } from './latest.ts';
export { formatPublicKey, loadPublicKey, type PublicKey, parsePublicKey } from './public-key.ts';
export {
  formatSecretKey,
  generateSecretKey,
  INTERACTIVE,
  parseSecretKey,
  type ScryptLimits,
  SENSITIVE,
  type SecretKey,
  SecretKeyError,
} from './secret-key.ts';
export {
  createFileHasher,
  digestFile,
  parseSignature,
  type Signature,
  type Signer,
  signDigest,
  verifyDigest,
  verifyFile,
} from './signature.ts';
export { formatTrustedComment, parseTrustedComment, type TrustedFields } from './trusted-comment.ts';
