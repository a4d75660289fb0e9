// CLI: npm run build-snapshot -- [--source DIR] [--out FILE] (nl-rental-api build-snapshot … in the single executable,
// which runs this module as it is). Exit 0 on success, 1 on bad data, 2 on bad arguments.
import { parseCliArgs } from '../snapshot-format/cli-args.ts';
import { commandLine } from '../snapshot-format/commands.ts';
import { buildSnapshot } from './compile.ts';
import { FullTextBuilder } from './fts-worker.ts';
import { hasReplaced, removeTemp, stopBuilds, tempPathFor } from './output.ts';

// `npm run build-snapshot` and `npm run bench:build` set MALLOC_ARENA_MAX=2 (see the README): glibc reads it
// only at process start, so it is the launcher's to set.
const usage = `usage: ${commandLine('build-snapshot', '[--source DIR (default data)] [--out FILE (default data/snapshot.db)] [--previous OLD.db (record the changes since OLD for /v1/changes)]')}`;
let args: { source?: string; out?: string; previous?: string; help?: boolean };
try {
  args = parseCliArgs({
    options: {
      source: { type: 'string', default: 'data' },
      out: { type: 'string', default: 'data/snapshot.db' },
      previous: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  }).values;
} catch (e) {
  console.error(`build-snapshot: ${(e as Error).message}\n${usage}`);
  process.exit(2);
}
if (args.help) {
  console.log(usage);
  process.exit(0);
}
for (const name of ['source', 'out', 'previous'] as const) {
  if (args[name]?.trim() === '') {
    console.error(`build-snapshot: --${name} is empty\n${usage}`);
    process.exit(2);
  }
}

// Interrupted (Ctrl-C, a deploy tool's SIGTERM): the temporary files go, the target is untouched, and the
// process then ends by the same signal (exit status 130 / 143 / 129).
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    stopBuilds();
    // The full-text worker stops itself first (a worker killed inside SQLite aborts the process); it
    // takes at most one batch, one term or one statement (the commit, the term list), and this waits 5 s at most.
    void Promise.race([FullTextBuilder.stopAll(), new Promise((r) => setTimeout(r, 5000).unref())]).finally(() => {
      removeTemp(tempPathFor(args.out!));
      // A signal after the rename (the build had just finished) cannot undo it, and says so.
      console.error(
        hasReplaced(args.out!)
          ? `build-snapshot: interrupted (${signal}) after the build had finished: ${args.out} was replaced with the new snapshot`
          : `build-snapshot: interrupted (${signal}); ${args.out} was not changed`,
      );
      // Not process.exit(): it waits for the worker threads, and a parser blocked in a read (a FIFO, a
      // hung network file system) would never return. The signal's default action ends the process.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    });
  });
}

/** While a signal is being handled, its handler ends the process: nothing else is printed meanwhile. */
const waitForSignal = () =>
  new Promise<never>(() => {
    setInterval(() => {}, 60_000);
  });

/**
 * A line as the terminal should show it: control characters from the source data (an escape sequence in a field,
 * the NULs of a UTF-16 file) written as \u escapes, so that a problem line can neither drive the terminal nor
 * hide itself.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const shown = (line: string) => line.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

// No top-level await: the single executable bundles this module as CommonJS (scripts/sea.ts).
void buildSnapshot({ source: args.source!, out: args.out!, previous: args.previous }).then(
  async (result) => {
    if (interrupted) await waitForSignal();
    report(result);
  },
  async (e) => {
    if (interrupted) await waitForSignal();
    removeTemp(tempPathFor(args.out!));
    console.error(shown(`build-snapshot: FAILED: ${(e as Error).message}; ${args.out} was not changed`));
    process.exit(1);
  },
);

function report(result: Awaited<ReturnType<typeof buildSnapshot>>) {
  for (const w of result.warnings) console.error(shown(w));
  if (!result.ok) {
    for (const p of result.problems) console.error(shown(p));
    const n = result.problemCount ?? result.problems.length;
    console.error(
      `build-snapshot: FAILED with ${n} problem${n === 1 ? '' : 's'} after ${result.seconds.toFixed(1)}s; ${args.out} was not changed`,
    );
    process.exit(1);
  }
  const counts = Object.entries(result.counts!)
    .map(([k, c]) => `${k} ${c.stored}/${c.read}`)
    .join(', ');
  if (result.changes) {
    const c = Object.values(result.changes.counts);
    const sum = (k: 'added' | 'removed' | 'changed') => c.reduce((n, x) => n + x[k], 0);
    console.error(
      `build-snapshot: changes since ${args.previous}: ${sum('added')} added, ${sum('removed')} removed, ${sum('changed')} changed; history of ${result.changes.steps} step${result.changes.steps === 1 ? '' : 's'}`,
    );
  }
  console.error(
    `build-snapshot: OK ${result.snapshotId} → ${args.out} (${(result.bytes! / 1048576).toFixed(1)} MiB) in ${result.seconds.toFixed(1)}s; stored/valid: ${counts}; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`,
  );
}
