// Test helpers: fixture snapshots built by the real compiler, the real service on an ephemeral port, fetch.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildResult, buildSnapshot } from '../build-snapshot/compile.ts';
import { createKey, openKeyStore } from '../src/access/key-store.ts';
import { loadConfig } from '../src/config.ts';
import { type Service, type ServiceOptions, startService } from '../src/service/server.ts';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

const tempDirs: string[] = [];
process.on('exit', () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temporary folder, removed when the process exits. */
export function tempDir(prefix = 'rental-api-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** Copies a fixture source folder so a test may modify it. */
export function copyFixture(name = 'basic'): string {
  const dir = join(tempDir(), name);
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** Compiles a source folder with the real compiler into a temp file; throws with the problems on failure. */
export async function buildTestSnapshot(
  source = join(FIXTURES, 'basic'),
  out = join(tempDir(), 'snapshot.db'),
  opts: { builtAt?: string; previous?: string; historySteps?: number } = {},
): Promise<{ path: string; result: BuildResult }> {
  const builtAt = opts.builtAt ?? '2026-11-01T00:00:00.000Z';
  const result = await buildSnapshot({ ...opts, source, out, log: () => {}, builtAt });
  if (!result.ok) throw new Error(`fixture build failed:\n${result.problems.join('\n')}`);
  return { path: out, result };
}

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
    CURSOR_SECRET: 'test-cursor-secret-0123456789',
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
