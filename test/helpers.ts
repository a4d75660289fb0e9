// Test helpers: fixture snapshots built by the real compiler, the real service on an ephemeral port, fetch.
import { mkdtempSync, cpSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSnapshot, type BuildResult } from '../build-snapshot/compile.ts';
import { loadConfig } from '../src/config.ts';
import { startService, type Service } from '../src/server.ts';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

const tempDirs: string[] = [];
process.on('exit', () => { for (const d of tempDirs) rmSync(d, { recursive: true, force: true }); });

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
export async function buildTestSnapshot(source = join(FIXTURES, 'basic'), out = join(tempDir(), 'snapshot.db')): Promise<{ path: string; result: BuildResult }> {
  const result = await buildSnapshot({ source, out, log: () => {}, builtAt: '2026-11-01T00:00:00.000Z' });
  if (!result.ok) throw new Error(`fixture build failed:\n${result.problems.join('\n')}`);
  return { path: out, result };
}

export interface TestServer extends Service {
  logs: Record<string, unknown>[];
  get(path: string, init?: { key?: string | null; headers?: Record<string, string>; method?: string }): Promise<{ status: number; headers: Headers; body: any; text: string }>;
}

/** Starts the real service (same wiring as npm start) on 127.0.0.1:0 with the given environment. */
export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_REQUESTS: '0', DEV_KEY: '0', CURSOR_SECRET: 'test-cursor-secret-0123456789', ...env });
  const logs: Record<string, unknown>[] = [];
  const service = await startService(config, { log: (l) => logs.push(l) });
  return {
    ...service,
    logs,
    async get(path, init = {}) {
      const headers: Record<string, string> = { ...(init.headers ?? {}) };
      const res = await fetch(service.url + path, { method: init.method ?? 'GET', headers });
      const text = await res.text();
      let body: unknown = undefined;
      try { body = text ? JSON.parse(text) : undefined; } catch { /* not JSON */ }
      return { status: res.status, headers: res.headers, body, text };
    },
  };
}
