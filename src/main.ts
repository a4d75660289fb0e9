// The only reader of process.env: loadConfig → (sample snapshot if missing) → startService.
import { existsSync } from 'node:fs';
import { ConfigError, loadConfig } from './config.ts';
import { SnapshotError } from './snapshot.ts';
import { startService } from './server.ts';
import { buildSnapshot } from '../build-snapshot/compile.ts';

const log = (line: Record<string, unknown>) => process.stdout.write(JSON.stringify({ time: new Date().toISOString(), ...line }) + '\n');

async function main() {
  const config = loadConfig(process.env);
  if (!existsSync(config.SNAPSHOT_PATH) && !process.env.SNAPSHOT_PATH) {
    log({ level: 'info', msg: `no snapshot at ${config.SNAPSHOT_PATH}: building it from the sample data in data/` });
    const r = await buildSnapshot({ source: 'data', out: config.SNAPSHOT_PATH, log: () => {} });
    if (!r.ok) throw new SnapshotError(`building the sample snapshot failed:\n${r.problems.join('\n')}`);
  }
  const service = await startService(config, { log });
  log({ level: 'info', msg: 'listening', url: service.url, snapshot_id: service.snapshots.get().meta.snapshot_id });
  const stop = () => {
    setTimeout(() => process.exit(0), 5000).unref();
    service.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => {
  if (e instanceof ConfigError || e instanceof SnapshotError) {
    process.stderr.write(`start-up failed: ${e.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`start-up failed: ${(e as Error).message}\n`);
  process.exit(1);
});
