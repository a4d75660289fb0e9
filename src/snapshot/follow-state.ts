// What following a publication shows (/readyz, /metrics) and the small rules it goes by: a refusal and its reasons,
// staleness, the URL as shown, the spread delay of an instance, the validators a conditional request may use.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** Why a publication was not taken: the closed list /readyz and the metrics name. */
export type RefusalReason =
  | 'signature'
  | 'rollback'
  | 'schema'
  | 'size'
  | 'no_space'
  | 'manifest'
  | 'mismatch'
  | 'candidate'
  | 'expired';

/** A publication refused for what it is (remembered per signature when `lasting`), not a failure to reach it. */
export class FollowRefusal extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly lasting = true,
  ) {
    super(message);
  }
}

/** A hash fed with the bytes as they arrive (BLAKE2b-512 for minisign). */
export interface Hasher {
  update(b: Buffer): unknown;
}

export interface FollowRefused {
  snapshot_id: string;
  reason: RefusalReason;
  message: string;
  at: string;
}

/** What /readyz and /metrics show of following. */
export interface FollowState {
  url: string;
  interval_ms: number;
  stale_after_ms: number;
  delay_ms: number;
  started_at: string;
  last_check: string | null;
  last_success: string | null;
  last_error: string | null;
  /** The publication latest.json named at the last check. */
  publication: { snapshot_id: string; published_at: string; built_at: string } | null;
  /** The verified publication served (its signed expiry), or null before one is. */
  served: { snapshot_id: string; expires_at: string | null } | null;
  refused: FollowRefused | null;
  /** Publications refused so far, by reason. */
  refusals: Partial<Record<RefusalReason, number>>;
}

/** The state before the first check. */
export function initialState(
  url: string,
  s: { intervalMs: number; staleMs: number; delayMs: number },
  startedAt: string,
): FollowState {
  return {
    url,
    interval_ms: s.intervalMs,
    stale_after_ms: s.staleMs,
    delay_ms: s.delayMs,
    started_at: startedAt,
    last_check: null,
    last_success: null,
    last_error: null,
    publication: null,
    served: null,
    refused: null,
    refusals: {},
  };
}

/** Why the served data is stale (expired, or no successful check for stale_after_ms), or null. */
export function staleness(s: FollowState, now: number): string | null {
  if (s.served?.expires_at && Date.parse(s.served.expires_at) <= now) return 'expired';
  const since = Date.parse(s.last_success ?? s.started_at);
  return now - since > s.stale_after_ms ? 'no_successful_check' : null;
}

/** The URL as logs and /readyz show it: no user, password or query (a signed URL's query is a secret). */
export const shownUrl = (url: string) => {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
};

/** The spread delay of one instance: the same name gives the same delay (0 … spreadMs), so the same replica goes first. */
export const spreadDelay = (instance: string, spreadMs: number) =>
  spreadMs <= 0 ? 0 : createHash('sha256').update(instance).digest().readUInt32BE(0) % (spreadMs + 1);

/**
 * The validators a later request may be conditional on: none while latest.json was modified within the last 2 s, since
 * a web server's ETag and Last-Modified have a resolution of a second (nginx's ETag is mtime and size): a file replaced
 * twice within one second by one of the same size would otherwise look unchanged.
 */
export function settled(h: IncomingHttpHeaders): OutgoingHttpHeaders {
  const modified = Date.parse(h['last-modified'] ?? '');
  const now = Date.parse(h.date ?? '');
  if (Number.isNaN(modified) || Number.isNaN(now) || now - modified < 2000) return {};
  return {
    ...(h.etag ? { 'If-None-Match': h.etag } : {}),
    'If-Modified-Since': h['last-modified'],
  };
}

/** The snapshot served now, as the rollback check compares it. */
export interface ServedMeta {
  snapshot_id: string;
  built_at: string;
}

export interface FollowTarget {
  path: string;
  /** The snapshot served now (null before the first), and the file it is served from. */
  served(): (ServedMeta & { file: string }) | null;
  /** The owner looks at the path now; resolves true once the file renamed there is served by every member. */
  install(): Promise<boolean>;
  /** Why the owner refused the file at the path, if it did. */
  refusedBecause(): string | undefined;
}
