// startService(config): snapshot + app + listener(s); shared by main.ts and the tests, so both run the same wiring.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import { cursorCodec } from './cursor.ts';
import { SnapshotSource } from './snapshot.ts';
import { createApp, type Log } from './app.ts';

export interface Service {
  url: string;
  snapshots: SnapshotSource;
  servers: Server[];
  close(): Promise<void>;
}

export async function startService(config: Config, opts: { log: Log; now?: () => number }): Promise<Service> {
  const snapshots = new SnapshotSource(config.SNAPSHOT_PATH, { checkIntervalMs: config.SNAPSHOT_CHECK_MS, log: opts.log, now: opts.now });
  const app = createApp({ snapshots, cursor: cursorCodec(config.CURSOR_SECRET, opts.now), log: opts.log, logRequests: config.LOG_REQUESTS });
  const server = createServer(app.handler as never);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  const servers = [server];
  return {
    url: `http://${host}:${port}`,
    snapshots,
    servers,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((r) => { s.closeAllConnections?.(); s.close(() => r()); })));
      snapshots.close();
    },
  };
}
