// The part file of a download: written from a byte on while each chunk is hashed once it is on disk, so a cut
// connection leaves the hash of exactly the bytes written; a short write (a full disk, a file-size limit) is continued.
import { close, open, writev } from 'node:fs';
import { Writable } from 'node:stream';
import { FollowRefusal, type Hasher } from './follow-state.ts';

/**
 * A writer of the part file from byte `from` on that hashes each chunk once it is written (so a cut connection leaves
 * the hash of exactly the bytes on disk), refusing to write past `size`.
 */
export function hashingFile(part: string, from: number, hash: Hasher, size: number) {
  let at = from;
  let fd: number | null = null;
  let inFlight = Promise.resolve();
  let closed!: () => void;
  const settled = new Promise<void>((r) => (closed = r));
  /** Writes `buffers` at `at`, again after a short write (a full disk or a file-size limit), hashing what is written. */
  const writeAll = (buffers: Buffer[], finish: (e: Error | null) => void): void =>
    writev(fd!, buffers, at, (e, n) => {
      if (e || n === 0) return finish(e ?? Object.assign(new Error('a write wrote nothing'), { code: 'EIO' }));
      const rest: Buffer[] = [];
      for (const b of buffers) {
        const took = Math.min(n, b.length);
        if (took > 0) hash.update(took === b.length ? b : b.subarray(0, took));
        if (took < b.length) rest.push(b.subarray(took));
        at += took;
        n -= took;
      }
      return rest.length > 0 ? writeAll(rest, finish) : finish(null);
    });
  const stream = new Writable({
    construct(done) {
      open(part, from === 0 ? 'w' : 'r+', (e, f) => {
        fd = f;
        done(e);
      });
    },
    // Whatever arrived while the disk was busy goes in one writev: a socket's chunks are 16-64 KiB.
    writev(chunks, done) {
      const buffers = chunks.map((c) => c.chunk as Buffer);
      const bytes = buffers.reduce((n, b) => n + b.length, 0);
      if (at + bytes > size)
        return done(new FollowRefusal('size', `the file is larger than the ${size} bytes published`));
      inFlight = new Promise((written) =>
        writeAll(buffers, (e) => {
          written();
          done(e);
        }),
      );
    },
    destroy(e, done) {
      // After the write under way (a cut connection destroys the stream in the middle of one).
      void inFlight.then(() => {
        const end = () => {
          closed();
          done(e);
        };
        if (fd === null) end();
        else close(fd, end);
      });
    },
  });
  /** Resolves the bytes written (and hashed) once the file is closed. */
  return { stream, written: () => settled.then(() => at) };
}
