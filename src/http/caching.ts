// HTTP caching of data answers: the snapshot's identity and build time, a weak ETag per request, 304 on a match.
import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { SnapshotMeta } from '../snapshot/source.ts';

const perSnapshot = new WeakMap<SnapshotMeta, readonly string[]>();
/** The headers every data answer (and its 304) carries for one snapshot, as a flat list (X-Snapshot-Id, Last-Modified). */
export function snapshotHeaders(meta: SnapshotMeta): readonly string[] {
  let h = perSnapshot.get(meta);
  if (h === undefined) {
    const built = new Date(meta.built_at);
    const modified = Number.isNaN(built.getTime()) ? new Date(0).toUTCString() : built.toUTCString();
    h = Object.freeze(['X-Snapshot-Id', meta.snapshot_id, 'Last-Modified', modified]);
    perSnapshot.set(meta, h);
  }
  return h;
}

/**
 * A weak tag for the answer to one request on one snapshot: the snapshot id, the path and the validated
 * query (defaults applied, keys sorted: "?limit=20" and no limit are the same request; the cursor and the
 * locale are part of it). The request id inside the body differs between answers, so the tag is weak.
 */
export function etagOf(snapshotId: string, path: string, query: Record<string, unknown>): string {
  const keys = Object.keys(query).sort();
  let canonical = `${snapshotId}\n${path}`;
  for (const k of keys) if (query[k] !== undefined) canonical += `\n${k}=${String(query[k])}`;
  return `W/"${hash('sha256', canonical, 'base64url').slice(0, 27)}"`;
}

/** Whether If-None-Match names this tag (weak comparison, RFC 9110 13.1.2) or is "*". */
export function notModified(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.slice(2); // without W/
  for (const part of header.split(',')) {
    const t = part.trim();
    if ((t.startsWith('W/') ? t.slice(2) : t) === opaque) return true;
  }
  return false;
}
