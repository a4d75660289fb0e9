// The real entry point as a process (its JSON log parsed), requests over chosen connections, and the Debian parts
// the scale-out tests start (redis-server, HAProxy) on free loopback ports, stopped by PID.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { programArgs } from './bundles.ts';
import { ROOT, tempDir } from './files.ts';
import { issueKey } from './server.ts';
import { fixtureSnapshot } from './snapshots.ts';

export type Line = Record<string, any>;
/** tsx's loader by its URL: `--import tsx` by name would be looked up from the process's cwd, which may be elsewhere. */

/**
 * Why a suite cannot run here (a Debian package is missing), or undefined. Under CI a missing binary is a
 * failure, not a skip: CI installs them (.ci/run).
 */
export function missing(binary: string, pkg: string): string | undefined {
  if (existsSync(binary)) return undefined;
  const why = `${binary} is missing: install it with apt-get install ${pkg}`;
  if (process.env.CI) throw new Error(why);
  return why;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 25 ms until it returns something other than undefined/false, or fails after `ms`. */
export async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  ms = 10_000,
): Promise<NonNullable<Exclude<T, false>>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v as NonNullable<Exclude<T, false>>;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(25);
  }
}

export interface ServiceProcess {
  /** The server process: a single process, or the cluster's primary. */
  child: ChildProcess;
  /** A key in the process's key store (a temp store made for it), or undefined when `env` named a KEYS_PATH. */
  key?: string;
  lines(): Line[];
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** SIGTERM, then the exit code (SIGKILL after 20 s). */
  stop(): Promise<number | null>;
}
export interface Listening extends ServiceProcess {
  url: string;
  metricsUrl?: string;
}
/** Settings for the process; null removes one the test process's own environment has. */
export type ProcessEnv = Record<string, string | null>;

/**
 * The real entry point as a process: src/main.ts as bundled for deployments (bundles.ts; its pid is the
 * server's, or the cluster's primary), not waited for. HOST is 127.0.0.1, PORT 0, DEV_KEY 0 and LOG_REQUESTS 1 unless `env` says otherwise;
 * KEYS_PATH is a fresh store with one key (`key`) unless given. node:test's own variables are not passed on.
 */
