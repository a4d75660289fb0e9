// The operator's snapshot command: inspect one snapshot file or diff two (both only read), and publish signed
// snapshots: keygen, publish, verify.
import { readFileSync } from 'node:fs';
import { parseCliArgs } from '../../snapshot-format/cli-args.ts';
import { commandLine } from '../../snapshot-format/commands.ts';
import { diffSnapshots, formatDiff } from '../inspect/diff.ts';
import { formatInspect, inspectSnapshot } from '../inspect/inspect.ts';
import { SecretKeyError, SignatureRefused } from '../minisign/index.ts';
import { SnapshotError } from '../snapshot/file.ts';
import { failure, UsageError, unknownCommand, writerTo } from './output.ts';
import { PublishError, publish } from './publish.ts';
import { KeyFileError, keygen, readPassword, validFor, verify } from './signing.ts';

const USAGE = `Usage: ${commandLine('snapshot', '<command> [arguments]', { quiet: true })}

  inspect FILE [--json] [--full]
      id, build time, schema version, records per resource, file size and pages, and SQLite's quick_check;
      --full runs integrity_check instead (indexes and UNIQUE too: about 13 s at 1M listings against 3 s)
  diff OLD NEW [--json] [--ids N] [--cities N]
      records added, removed and changed per resource, with the first N ids of each (default 5), and
      the cities whose median asking rent changed, the N largest changes (default 10)
  keygen --out PREFIX (--password-file F | --unencrypted)
      a minisign key pair: PREFIX.key (secret; encrypted with the first line of F) and PREFIX.pub
  publish FILE --key PREFIX.key --out DIR [--keep N] [--valid-for 7d] [--password-file F]
      a snapshot that passes inspect's checks as DIR/<id>.db, its signature DIR/<id>.db.minisig, then
      DIR/latest.json; --keep N leaves the N newest publications; --valid-for puts an expiry under the signature
  verify FILE --public-key PREFIX.pub|KEY [--signature F]
      FILE against its minisign signature (default FILE.minisig): one line, exit 0 when it is the key's

--json prints one JSON object instead of the tables. A password is read from the first line of a file
(--password-file /dev/stdin reads a pipe), never from the command line. Exit status: 0 done (inspect: the
checks pass), 1 a file is missing, not a snapshot, fails a check or a signature (the reason on stderr), 2 bad arguments.
`;

const OPTIONS = {
  json: { type: 'boolean' },
  full: { type: 'boolean' },
  ids: { type: 'string' },
  cities: { type: 'string' },
  key: { type: 'string' },
  out: { type: 'string' },
  keep: { type: 'string' },
  'valid-for': { type: 'string' },
  'password-file': { type: 'string' },
  unencrypted: { type: 'boolean' },
  'public-key': { type: 'string' },
  signature: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;
type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** What each command takes besides its files; any other option given is a usage mistake. */
const TAKES: Record<string, (keyof Values)[]> = {
  inspect: ['json', 'full'],
  diff: ['json', 'ids', 'cities'],
  keygen: ['out', 'password-file', 'unencrypted'],
  publish: ['key', 'out', 'keep', 'valid-for', 'password-file'],
  verify: ['public-key', 'signature'],
};

function count(raw: string | undefined, name: string, fallback: number, min = 0): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < min)
    throw new UsageError(`--${name} must be a whole number from ${min} to 9999 (got ${JSON.stringify(raw)})`);
  return Number(raw);
}

function required(values: Values, name: 'key' | 'out' | 'public-key', command: string): string {
  const value = values[name];
  if (value === undefined || value === '') throw new UsageError(`${command} needs --${name}`);
  return value;
}

/** The command's file arguments, exactly `n`, after refusing the options it does not take. */
function argumentsOf(command: string, files: string[], values: Values, n: number, what: string): string[] {
  const others = Object.keys(values).filter((o) => o !== 'help' && !TAKES[command].includes(o as keyof Values));
  if (others.length > 0) throw new UsageError(`${command} takes no ${others.map((o) => `--${o}`).join(' or ')}`);
  if (files.length !== n || files.some((f) => f === ''))
    throw new UsageError(
      `${command} needs ${what} (got ${files.length} file argument${files.length === 1 ? '' : 's'})`,
    );
  return files;
}

