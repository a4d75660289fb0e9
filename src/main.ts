// The only reader of process.env: loadConfig → startService → (dev key if the key store is empty).
import { type Config, ConfigError, loadConfig } from './config.ts';
import { stdoutLog } from './http/log.ts';
import { isLoopback, startService } from './http/server.ts';
import { countKeys, createKey, KeyStoreError, openKeyStore } from './keys/store.ts';
import { SnapshotError } from './snapshot/source.ts';

const { log, requestLog } = stdoutLog(process.stdout);

async function main() {
  const config = loadConfig(process.env);
  const service = await startService(config, { log, requestLog });
  log({
    level: 'info',
    msg: 'listening',
    url: service.url,
    ...(service.metricsUrl ? { metrics_url: `${service.metricsUrl}/metrics` } : {}),
    snapshot_id: service.snapshots.get().meta.snapshot_id,
  });
  const devKey = createDevKey(config); // after listening: a key is never made that a failed start-up could not show
  if (devKey) printDevKey(devKey, service.url);
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
  // SIGHUP: look at the snapshot file now instead of at the next interval.
  process.on('SIGHUP', () => void service.snapshots.refresh());
}

/**
 * DEV_KEY=1 and an empty key store: issue one local development key so a newcomer can call the API
 * at once. Only when listening on loopback and not behind a proxy: otherwise an empty store stays empty
 * (and the log says how to issue a key), so a deployment never prints a working key into its logs.
 */
function createDevKey(config: Config): { id: string; key: string } | null {
  if (!config.DEV_KEY) return null;
  let db;
  try {
    db = openKeyStore(config.KEYS_PATH, { create: true });
  } catch (e) {
    // e.g. a read-only store: the server runs on; keys come from npm run keys
    log({ level: 'warn', msg: 'could not check the key store for a development key', error: (e as Error).message });
    return null;
  }
  try {
    if (countKeys(db) > 0) return null;
    // Behind a proxy (TRUST_PROXY) a loopback HOST is a deployment, with logs kept: no key is printed there either.
    if (!isLoopback(config.HOST) || config.TRUST_PROXY) {
      log({
        level: 'warn',
        msg: `the key store is empty; issue a key with: npm run -s keys -- create --name NAME (no development key is made ${config.TRUST_PROXY ? 'behind a proxy (TRUST_PROXY=1)' : 'on a non-loopback HOST'})`,
        keys_path: config.KEYS_PATH,
      });
      return null;
    }
    const k = createKey(db, { name: 'local development key (made by npm start)' });
    log({ level: 'info', msg: 'created a local development key (printed once on stderr)', key_id: k.id });
    return k;
  } finally {
    db.close();
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
      `  Manage keys with npm run keys -- list | disable ${k.id} | revoke ${k.id}.`,
      '',
    ].join('\n')}\n`,
  );
}

main().catch((e) => {
  if (e instanceof ConfigError || e instanceof SnapshotError || e instanceof KeyStoreError) {
    process.stderr.write(`start-up failed: ${e.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`start-up failed: ${(e as Error).message}\n`);
  process.exit(1);
});
