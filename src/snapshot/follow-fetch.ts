// HTTP(S) for following a publication: small files read whole (latest.json, a signature), and a snapshot streamed
// into a file beside SNAPSHOT_PATH while it is hashed, resumed with Range after a cut connection, never in memory.
import { createReadStream, statfsSync, statSync, unlinkSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { hashingFile } from './follow-part.ts';
import { FollowRefusal, type Hasher, shownUrl } from './follow-state.ts';

/** An idle connection is given up after this long (then retried); a small file must arrive within it too. */
const IDLE_MS = 30_000;
const REDIRECTS = 5;
/** Left free on the file system after a download, beyond its size (SQLite's temporary files, the logs). */
export const FREE_MARGIN = 64 * 1024 * 1024;

/**
 * One GET; redirects (a CDN's, a bucket's) followed to http: and https: only, never from https: down to http:, the
 * extra header kept on the same origin only. Every failure rejects (a bad Location never throws), its message naming
 * URLs as shownUrl does (no password, no query).
 */
export function get(url: URL, headers: OutgoingHttpHeaders, extra: OutgoingHttpHeaders = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const go = (u: URL, left: number) => {
      const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
      const sameOrigin = u.origin === url.origin;
      let req: ReturnType<typeof send>;
      try {
        req = send(u, { headers: { ...headers, ...(sameOrigin ? extra : {}) }, timeout: IDLE_MS }, answered);
      } catch (e) {
        return reject(new Error(`${shownUrl(u.href)}: ${(e as Error).message}`)); // thrown, not emitted: a bad option
      }
      req.on('timeout', () => req.destroy(new Error(`${u.host}: no answer within ${IDLE_MS / 1000} s`)));
      req.on('error', reject);
      req.end();
      function answered(res: IncomingMessage) {
        const to = res.headers.location;
        if (res.statusCode! >= 300 && res.statusCode! < 400 && res.statusCode !== 304 && to !== undefined) {
          res.resume();
          if (left === 0) return reject(new Error(`${shownUrl(url.href)}: more than ${REDIRECTS} redirects`));
          const next = redirectTarget(u, to);
          return typeof next === 'string' ? reject(new Error(next)) : go(next, left - 1);
        }
        resolve(res);
      }
    };
    go(url, REDIRECTS);
  });
}

/** Where a redirect from `from` to `location` leads, or why it is not followed (the Location itself never shown). */
function redirectTarget(from: URL, location: string): URL | string {
  let to: URL;
  try {
    to = new URL(location, from);
  } catch {
    return `${shownUrl(from.href)}: redirected to an invalid URL`;
  }
  if (to.protocol !== 'http:' && to.protocol !== 'https:')
    return `${shownUrl(from.href)}: redirected to a ${to.protocol} URL (only http: and https: are followed)`;
  if (from.protocol === 'https:' && to.protocol === 'http:')
    return `${shownUrl(from.href)}: redirected from https: down to http: (${shownUrl(to.href)}), not followed`;
  return to;
}

/** A small file read whole: its status, headers and body (at most `limit` bytes, else an error). */
export async function getSmall(
  url: URL,
  headers: OutgoingHttpHeaders,
  extra: OutgoingHttpHeaders,
  limit: number,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  const res = await get(url, headers, extra);
  res.setTimeout(IDLE_MS, () => res.destroy(new Error(`${url.pathname}: stalled`)));
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of res) {
    size += (c as Buffer).length;
    if (size > limit) {
      res.destroy();
      throw new Error(`${url.pathname}: larger than ${limit} bytes`);
    }
    chunks.push(c as Buffer);
  }
  return { status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) };
}

/** The bytes `path` may still take: the free space of its file system for an unprivileged writer. */
export function freeBytes(path: string): number {
  const s = statfsSync(dirname(path));
  return s.bavail * s.bsize;
}

const sizeOfFile = (f: string) => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};
export const removeFile = (f: string) => {
  try {
    unlinkSync(f);
  } catch {
    /* not there */
  }
};

export interface Download {
  url: URL;
  /** The temporary file (beside SNAPSHOT_PATH) the bytes go to. */
  part: string;
  /** The size the publication names. */
  size: number;
  extra: OutgoingHttpHeaders;
  /** A new hash of the bytes from the start of the file (again when a resume is refused). */
  hasher(): Hasher;
  /** Connections cut before the end are resumed up to this many times in a row without progress. */
  retries?: number;
  /** Told after each cut connection (bytes so far). */
  cut?(bytes: number, error: Error): void;
  /** Aborts between attempts (the service is stopping). */
  stopped?(): boolean;
}

