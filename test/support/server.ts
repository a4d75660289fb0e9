// The real service in the test's own process, on 127.0.0.1 port 0, as npm start wires it; a key; fetch.

import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { createKey, openKeyStore } from '../../src/access/key-store.ts';
import { loadConfig } from '../../src/config.ts';
import { type Service, type ServiceOptions, startService } from '../../src/service/server.ts';
import { tempDir } from './files.ts';
import { fixtureSnapshot } from './snapshots.ts';

/** Issues a key in the key store at `keysPath` (created if missing), as `npm run keys -- create` does. */
export function issueKey(
  keysPath: string,
  opts: { name?: string; expiresAt?: string | null; now?: number } = {},
): { id: string; key: string } {
  const db = openKeyStore(keysPath, { create: true });
  try {
    const k = createKey(db, { name: opts.name ?? 'test', expiresAt: opts.expiresAt, now: opts.now });
    return { id: k.id, key: k.key };
  } finally {
    db.close();
  }
}

export interface TestServer extends Service {
  logs: Record<string, unknown>[];
  /** A valid key in the server's key store; get() sends it unless told otherwise. */
  key: string;
  keyId: string;
  keysPath: string;
  /** Sends "Authorization: Bearer <server.key>" unless `key` is given (null: no header) or `headers` has an Authorization. */
  get(
    path: string,
    init?: { key?: string | null; headers?: Record<string, string>; method?: string },
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
}

const TEST_SECRET = 'test-cursor-secret-0123456789';

/**
 * Starts the real service (same wiring as npm start) on 127.0.0.1:0 with the given environment.
 * `opts.now` replaces the service clock (cursor expiry, snapshot checks, key expiry); omitted, the real clock is used.
 * The key store (a temp file unless KEYS_PATH is given) gets one key: `server.key`. Rate limits default to
 * values no ordinary test reaches; set RATE_LIMIT_PER_MINUTE / AUTH_FAILURES_PER_MINUTE (and
 * `opts.rateWindowSeconds`) to test them.
 */
export async function startServer(
  env: Record<string, string> = {},
  opts: Omit<ServiceOptions, 'log'> = {},
): Promise<TestServer> {
  const keysPath = env.KEYS_PATH ?? join(tempDir(), 'keys.db');
  const { id: keyId, key } = issueKey(keysPath);
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_REQUESTS: '0',
    DEV_KEY: '0',
    CURSOR_SECRET: TEST_SECRET,
    RATE_LIMIT_PER_MINUTE: '1000000',
    AUTH_FAILURES_PER_MINUTE: '1000000',
    ...env,
    KEYS_PATH: keysPath,
  });
  const logs: Record<string, unknown>[] = [];
  const service = await startService(config, { ...opts, log: (l) => logs.push(l) });
  return {
    ...service,
    logs,
    key,
    keyId,
    keysPath,
    async get(path, init = {}) {
      const headers: Record<string, string> = { ...(init.headers ?? {}) };
      const explicit = Object.keys(headers).some((h) => h.toLowerCase() === 'authorization');
      if (!explicit && init.key !== null) headers.Authorization = `Bearer ${init.key ?? key}`;
      const res = await fetch(service.url + path, { method: init.method ?? 'GET', headers });
      const text = await res.text();
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON */
      }
      return { status: res.status, headers: res.headers, body, text };
    },
  };
}

export type Res = Awaited<ReturnType<TestServer['get']>>;
type Env = Record<string, string>;

/**
 * The service for a whole file or suite: started in a `before` of the calling scope (on the basic fixture's
 * snapshot unless `env` names a SNAPSHOT_PATH; `env` may be a function, run then, for a snapshot the file builds)
 * and closed in its `after`. The returned object is the TestServer once `before` has run. Node 20 runs a file's
 * top-level `before` hooks at the same time, not in turn: a top-level hook that needs the server awaits `ready`
 * (inside a `describe`, hooks run in turn).
 */
export function useServer(
  env: Env | (() => Env | Promise<Env>) = {},
  opts: Omit<ServiceOptions, 'log'> = {},
): TestServer & { ready: Promise<void> } {
  const ready = {} as { resolve(): void; reject(e: unknown): void };
  const promise = new Promise<void>((resolve, reject) => Object.assign(ready, { resolve, reject }));
  promise.catch(() => {}); // the failed before reports it
  const server = { ready: promise } as TestServer & { ready: Promise<void> };
  before(async () => {
    try {
      const e = typeof env === 'function' ? await env() : env;
      const snapshot = e.SNAPSHOT_PATH ?? (await fixtureSnapshot()).path;
      Object.assign(server, await startServer({ ...e, SNAPSHOT_PATH: snapshot }, opts));
      ready.resolve();
    } catch (e) {
      ready.reject(e);
      throw e;
    }
  });
  after(() => server.close?.());
  return server;
}

/** A bare node:http server on 127.0.0.1:0 answering with `handler`: for tests of one piece of the HTTP layer. */
export async function rawServer(handler: RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * startService alone, as start-up runs it: no key issued, no store made beforehand, the log dropped; loopback, port
 * 0, no request log, no development key. For tests of start-up itself: what it creates, what it refuses.
 */
export function startBare(env: Env): Promise<Service> {
  const defaults = { HOST: '127.0.0.1', PORT: '0', LOG_REQUESTS: '0', DEV_KEY: '0', CURSOR_SECRET: TEST_SECRET };
  return startService(loadConfig({ ...defaults, ...env }), { log: () => {} });
}
