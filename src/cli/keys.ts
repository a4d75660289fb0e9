// The operator's key command: create, list, disable, enable, revoke keys in the key store at KEYS_PATH.
import { fstatSync, statSync } from 'node:fs';
import { parseCliArgs } from '../../snapshot-format/cli-args.ts';
import { commandLine } from '../../snapshot-format/commands.ts';
import { type KeyAdmin, openKeyAdmin } from '../access/key-admin.ts';
import { KeyStoreError } from '../access/key-store.ts';
import { ConfigError, loadSettings, SETTINGS } from '../config.ts';
import { isRealDate } from '../http/params.ts';
import { failure, UsageError, unknownCommand, writerTo } from './output.ts';

const USAGE = `Usage: ${commandLine('keys', '<command> [arguments]')}

  create --name NAME [--expires-at ISO-8601]   issue a key; prints one JSON object with id and key (the key is shown only this once)
  list                                          one JSON object per key per line: id, name, created, expires, status
  disable ID                                    the key is refused from its next request until enabled
  enable ID                                     undo disable (not possible for a revoked key)
  revoke ID                                     refuse the key for good (final)

The key store is KEYS_PATH (default ${SETTINGS.KEYS_PATH.default}), or Redis when REDIS_URL is set (keys under
REDIS_PREFIX, default ${SETTINGS.REDIS_PREFIX.default}). Exit status: 0 done, 1 failed (e.g. unknown id), 2 bad arguments.
`;

const ISO = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** --expires-at: a date (midnight UTC) or a date-time with a zone, in the future; stored as UTC ISO-8601. */
function expiry(raw: string | undefined, now: number): string | null {
  if (raw === undefined) return null;
  const t = Date.parse(raw);
  // Date.parse rolls 2027-02-30 over to 2 March: the calendar date must exist as written.
  if (!ISO.test(raw) || Number.isNaN(t) || !isRealDate(raw.slice(0, 10)))
    throw new UsageError(
      `--expires-at must be an ISO-8601 date or date-time with a zone, e.g. 2027-01-31 or 2027-01-31T12:00:00Z (got ${JSON.stringify(raw)})`,
    );
  if (t <= now) throw new UsageError(`--expires-at must be in the future (got ${raw})`);
  return new Date(t).toISOString();
}

function keyName(raw: string | undefined): string {
  const name = raw?.trim();
  if (!name) throw new UsageError('create needs --name NAME (who or what the key is for)');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the name must not hold
  if (name.length > 100 || /[\u0000-\u001f\u007f]/.test(name))
    throw new UsageError('--name must be at most 100 characters without control characters');
  return name;
}

/** Whether fd 1 is /dev/null (false when either cannot be looked at). */
function stdoutIsNull(): boolean {
  try {
    const out = fstatSync(1);
    const nul = statSync('/dev/null');
    return out.isCharacterDevice() && out.rdev === nul.rdev;
  } catch {
    return false;
  }
}

/** One run of the command: its options and arguments, the key store's location, the time, where it prints. */
interface Run {
  command: string;
  rest: string[];
  values: { name?: string; 'expires-at'?: string };
  at: { keysPath: string; redisUrl?: string; redisPrefix: string };
  now: number;
  out: (s: string) => Promise<void>;
  err: (s: string) => void;
}

/** The command line parsed strictly: an unknown or repeated option is a usage mistake. */
function parseArgs(argv: string[]) {
  try {
    return parseCliArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { name: { type: 'string' }, 'expires-at': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** Runs `f` on the key store, closed afterwards. */
async function withStore(r: Run, create: boolean, f: (store: KeyAdmin) => Promise<void>) {
  const store = await openKeyAdmin(r.at, { create });
  if (store.warning !== null) r.err(`warning: ${store.warning}\n`);
  try {
    await f(store);
  } finally {
    await store.close();
  }
}

function noOptions({ command, values }: Run) {
  if (values.name !== undefined || values['expires-at'] !== undefined)
    throw new UsageError(`${command} takes no --name or --expires-at`);
}

/** create: a new key, printed once; revoked at once when it cannot be printed. */
async function create(r: Run) {
  const { rest, values, now, out } = r;
  if (rest.length) throw new UsageError(`create takes no positional arguments (got ${rest.join(' ')})`);
  const opts = { name: keyName(values.name), expiresAt: expiry(values['expires-at'], now), now };
  // A closed stdout is /dev/null to node (it reopens fds 0-2 there): the key would be shown to nobody.
  if (stdoutIsNull())
    throw new UsageError('stdout is /dev/null or closed: the new key would be lost; send it to a file or a terminal');
  await withStore(r, true, async (store) => {
    const made = await store.create(opts);
    try {
      await out(`${JSON.stringify(made)}\n`);
    } catch (e) {
      // Nobody saw the key: it must not stay usable.
      await store.change(made.id, 'revoke', now);
      throw new KeyStoreError(
        `could not write the new key to stdout (${(e as Error).message}); key ${made.id} was revoked at once: run create again`,
      );
    }
  });
  r.err('Store this key now: it is shown only this once and cannot be recovered.\n');
}

/** list: one JSON line per key. */
async function list(r: Run) {
  noOptions(r);
  if (r.rest.length) throw new UsageError('list takes no arguments');
  await withStore(r, false, async (store) => {
    try {
      for (const k of await store.list(r.now)) await r.out(`${JSON.stringify(k)}\n`);
    } catch (e) {
      // The reader closed the pipe (list | head -1): it has what it wanted; the rest is not an error.
      if ((e as NodeJS.ErrnoException).code !== 'EPIPE') throw e;
    }
  });
}

/** disable, enable, revoke: one key's status changed, the key printed. */
async function change(r: Run, command: 'disable' | 'enable' | 'revoke') {
  noOptions(r);
  if (r.rest.length !== 1 || !r.rest[0])
    throw new UsageError(
      `${command} needs exactly one key id, e.g. ${commandLine('keys', `${command} key_XXXXXXXXXXXXXXXX`)}`,
    );
  const [id] = r.rest;
  await withStore(r, false, async (store) => {
    const changed = await store.change(id, command, r.now);
    await r.out(`${JSON.stringify(changed)}\n`);
  });
}

async function run(
  argv: string[],
  env: Record<string, string | undefined>,
  out: (s: string) => Promise<void>,
  err: (s: string) => void,
): Promise<number> {
  try {
    const { values, positionals } = parseArgs(argv);
    if (values.help) {
      await out(USAGE);
      return 0;
    }
    const [command, ...rest] = positionals;
    const settings = loadSettings(env, ['KEYS_PATH', 'REDIS_URL', 'REDIS_PREFIX']);
    const at = { keysPath: settings.KEYS_PATH, redisUrl: settings.REDIS_URL, redisPrefix: settings.REDIS_PREFIX };
    const r: Run = { command, rest, values, at, now: Date.now(), out, err };
    switch (command) {
      case 'create':
        await create(r);
        return 0;
      case 'list':
        await list(r);
        return 0;
      case 'disable':
      case 'enable':
      case 'revoke':
        await change(r, command);
        return 0;
      default:
        throw unknownCommand(command);
    }
  } catch (e) {
    return failure('keys', USAGE, e, e instanceof KeyStoreError || e instanceof ConfigError, err);
  }
}

// An entry point only (never imported): a main-module check could silently do nothing under a symlinked path or a bundle.
run(process.argv.slice(2), process.env, writerTo(process.stdout), (s) => process.stderr.write(s)).then((code) => {
  process.exitCode = code;
});