/**
 * Streams the file into `part`, hashing it as it is written; a cut connection is resumed from where it stopped
 * (Range, with If-Range on the validator the first answer gave, so a file changed meanwhile restarts from 0). Resolves
 * the hasher of the whole file. Throws FollowRefusal 'size' when the server's file is not `size` bytes, 'no_space' on
 * ENOSPC, EDQUOT or EFBIG (the part removed), or the last network error after `retries` cuts without progress.
 */
export async function download(d: Download): Promise<Hasher> {
  let hash = d.hasher();
  let have = sizeOfFile(d.part);
  if (have > d.size) {
    removeFile(d.part);
    have = 0;
  }
  if (have > 0) for await (const c of createReadStream(d.part)) hash.update(c as Buffer);
  let validator: string | undefined;
  let stuck = 0;
  for (;;) {
    const start = have;
    const range: OutgoingHttpHeaders =
      have > 0 ? { Range: `bytes=${have}-`, ...(validator ? { 'If-Range': validator } : {}) } : {};
    try {
      const res = await get(d.url, { 'Accept-Encoding': 'identity', ...range }, d.extra);
      const resumed = have > 0 && res.statusCode === 206;
      if (!resumed) checkWhole(res, d.size);
      else if (!checkRange(res, have, d.size)) {
        // Not the bytes asked for: the part is dropped and the next attempt asks for the whole file.
        removeFile(d.part);
        [hash, have, validator] = [d.hasher(), 0, undefined];
        throw new Error(`a resumed download got the range ${res.headers['content-range']}: restarting from byte 0`);
      }
      validator ??= validatorOf(res);
      if (!resumed && have > 0) {
        hash = d.hasher();
        have = 0;
      }
      const file = hashingFile(d.part, resumed ? have : 0, hash, d.size);
      try {
        await pipeline(res, file.stream);
      } finally {
        have = await file.written(); // exactly the bytes written and hashed, whatever was in flight at the cut
      }
      if (have === d.size) return hash;
      throw new FollowRefusal('size', `the file ended at ${have} of the ${d.size} bytes published`);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EFBIG' || code === 'EDQUOT') {
        removeFile(d.part);
        throw new FollowRefusal(
          'no_space',
          `a write was refused while downloading (${code}: a full disk, a quota or a file-size limit such as ulimit -f): removed the partial file`,
          false,
        );
      }
      if (e instanceof FollowRefusal || e instanceof HttpStatus) throw e;
      stuck = have > start ? 1 : stuck + 1;
      d.cut?.(have, e as Error);
      if (stuck > (d.retries ?? 3) || d.stopped?.()) throw e;
      await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** stuck, 5000)));
    }
  }
}

/** An answer that is neither the file nor a range of it (404, 403, 5xx). */
export class HttpStatus extends Error {}

function checkWhole(res: IncomingMessage, size: number): void {
  if (res.statusCode !== 200) {
    res.resume();
    throw new HttpStatus(`HTTP ${res.statusCode}`);
  }
  const length = res.headers['content-length'];
  if (length !== undefined && Number(length) !== size) {
    res.resume();
    const what = Number(length) < size ? 'shorter' : 'larger';
    throw new FollowRefusal('size', `the file served is ${what} (${length} bytes) than the ${size} bytes published`);
  }
}

/** Whether a 206 answers the range from `from` on (false: another range); throws when the file is another size. */
function checkRange(res: IncomingMessage, from: number, size: number): boolean {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(res.headers['content-range'] ?? '');
  if (m === null || Number(m[1]) !== from) {
    res.resume();
    return false;
  }
  if (m[3] !== '*' && Number(m[3]) !== size) {
    res.resume();
    throw new FollowRefusal('size', `the file served is ${m[3]} bytes, not the ${size} bytes published`);
  }
  return true;
}

/** The validator If-Range may name: a strong ETag, else Last-Modified. */
function validatorOf(res: IncomingMessage): string | undefined {
  const etag = res.headers.etag;
  if (etag !== undefined && !etag.startsWith('W/')) return etag;
  return res.headers['last-modified'];
}

/** Why a download of `size` bytes (with `have` already in the part file) would not fit on the disk, or null. */
export function spaceProblem(part: string, size: number): string | null {
  const need = size - sizeOfFile(part) + FREE_MARGIN;
  let free: number;
  try {
    free = freeBytes(part);
  } catch {
    return null; // statfs unsupported: ENOSPC is still caught while writing
  }
  return free < need ? `${need} bytes needed beside SNAPSHOT_PATH (the file and a margin), ${free} free` : null;
}
