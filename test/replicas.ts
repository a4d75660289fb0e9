// Test support for the cluster and Redis suites: the real entry point as a process (its JSON log parsed),
// requests over chosen connections, redis-server and HAProxy started on free loopback ports, stopped by PID.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { copyFixture, tempDir } from './helpers.ts';
import { ROOT } from './support.ts';

export type Line = Record<string, any>;

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

export interface Main {
  /** The server process: a single process, or the cluster's primary. */
  child: ChildProcess;
  url: string;
  metricsUrl?: string;
  lines(): Line[];
  stderr(): string;
  exited: Promise<number | null>;
  /** SIGTERM, then the exit code (SIGKILL after 20 s). */
  stop(): Promise<number | null>;
}

/** `node --import tsx src/main.ts` (one process: its pid is the server's, or the primary's), not waited for. */
export function launchMain(env: Record<string, string>): Omit<Main, 'url' | 'metricsUrl'> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_TEST')));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...base, HOST: '127.0.0.1', PORT: '0', DEV_KEY: '0', LOG_REQUESTS: '1', ...env },
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  return {
    child,
    lines,
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

/** launchMain, resolved once it listens (its "listening" line). */
export async function spawnMain(env: Record<string, string>): Promise<Main> {
  const m = launchMain(env);
  let gone = false;
  void m.exited.then(() => (gone = true));
  const listening = await until(
    'the listening line',
    () => {
      if (gone) throw new Error(`exited before listening: ${JSON.stringify(m.lines())}\n${m.stderr()}`);
      return m.lines().find((l) => l.msg === 'listening');
    },
    30_000,
  );
  return { ...m, url: listening.url, metricsUrl: listening.metrics_url };
}

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
export async function answeredBy(main: Main, reply: Reply): Promise<number> {
  const id = reply.headers['x-request-id'];
  const line = await until(`the log line of request ${id}`, () => main.lines().find((l) => l.request_id === id), 5000);
  return line.pid;
}

/** The fixture snapshot's source with one more listing: compiled, it has another snapshot id. */
export function changedSource(): string {
  const dir = copyFixture();
  const file = join(dir, 'listings.ndjson');
  const first = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]);
  const extra = { ...first, id: 'lst-999', slug: 'lst-999-slug', title: { en: 'Listing lst-999' } };
  appendFileSync(file, `${JSON.stringify(extra)}\n`);
  return dir;
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
