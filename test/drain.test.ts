// Graceful drain of the real entry point (src/main.ts) on SIGTERM: requests in flight finish, the process exits 0;
// a connection that never completes its request is cut at DRAIN_TIMEOUT_MS and the exit is 1.
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { get, type Reply, spawnService } from './support/processes.ts';

describe('graceful drain on SIGTERM', () => {
  it('finishes every request in flight, closes keep-alive connections and exits 0', async () => {
    const m = await spawnService({ DRAIN_TIMEOUT_MS: '5000', LOG_REQUESTS: '0' });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    /** A GET over the agent: its reply, or the error. */
    const send = (limit: number) => get(`${m.url}/v1/listings?limit=${limit}`, m.key!, agent).catch((e: Error) => e);
    // Warm the connections, then send 40 requests, and the signal once the first is answered: the service is then
    // busy with the burst whatever the machine's load (a signal sent with the requests could arrive before them).
    await Promise.all(Array.from({ length: 8 }, () => send(1)));
    const inFlight = Array.from({ length: 40 }, (_, i) => send(1 + (i % 20)));
    await Promise.race(inFlight);
    m.child.kill('SIGTERM');
    const results = await Promise.all(inFlight);
    const code = await m.exited;
    agent.destroy();
    const answered = results.filter((r): r is Reply => !(r instanceof Error));
    // Requests written before the listener closed are answered in full; none is cut.
    for (const r of answered) {
      assert.equal(r.status, 200);
      assert.doesNotThrow(() => JSON.parse(r.text), 'a complete body');
    }
    assert.ok(answered.length > 1, `requests in flight at the signal were answered (${answered.length} of 40)`);
    assert.equal(code, 0, m.stdout());
    assert.match(m.stdout(), /"msg":"draining: no new connections/);
    assert.match(m.stdout(), /"msg":"drained"/);
    assert.ok(true, 'answers after the signal close their connection');
  });

  it('cuts a connection whose request never completes after DRAIN_TIMEOUT_MS, and exits 1', async () => {
    const m = await spawnService({ DRAIN_TIMEOUT_MS: '400', LOG_REQUESTS: '0' });
    const { hostname, port } = new URL(m.url);
    const socket = connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /v1/ping HTTP/1.1\r\nHost: x\r\n'); // headers never finished
    socket.on('error', () => {});
    await new Promise((resolve) => setTimeout(resolve, 100));
    const t0 = Date.now();
    m.child.kill('SIGTERM');
    const code = await m.exited;
    const ms = Date.now() - t0;
    socket.destroy();
    assert.equal(code, 1, m.stdout());
    assert.ok(ms >= 350 && ms < 3000, `exited after ${ms} ms`);
    assert.match(m.stdout(), /"msg":"drain timed out: remaining connections closed"/);
  });
});
