// What the operator's commands print: the answer on stdout, whose failure (a full disk, a closed pipe or descriptor)
// is the command's error with its one line on stderr (never an unhandled 'error' event's stack trace, never an exit
// 0 with nothing written), and a failure's one line (and the usage, for a usage mistake) with its exit status.
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

/** A mistake in the command line: the command prints its message and then its usage, and exits 2. */
export class UsageError extends Error {}

/** The usage mistake of a command word that is missing or not one of the command's. */
export const unknownCommand = (command: string | undefined) =>
  new UsageError(command === undefined ? 'missing command' : `unknown command ${JSON.stringify(command)}`);

/**
 * What a command prints on stderr for `e`, and its exit status: a usage mistake with the usage (2); an error the
 * command knows (`known`) in its own words (1); anything else as "failed:" and its message, never a stack trace (1).
 */
export function failure(command: string, usage: string, e: unknown, known: boolean, err: (s: string) => void): number {
  if (e instanceof UsageError) {
    err(`${command}: ${e.message}\n\n${usage}`);
    return 2;
  }
  const message = (e as Error).message;
  err(`${command}: ${known ? message : `failed: ${message}`}\n`);
  return 1;
}
