// The service's listeners: the API's (plain HTTP, or TLS), the HTTP_REDIRECT_PORT one that sends clients to HTTPS, and
// METRICS_PORT's, each limited against slow clients; an error names the settings it came from.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.ts';
import type { createApp } from '../http/app.ts';
import { httpsRedirect } from '../http/guard.ts';
import { type Metrics, serveMetrics } from '../http/metrics.ts';
import { clientErrorHandler, connectHandler, trackingResponses } from '../http/raw-answers.ts';
import type { AppDeps } from '../http/route.ts';

/**
 * Connection limits against slow or idle clients (slowloris): the whole headers within 10 s, the whole
 * request within 30 s, a TLS handshake within 10 s, checked every 2 s (node's default check interval
 * is 30 s, which let a trickling client hold a connection ~60 s). Idle keep-alive connections close
 * after 65 s, longer than the 60 s idle timeout of common load balancers, so the balancer closes first.
 */
export const TIMEOUTS = {
  headersMs: 10_000,
  requestMs: 30_000,
  handshakeMs: 10_000,
  checkMs: 2_000,
  keepAliveMs: 65_000,
};
export type Timeouts = typeof TIMEOUTS;

/** Listens; an error (a host that does not resolve, a port in use) names the settings it came from. */
function listen(server: Server, port: number, host: string, names = 'HOST / PORT'): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new Error(`${names} (${host}:${port}): ${e.message}`)));
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function readPem(path: string, setting: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`${setting}: cannot read ${what} ${path}: ${(e as Error).message}`);
  }
}

/** A host as it goes in a URL (an IPv6 address in brackets). */
const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** node:http's options for these limits; requireHostHeader: the app answers a missing Host itself, with the envelope. */
const httpOptions = (t: Timeouts) => ({
  headersTimeout: t.headersMs,
  requestTimeout: t.requestMs,
  connectionsCheckingInterval: t.checkMs,
  keepAliveTimeout: t.keepAliveMs,
  requireHostHeader: false,
});

/**
 * The API's listener (TLS when `tls`), added to `servers` before it listens (so a failure closes it too): its URL and
 * port.
 */
export async function apiListener(
  config: Config,
  tls: boolean,
  t: Timeouts,
  app: ReturnType<typeof createApp>,
  servers: Server[],
): Promise<{ url: string; port: number }> {
  let server: Server;
  if (tls) {
    const cert = readPem(config.TLS_CERT_PATH!, 'TLS_CERT_PATH', 'TLS certificate'),
      key = readPem(config.TLS_KEY_PATH!, 'TLS_KEY_PATH', 'TLS key');
    try {
      server = createHttpsServer({ cert, key, handshakeTimeout: t.handshakeMs, ...httpOptions(t) }, app.handler);
    } catch (e) {
      throw new Error(
        `TLS_CERT_PATH / TLS_KEY_PATH: not a usable PEM certificate and matching key (${(e as Error).message})`,
      );
    }
  } else server = createServer(httpOptions(t), app.handler);
  // Beyond MAX_CONNECTIONS open connections, new ones are closed at once: file descriptors stay for the
  // clients already served, however many connections one client opens.
  server.maxConnections = config.MAX_CONNECTIONS;
  server.on('clientError', app.clientError);
  server.on('connect', app.connect);
  // An Expect other than 100-continue: served as usual (RFC 9110 allows ignoring it) instead of node's bare 417.
  server.on('checkExpectation', app.handler);
  servers.push(server);
  const port = await listen(server, config.PORT, config.HOST);
  return { url: `${tls ? 'https' : 'http'}://${urlHost(config.HOST)}:${port}`, port };
}

/** With TLS, the HTTP_REDIRECT_PORT listener that sends plain-HTTP clients to the API's port: its URL, if set. */
export async function redirectListener(
  config: Config,
  httpsPort: number,
  t: Timeouts,
  logDeps: Pick<AppDeps, 'log' | 'requestLog' | 'logRequests'>,
  servers: Server[],
): Promise<string | undefined> {
  if (config.HTTP_REDIRECT_PORT === undefined) return undefined;
  const { handler: redirect, lastResponse } = trackingResponses(httpsRedirect(httpsPort, logDeps));
  const plain = createServer({ ...httpOptions(t), requestTimeout: Math.min(t.requestMs, 10_000) }, redirect);
  plain.maxConnections = config.MAX_CONNECTIONS;
  plain.on('clientError', clientErrorHandler(logDeps, lastResponse));
  plain.on('connect', connectHandler(logDeps, lastResponse));
  plain.on('checkExpectation', redirect);
  servers.push(plain);
  const port = await listen(plain, config.HTTP_REDIRECT_PORT, config.HOST, 'HOST / HTTP_REDIRECT_PORT');
  return `http://${urlHost(config.HOST)}:${port}`;
}

/** The METRICS_PORT listener (GET /metrics), when set: its URL. */
export async function metricsListener(
  config: Config,
  metrics: Metrics,
  servers: Server[],
): Promise<string | undefined> {
  if (config.METRICS_PORT === undefined) return undefined;
  const m = serveMetrics(metrics.registry);
  servers.push(m);
  const port = await listen(m, config.METRICS_PORT, config.METRICS_HOST, 'METRICS_HOST / METRICS_PORT');
  return `http://${urlHost(config.METRICS_HOST)}:${port}`;
}
