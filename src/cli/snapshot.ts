// The operator's snapshot command: inspect one snapshot file, or diff two. Both only ever read the files.
import { parseCliArgs } from '../../snapshot-format/cli-args.ts';
import { commandLine } from '../../snapshot-format/commands.ts';
import { diffSnapshots, formatDiff } from '../snapshot/diff.ts';
import { SnapshotFileError } from '../snapshot/file.ts';
import { formatInspect, inspectSnapshot } from '../snapshot/inspect.ts';
import { failure, UsageError, unknownCommand, writerTo } from './output.ts';

const USAGE = `Usage: ${commandLine('snapshot', '<command> [arguments]', { quiet: true })}

  inspect FILE [--json] [--full]
      id, build time, schema version, records per resource, file size and pages, and SQLite's quick_check;
      --full runs integrity_check instead (indexes and UNIQUE too: about 13 s at 1M listings against 3 s)
  diff OLD NEW [--json] [--ids N] [--cities N]
      records added, removed and changed per resource, with the first N ids of each (default 5), and
      the cities whose median asking rent changed, the N largest changes (default 10)

--json prints one JSON object instead of the tables. Exit status: 0 done (inspect: the checks pass),
1 a file is missing, not a snapshot or fails a check (the reason on stderr), 2 bad arguments.
`;

function count(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,4}$/.test(raw))
    throw new UsageError(`--${name} must be a whole number from 0 to 9999 (got ${JSON.stringify(raw)})`);
  return Number(raw);
}

function run(argv: string[], out: (s: string) => void, err: (s: string) => void): number {
  try {
    let parsed;
    try {
      parsed = parseCliArgs({
        args: argv,
        allowPositionals: true,
        strict: true,
        options: {
          json: { type: 'boolean' },
          full: { type: 'boolean' },
          ids: { type: 'string' },
          cities: { type: 'string' },
          help: { type: 'boolean', short: 'h' },
        },
      });
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      out(USAGE);
      return 0;
    }
    const [command, ...files] = positionals;
    const paths = (n: number, what: string) => {
      if (files.length !== n || files.some((f) => f === ''))
        throw new UsageError(
          `${command} needs ${what} (got ${files.length} file argument${files.length === 1 ? '' : 's'})`,
        );
      return files;
    };
    switch (command) {
      case 'inspect': {
        const [file] = paths(1, 'one snapshot file');
        if (values.ids !== undefined || values.cities !== undefined)
          throw new UsageError('inspect takes no --ids or --cities');
        const report = inspectSnapshot(file, { full: values.full });
        out(values.json ? `${JSON.stringify(report)}\n` : formatInspect(report));
        if (report.ok) return 0;
        err(`snapshot: ${file} fails: ${report.problems.join('; ')}\n`);
        return 1;
      }
      case 'diff': {
        const [oldFile, newFile] = paths(2, 'two snapshot files, OLD and NEW');
        if (values.full) throw new UsageError('diff takes no --full');
        const opts = { ids: count(values.ids, 'ids', 5), cities: count(values.cities, 'cities', 10) };
        const report = diffSnapshots(oldFile, newFile, opts);
        out(values.json ? `${JSON.stringify(report)}\n` : formatDiff(report));
        return 0;
      }
      default:
        throw unknownCommand(command);
    }
  } catch (e) {
    // Anything but a file's own failure (an I/O error in the middle of a read) is still one line, not a stack trace.
    return failure('snapshot', USAGE, e, e instanceof SnapshotFileError, err);
  }
}

// An entry point only (never imported), as src/cli/keys.ts.
// A report that cannot be written (a full disk, a closed pipe) is a failure with one line, not a stack trace.
const write = writerTo(process.stdout);
const written: Promise<void>[] = [];
process.exitCode = run(
  process.argv.slice(2),
  (s) => void written.push(write(s)),
  (s) => process.stderr.write(s),
);
Promise.all(written).catch((e: Error) => {
  process.stderr.write(`snapshot: could not write to stdout: ${e.message}\n`);
  process.exitCode = 1;
});
