// The only reader of process.env: loadConfig, then one of three roles. WORKERS=1: a single process
// (startService). WORKERS>1: this process is the cluster's primary (src/service/primary.ts) and every worker
// runs startService (src/service/worker.ts). The development key is made once, after the port listens.
// Each role loads only its own modules (dynamic imports): a primary never evaluates the server's, so it forks
// its workers sooner, and they start on cores it is not using.
import cluster from 'node:cluster';
import { commandLine } from '../snapshot-format/commands.ts';
import type { KeyAdmin } from './access/key-admin.ts';
import { type Config, isLoopback, loadConfig } from './config.ts';
import { stdoutLog } from './log.ts';
import { SERVED_ENV, SLOT_ENV } from './service/protocol.ts';
import { VERSION } from './version.ts';

const slot = cluster.isWorker ? (process.env[SLOT_ENV] ?? '?') : null;
// Workers share the primary's stdout: their lines say which process wrote them, in pieces a pipe never interleaves.
const { log, requestLog } = stdoutLog(
  process.stdout,
  slot === null ? {} : { fields: { worker: slot, pid: process.pid }, shared: true },
);

async function main() {
  const config = loadConfig(process.env);
  if (slot !== null) {
    const { runWorker } = await import('./service/worker.ts');
    const served = JSON.parse(process.env[SERVED_ENV] ?? 'null') ?? {
      file: config.SNAPSHOT_PATH,
      inode: '',
      linked: false,
    };
    return runWorker(config, { slot, log, requestLog, startupMessage, served });
  }
  // snapshotId null: following a publication with nothing at SNAPSHOT_PATH yet (/readyz is 503 until it is in).
  const listening = (info: { url: string; metricsUrl?: string; snapshotId: string | null }) => {
    log({
      level: 'info',
      msg: 'listening',
      url: info.url,
      ...(info.metricsUrl ? { metrics_url: `${info.metricsUrl}/metrics` } : {}),
      snapshot_id: info.snapshotId,
      version: VERSION,
      workers: config.WORKERS,
      pid: process.pid,
    });
    // After listening: a key is never made that a failed start-up could not show.
    void createDevKey(config).then((devKey) => devKey && printDevKey(devKey, info.url));
  };
  if (config.WORKERS > 1) {
    const { runPrimary } = await import('./service/primary.ts');
    return runPrimary(config, { log, listening, fail });
  }

  const { startService } = await import('./service/server.ts');
  const service = await startService(config, { log, requestLog });
  listening({
    url: service.url,
    metricsUrl: service.metricsUrl,
    snapshotId: service.snapshots.peek()?.meta.snapshot_id ?? null,
  });
  // SIGTERM / SIGINT: drain, then exit 0; still busy after DRAIN_TIMEOUT_MS, the rest is cut and the exit is 1.
  let draining = false;
  const stop = (signal: string) => {
    if (draining) return;
    draining = true;
    log({ level: 'info', msg: `${signal}: stopping`, drain_timeout_ms: config.DRAIN_TIMEOUT_MS });
    service.drain(config.DRAIN_TIMEOUT_MS).then((r) => process.exit(r.timedOut ? 1 : 0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGHUP: look at the snapshot file (and a followed publication) now instead of at the next interval.
  process.on('SIGHUP', () => service.lookNow());
}

/**
 * DEV_KEY=1 and an empty key store: issue one local development key so a newcomer can call the API
 * at once. Only when listening on loopback and not behind a proxy: otherwise an empty store stays empty
 * (and the log says how to issue a key), so a deployment never prints a working key into its logs.
 */
async function createDevKey(config: Config): Promise<{ id: string; key: string } | null> {
  if (!config.DEV_KEY) return null;
  let store: KeyAdmin;
  try {
    const { openKeyAdmin } = await import('./access/key-admin.ts');
    store = await openKeyAdmin(
      { keysPath: config.KEYS_PATH, redisUrl: config.REDIS_URL, redisPrefix: config.REDIS_PREFIX },
      { create: true },
    );
  } catch (e) {
    // e.g. a read-only store: the server runs on; keys come from the keys command
    log({ level: 'warn', msg: 'could not check the key store for a development key', error: (e as Error).message });
    return null;
  }
  try {
    if ((await store.count()) > 0) return null;
    // Behind a proxy (TRUST_PROXY) a loopback HOST is a deployment, with logs kept: no key is printed there either.
    if (!isLoopback(config.HOST) || config.TRUST_PROXY) {
      log({
        level: 'warn',
        msg: `the key store is empty; issue a key with: ${commandLine('keys', 'create --name NAME', { quiet: true })} (no development key is made ${config.TRUST_PROXY ? 'behind a proxy (TRUST_PROXY=1)' : 'on a non-loopback HOST'})`,
        keys_path: store.where,
      });
      return null;
    }
    const k = await store.create({ name: 'local development key (made by the server at start-up)' });
    log({ level: 'info', msg: 'created a local development key (printed once on stderr)', key_id: k.id });
    return k;
  } catch (e) {
    log({ level: 'warn', msg: 'could not check the key store for a development key', error: (e as Error).message });
    return null;
  } finally {
    await store.close();
  }
}

/** The one place a key is ever printed by the server: stderr, once, at its creation. */
function printDevKey(k: { id: string; key: string }, url: string) {
  process.stderr.write(
    `${[
      '',
      '  A local development API key was created (the key store was empty). It is shown only this once:',
      '',
      `    ${k.key}`,
      '',
      `  Key id: ${k.id}. Try it:`,
      `    curl -H "Authorization: Bearer ${k.key}" '${url}/v1/listings?limit=1'`,
      '',
      `  Manage keys with ${commandLine('keys', `list | disable ${k.id} | revoke ${k.id}`)}.`,
      '',
    ].join('\n')}\n`,
  );
}

/**
 * The one line a start-up failure prints: its message, never a stack trace (a ConfigError, SnapshotError or
 * KeyStoreError names the setting or file).
 */
function startupMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function fail(message: string): never {
  process.stderr.write(`start-up failed: ${message}\n`);
  process.exit(1);
}

main().catch((e) => fail(startupMessage(e)));
