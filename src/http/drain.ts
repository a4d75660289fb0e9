// Graceful drain (SIGTERM/SIGINT): not ready at once, no new connections, in-flight requests finish, then close.
import type { Server } from 'node:http';
import type { Log } from '../log.ts';
import type { Lifecycle } from './route.ts';

/** How often connections that became idle during the drain are closed. */
const IDLE_SWEEP_MS = 50;

export interface DrainResult {
  /** Requests being answered when the drain began. */
  inFlightAtStart: number;
  /** The timeout came first: the remaining connections were destroyed. */
  timedOut: boolean;
  /** Requests still unanswered when the timeout cut them. */
  cut: number;
  ms: number;
}

/**
 * Drains the listeners: /readyz answers 503 from now on (lifecycle.draining), the listeners stop accepting,
 * idle keep-alive connections close now, and every answer from now on carries `Connection: close`, so
 * busy connections close after their response. Resolves when every connection has closed, or after
 * `timeoutMs`, when the remaining connections are destroyed.
 */
export function drain(servers: Server[], lifecycle: Lifecycle, timeoutMs: number, log: Log): Promise<DrainResult> {
  const started = Date.now();
  lifecycle.draining = true;
  const inFlightAtStart = lifecycle.inFlight;
  log({
    level: 'info',
    msg: 'draining: no new connections; waiting for requests in flight',
    in_flight: inFlightAtStart,
  });
  return new Promise((resolve) => {
    let open = servers.length;
    const timer = setTimeout(() => {
      const cut = lifecycle.inFlight;
      for (const s of servers) s.closeAllConnections();
      finish(true, cut);
    }, timeoutMs);
    // A request that was waiting (for its admission by the cluster's primary or Redis, for compression) when
    // the drain began may answer later on a kept-alive connection: such connections are closed once idle.
    const idle = setInterval(() => {
      for (const s of servers) s.closeIdleConnections();
    }, IDLE_SWEEP_MS);
    let done = false;
    const finish = (timedOut: boolean, cut: number) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(idle);
      const result = { inFlightAtStart, timedOut, cut, ms: Date.now() - started };
      log({
        level: timedOut ? 'warn' : 'info',
        msg: timedOut ? 'drain timed out: remaining connections closed' : 'drained',
        in_flight_at_start: inFlightAtStart,
        cut,
        ms: result.ms,
      });
      resolve(result);
    };
    for (const s of servers) {
      // close() stops accepting and calls back once every connection has ended.
      s.close(() => {
        if (--open === 0) finish(false, 0);
      });
      s.closeIdleConnections();
    }
    if (servers.length === 0) finish(false, 0);
  });
}
