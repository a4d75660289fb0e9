// A command's answer on stdout, whose failure (a full disk, a closed pipe or descriptor) is the command's error with
// its one line on stderr: never an unhandled 'error' event's stack trace, never an exit 0 with nothing written.
import type { Writable } from 'node:stream';

/**
 * A writer of text to `stream` whose promise settles once the text is handed to the system: it rejects with the
 * write's error (EPIPE, ENOSPC, EBADF). Every error of the stream is handled, so none reaches the process as a crash.
 */
export function writerTo(stream: Writable): (text: string) => Promise<void> {
  let failed: Error | null = null;
  stream.on('error', (e) => {
    failed ??= e;
  });
  return (text) =>
    new Promise<void>((resolve, reject) => {
      if (failed !== null) return reject(failed);
      try {
        stream.write(text, (e) => (e ? reject(e) : resolve()));
      } catch (e) {
        reject(e);
      }
    });
}