/** keygen's password: from --password-file, or none with --unencrypted (exactly one of the two). */
function keygenPassword(values: Values): string | null {
  if (values.unencrypted && values['password-file'] !== undefined)
    throw new UsageError('keygen takes --password-file or --unencrypted, not both');
  if (values.unencrypted) return null;
  if (values['password-file'] === undefined)
    throw new UsageError('keygen needs --password-file F (the secret key is encrypted with it) or --unencrypted');
  return readPassword(values['password-file']);
}

async function publishCommand(file: string, values: Values, out: (s: string) => void): Promise<number> {
  const keyPath = required(values, 'key', 'publish');
  const dir = required(values, 'out', 'publish');
  const keep = values.keep === undefined ? null : count(values.keep, 'keep', 0, 1);
  const validForMs = validFor(values['valid-for']);
  const password = values['password-file'] === undefined ? undefined : readPassword(values['password-file']);
  const secretKey = readFileSync(keyPath, 'utf8');
  const t0 = performance.now();
  const r = await publish({ file, secretKey, out: dir, keep, validForMs, password });
  const expiry = r.latest.expires_at === null ? 'no expiry' : `expires ${r.latest.expires_at}`;
  const pruned = r.pruned.length === 0 ? '' : `; pruned ${r.pruned.join(', ')}`;
  out(
    `published ${r.latest.snapshot_id} (${r.latest.size} bytes, ${r.placed}) to ${dir}: ${r.latest.file}, ${r.latest.signature}, latest.json; key ${r.keyId}, ${expiry}${pruned}; ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
  );
  return 0;
}

async function command(name: string | undefined, files: string[], values: Values, out: (s: string) => void) {
  switch (name) {
    case 'inspect': {
      const [file] = argumentsOf(name, files, values, 1, 'one snapshot file');
      const report = inspectSnapshot(file, { full: values.full });
      out(values.json ? `${JSON.stringify(report)}\n` : formatInspect(report));
      if (report.ok) return 0;
      throw new SnapshotError(`${file} fails: ${report.problems.join('; ')}`);
    }
    case 'diff': {
      const [oldFile, newFile] = argumentsOf(name, files, values, 2, 'two snapshot files, OLD and NEW');
      const opts = { ids: count(values.ids, 'ids', 5), cities: count(values.cities, 'cities', 10) };
      const report = diffSnapshots(oldFile, newFile, opts);
      out(values.json ? `${JSON.stringify(report)}\n` : formatDiff(report));
      return 0;
    }
    case 'keygen':
      argumentsOf(name, files, values, 0, 'no file argument');
      out(await keygen(required(values, 'out', name), keygenPassword(values)));
      return 0;
    case 'publish':
      return publishCommand(argumentsOf(name, files, values, 1, 'one snapshot file')[0], values, out);
    case 'verify': {
      const [file] = argumentsOf(name, files, values, 1, 'one file');
      out(await verify(file, required(values, 'public-key', name), values.signature));
      return 0;
    }
    default:
      throw unknownCommand(name);
  }
}

/** Errors the commands know, printed in their own words (anything else is "failed: …"). */
const known = (e: unknown) =>
  [SnapshotError, PublishError, SecretKeyError, SignatureRefused, KeyFileError].some((type) => e instanceof type);

async function run(argv: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseCliArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      out(USAGE);
      return 0;
    }
    const [name, ...files] = positionals;
    return await command(name, files, values as Values, out);
  } catch (e) {
    // Anything but a known failure (an I/O error in the middle of a read) is still one line, not a stack trace.
    return failure('snapshot', USAGE, e, known(e), err);
  }
}

// An entry point only (never imported), as src/cli/keys.ts.
// A report that cannot be written (a full disk, a closed pipe) is a failure with one line, not a stack trace.
const write = writerTo(process.stdout);
const written: Promise<void>[] = [];
run(
  process.argv.slice(2),
  (s) => void written.push(write(s)),
  (s) => process.stderr.write(s),
).then((code) => {
  process.exitCode = code;
  Promise.all(written).catch((e: Error) => {
    process.stderr.write(`snapshot: could not write to stdout: ${e.message}\n`);
    process.exitCode = 1;
  });
});
