// A deployment of the real entry point for the snapshot owner's tests: a folder of its own with the served path and
// a key store, the service's settings on it, and what the tests read back (/readyz, /metrics, the workers, links).
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { truncatedCopy as truncated } from './bad-snapshots.ts';
import { tempDir } from './files.ts';
import { type Listening, type ProcessEnv, spawnService } from './processes.ts';
import { issueKey } from './server.ts';
import { fixtureSnapshot } from './snapshots.ts';

export interface Deployment {
  dir: string;
  /** SNAPSHOT_PATH: a copy of `good`. */
  path: string;
  keys: string;
  key: string;
  /** The fixture's snapshot (shared: read only). */
  good: string;
}

/** A folder of its own with the served path (a copy of the fixture's snapshot) and a key store with one key. */
export async function deployment(): Promise<Deployment> {
  const dir = tempDir();
  const good = (await fixtureSnapshot()).path;
  const path = join(dir, 'snapshot.db');
  copyFileSync(good, path);
  const keys = join(dir, 'keys.db');
  return { dir, path, keys, key: issueKey(keys).key, good };
}

/** `head -c 4096 snapshot.db > bad.db`: the first page of a snapshot, a copy cut short, in the deployment's folder. */
export const truncatedCopy = (d: Deployment) => truncated(d.good, 4096, join(d.dir, 'bad.db'));

/**
 * The settings of a service on deployment `d` (its path and its key store), with two workers, metrics and no rate
 * limit to reach, and `env`.
 */
export const settings = (d: Deployment, env: ProcessEnv = {}) => ({
  WORKERS: '2',
  SNAPSHOT_PATH: d.path,
  KEYS_PATH: d.keys,
  METRICS_PORT: '0',
  RATE_LIMIT_PER_MINUTE: '1000000',
  CURSOR_SECRET: 'owner-test-secret-0123456789',
  ...env,
});

/**
 * A service on a deployment of its own (`prepare` may arrange its folder first) with these settings: started before
 * the suite's tests, stopped after; `served` is the id it started on, kept up to date by the tests that swap.
 */
export function deployed(env: ProcessEnv, prepare: (d: Deployment) => void = () => {}) {
  const s = { d: {} as Deployment, m: {} as Listening, served: '' };
  before(async () => {
    s.d = await deployment();
    prepare(s.d);
    s.m = await spawnService(settings(s.d, env));
    s.served = s.m.lines().find((l) => l.msg === 'listening')!.snapshot_id;
  });
  after(async () => {
    await s.m.stop?.();
  });
  return s;
}

/** The owner's links to the served snapshot in `dir`. */
export const links = (dir: string) => readdirSync(dir).filter((n) => n.includes('.served-'));
export const readyz = async (url: string) => {
  const r = await fetch(`${url}/readyz`);
  return { status: r.status, body: await r.json() };
};
export const metricsText = async (m: Listening) => (await fetch(`${m.metricsUrl}`)).text();
/** The "worker ready" lines so far. */
export const ready = (m: Pick<Listening, 'lines'>) => m.lines().filter((l) => l.msg === 'worker ready');