export function launchService(
  env: ProcessEnv & { SNAPSHOT_PATH: string | null },
  opts: { cwd?: string; fileLimitKiB?: number } = {},
): ServiceProcess {
  let key: string | undefined;
  const defaults: ProcessEnv = { HOST: '127.0.0.1', PORT: '0', DEV_KEY: '0', LOG_REQUESTS: '1' };
  if (!('KEYS_PATH' in env)) {
    defaults.KEYS_PATH = join(tempDir(), 'keys.db');
    key = issueKey(defaults.KEYS_PATH).key;
  }
  const merged = { ...process.env, ...defaults, ...env };
  const childEnv = Object.fromEntries(
    Object.entries(merged).filter(
      (e): e is [string, string] => typeof e[1] === 'string' && !e[0].startsWith('NODE_TEST'),
    ),
  );
  // Under a file-size limit (ulimit -f, in KiB): bash sets it and becomes the process (exec), so the pid is the server's.
  const [command, args] =
    opts.fileLimitKiB === undefined
      ? [process.execPath, programArgs('src/main.ts')]
      : [
          'bash',
          ['-c', `ulimit -f ${opts.fileLimitKiB} && exec "$0" "$@"`, process.execPath, ...programArgs('src/main.ts')],
        ];
  const child = spawn(command, args, { cwd: opts.cwd ?? ROOT, env: childEnv });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  // On 'close' (all output read), or a second after 'exit' when a child of its own still holds the pipes.
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => resolve(code));
    child.on('exit', (code) => setTimeout(() => resolve(code), 1000).unref());
  });
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  return {
    child,
    key,
    lines,
    stdout: () => out,
    stderr: () => err,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** The settings with SNAPSHOT_PATH the basic fixture's shared snapshot unless they name one (null: none). */
const withSnapshot = async (env: ProcessEnv) => ({
  ...env,
  SNAPSHOT_PATH: 'SNAPSHOT_PATH' in env ? env.SNAPSHOT_PATH : (await fixtureSnapshot()).path,
});

/** launchService (on the basic fixture unless told), resolved once it listens; stopped if it never does. */
export async function spawnService(
  env: ProcessEnv = {},
  opts: { cwd?: string; fileLimitKiB?: number } = {},
): Promise<Listening> {
  const m = launchService(await withSnapshot(env), opts);
  let gone = false;
  void m.exited.then(() => (gone = true));
  try {
    const listening = await until(
      'the listening line',
      () => {
        if (gone) throw new Error(`exited before listening: ${m.stdout()}\n${m.stderr()}`);
        return m.lines().find((l) => l.msg === 'listening');
      },
      30_000,
    );
    return { ...m, url: listening.url, metricsUrl: listening.metrics_url };
  } catch (e) {
    await m.stop();
    throw e;
  }
}

/** launchService (on the basic fixture unless told), resolved when it exits by itself (a start-up refusal): its code and output. SIGKILL after `ms`. */
export async function runService(
  env: ProcessEnv,
  ms = 20_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const m = launchService(await withSnapshot({ LOG_REQUESTS: '0', ...env }));
  const t = setTimeout(() => m.child.kill('SIGKILL'), ms);
  const code = await m.exited;
  clearTimeout(t);
  return { code, stdout: m.stdout(), stderr: m.stderr() };
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * A command run to its end (spawnSync's result, without blocking: several may run at once). `env` is added to the
 * test process's own (null removes a variable; node:test's own are not passed on), or with `onlyEnv` is the whole
 * environment; `stdout` may be 'ignore' or an open file descriptor instead of a pipe. SIGKILL after `timeout` ms.
 */
export function run(
  command: string,
  args: string[],
  opts: {
    cwd?: string;
    env?: ProcessEnv;
    onlyEnv?: boolean;
    stdout?: 'pipe' | 'ignore' | number;
    timeout?: number;
    /** Written to the command's stdin, then closed (no stdin without it). */
    input?: string;
  } = {},
): Promise<Ran> {
  const merged = opts.onlyEnv ? { ...opts.env } : { ...process.env, ...opts.env };
  const env = Object.fromEntries(
    Object.entries(merged).filter(
      (e): e is [string, string] => typeof e[1] === 'string' && !e[0].startsWith('NODE_TEST'),
    ),
  );
  const stdin = opts.input === undefined ? 'ignore' : 'pipe';
  const child = spawn(command, args, { cwd: opts.cwd ?? ROOT, env, stdio: [stdin, opts.stdout ?? 'pipe', 'pipe'] });
  child.stdin?.end(opts.input);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const t = setTimeout(() => child.kill('SIGKILL'), opts.timeout ?? 120_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** `script` (a path from the repository root; bundled where bundles.ts bundles it, else under tsx) run to its end: see run. */
export const runScript = (script: string, args: string[] = [], opts: Parameters<typeof run>[2] = {}) =>
  run(process.execPath, [...programArgs(script), ...args], opts);

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/** A GET over `agent` (one kept-alive connection when it has maxSockets 1), with the key unless it is null. */
export function get(
  url: string,
  key: string | null,
  agent?: Agent,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const all = key === null ? headers : { ...headers, Authorization: `Bearer ${key}` };
    const req = request(url, { agent, headers: all }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** `n` connections of their own: an agent each, kept alive, one socket. */
export const connections = (n: number) =>
  Array.from({ length: n }, () => new Agent({ keepAlive: true, maxSockets: 1 }));

/** The pid of the worker that answered a request, from the request log line with its X-Request-Id. */
export async function answeredBy(main: ServiceProcess, reply: Reply): Promise<number> {
  const id = reply.headers['x-request-id'];
  const line = await until(`the log line of request ${id}`, () => main.lines().find((l) => l.request_id === id), 5000);
  return line.pid;
}

/** Resolves once something accepts TCP connections on 127.0.0.1:port (at most `ms`). */
export function listeningOn(port: number, ms = 10_000): Promise<true> {
  return until(
    `a listener on port ${port}`,
    () =>
      new Promise<boolean>((resolve) => {
        const c = createConnection(port, '127.0.0.1', () => resolve(c.end() && true));
        c.on('error', () => resolve(false));
      }),
    ms,
  );
}

export interface Daemon {
  child: ChildProcess;
  port: number;
  dir: string;
  output(): string;
  /** SIGTERM by PID; resolves when it has exited. */
  stop(): Promise<void>;
}

/** Starts `argv` and waits for `port` to accept connections; its output goes to a string, for failures. */
async function daemon(argv: string[], port: number, dir: string): Promise<Daemon> {
  const child = spawn(argv[0], argv.slice(1), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await Promise.race([
    listeningOn(port),
    exited.then(() => {
      throw new Error(`${argv[0]} exited: ${output}`);
    }),
  ]);
  return {
    child,
    port,
    dir,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Debian's redis-server on 127.0.0.1:port, its files in `dir`, with a password; without persistence of its own
 * unless asked: 'aof' (appendonly yes), 'rdb' (a save point).
 */
export const startRedis = (
  port: number,
  password: string,
  dir = tempDir('redis-test-'),
  persistence: 'none' | 'aof' | 'rdb' = 'none',
) =>
  daemon(
    ['/usr/bin/redis-server', '--port', String(port), '--bind', '127.0.0.1'].concat(
      ['--save', persistence === 'rdb' ? '3600 1' : '', '--appendonly', persistence === 'aof' ? 'yes' : 'no'],
      ['--dir', dir, '--daemonize', 'no', '--logfile', '', '--requirepass', password],
    ),
    port,
    dir,
  );

/** HAProxy in the foreground (-db) with this configuration, written into a temp folder; `port`: its frontend. */
export function startHaproxy(config: string, port: number): Promise<Daemon> {
  const dir = tempDir('haproxy-test-');
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  return daemon(['/usr/sbin/haproxy', '-db', '-f', file], port, dir);
}

/** Replaces `from` in `text`, failing when it is not there (the shipped file changed shape). */
export function replaceIn(text: string, from: string | RegExp, to: string): string {
  const out = text.replace(from, to);
  assert.notEqual(out, text, `the configuration no longer has ${from}`);
  return out;
}
