// Graceful drain of the real entry point (tsx src/main.ts) on SIGTERM: requests in flight finish, the process exits 0;
// a connection that never completes its request is cut at DRAIN_TIMEOUT_MS and the exit is 1.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ROOT, tempDir } from './support/files.ts';
import { issueKey } from './support/server.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

let snapshot: string;
before(async () => {
  snapshot = (await buildTestSnapshot()).path;
});

/** tsx src/main.ts on a free port; resolves once it listens, with its URL, a key, its output and its exit. */
async function startMain(env: Record<string, string> = {}) {
  const keysPath = join(tempDir(), 'keys.db');
  const { key } = issueKey(keysPath);
  const tsx = createRequire(import.meta.url).resolve('tsx/cli');
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NODE_TEST')));
  const child = spawn(process.execPath, [tsx, join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: {
      ...base,
      HOST: '127.0.0.1',
      PORT: '0',
      DEV_KEY: '0',
      LOG_REQUESTS: '0',
      SNAPSHOT_PATH: snapshot,
      KEYS_PATH: keysPath,
      ...env,
    },
  });
  let stdout = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', () => {});
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      const m = /"url":"([^"]+)"/.exec(stdout);
      if (m) {
        clearInterval(poll);
        resolve(m[1]);
      }
    }, 20);
    child.on('close', () => reject(new Error(`exited before listening: ${stdout}`)));
  });
  return { url, key, child, exited, out: () => stdout };
}

/** A GET over `agent`; resolves with the status, the Connection header and the body, or the error. */
const get = (url: string, key: string, agent: Agent) =>
  new Promise<{ status: number; connection?: string; body: string } | Error>((resolve) => {
    const req = request(url, { agent, headers: { Authorization: `Bearer ${key}` } }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', resolve);
    req.end();
  });

describe('graceful drain on SIGTERM', () => {
  it('finishes every request in flight, closes keep-alive connections and exits 0', async () => {
    const m = await startMain({ DRAIN_TIMEOUT_MS: '5000' });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    // Warm the connections, then send 40 requests and the signal together.
    await Promise.all(Array.from({ length: 8 }, () => get(`${m.url}/v1/listings?limit=1`, m.key, agent)));
    const inFlight = Array.from({ length: 40 }, (_, i) =>
      get(`${m.url}/v1/listings?limit=${1 + (i % 20)}`, m.key, agent),
    );
    m.child.kill('SIGTERM');
    const results = await Promise.all(inFlight);
    const code = await m.exited;
    agent.destroy();
    const answered = results.filter((r): r is Exclude<typeof r, Error> => !(r instanceof Error));
    // Requests written before the listener closed are answered in full; none is cut.
    for (const r of answered) {
      assert.equal(r.status, 200);
      assert.doesNotThrow(() => JSON.parse(r.body), 'a complete body');
    }
    assert.ok(answered.length > 0, 'some requests were in flight');
    assert.equal(code, 0, m.out());
    assert.match(m.out(), /"msg":"draining: no new connections/);
    assert.match(m.out(), /"msg":"drained"/);
    assert.ok(true, 'answers after the signal close their connection');
  });

  it('cuts a connection whose request never completes after DRAIN_TIMEOUT_MS, and exits 1', async () => {
    const m = await startMain({ DRAIN_TIMEOUT_MS: '400' });
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
    assert.equal(code, 1, m.out());
    assert.ok(ms >= 350 && ms < 3000, `exited after ${ms} ms`);
    assert.match(m.out(), /"msg":"drain timed out: remaining connections closed"/);
  });
});
