// npm run bench:floor [-- --seconds 3 --spins 0,10,20,40,80 --connections 16]
//
// How much room the HTTP ratio targets of `npm run bench` leave on this machine. A bare node:http server (the
// shape of bench/reference-server.ts) answers a fixed 1.4 KB JSON body after spending SPIN µs of CPU per request
// in a busy loop, and autocannon drives it over loopback as `npm run bench` does. Printed: req/s per SPIN and the
// ratio to SPIN 0. On a small machine the ratio falls faster than the CPU time alone explains: autocannon shares
// the cores, so a slower server lets it fall idle, and each response then also pays for waking it.
// Bounded: each run lasts --seconds (plus a one-second warm-up); the servers are children killed after their run.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { fmt, lpad, pad } from './common.ts';

const HEADERS = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'private, no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Request-Id': '5f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f',
  'RateLimit-Policy': '"per-key";q=600;w=60',
  RateLimit: '"per-key";r=599;t=60',
};
const BODY = Buffer.from(
  JSON.stringify({
    data: { id: 'lst_0000001', description: 'x'.repeat(1200) },
    meta: { locale: 'en', request_id: '5f0c1d2e' },
  }),
);

function child(spinUs: number) {
  const server = createServer((_req, res) => {
    const until = process.hrtime.bigint() + BigInt(spinUs * 1000);
    while (process.hrtime.bigint() < until);
    res.writeHead(200, { ...HEADERS, 'Content-Length': BODY.length });
    res.end(BODY);
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () =>
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`),
  );
  process.stdin.on('end', () => process.exit(0)); // never outlive the bench
  process.stdin.resume();
}

function start(spinUs: number): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', String(spinUs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill();
      reject(new Error('server did not start within 10 s'));
    }, 10_000);
    proc.stdout!.once('data', (d: Buffer) => {
      clearTimeout(timer);
      resolve({ proc, port: JSON.parse(d.toString()).port });
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code})`));
    });
  });
}

const load = (port: number, seconds: number, connections: number) =>
  new Promise<number>((resolve, reject) => {
    autocannon({ url: `http://127.0.0.1:${port}/`, connections, duration: seconds }, (err, r) =>
      err ? reject(err) : resolve(r.requests.total / seconds),
    );
  });

async function main() {
  const { values: a } = parseArgs({
    options: {
      child: { type: 'string' },
      seconds: { type: 'string', default: '3' },
      spins: { type: 'string', default: '0,10,20,40,80' },
      connections: { type: 'string', default: '16' },
    },
  });
  if (a.child !== undefined) return child(Number(a.child));
  const seconds = Number(a.seconds),
    connections = Number(a.connections);
  const spins = a.spins!.split(',').map(Number);
  if (!(seconds > 0 && seconds <= 60) || !(connections > 0) || spins.some((s) => !(s >= 0 && s <= 10_000)))
    throw new Error('bad arguments: --seconds 1-60, --connections > 0, --spins µs values 0-10000');
  console.log(
    `bare node:http server, ${BODY.length} B body, SPIN µs of CPU per request; autocannon ${connections} connections, ${seconds} s per run, loopback`,
  );
  console.log(`${pad('SPIN µs', 9)} ${lpad('req/s', 8)} ${lpad('ratio', 6)}`);
  let base = 0;
  for (const spin of spins) {
    const { proc, port } = await start(spin);
    try {
      await load(port, 1, connections);
      const rps = await load(port, seconds, connections);
      if (base === 0) base = rps;
      console.log(`${pad(String(spin), 9)} ${lpad(rps.toFixed(0), 8)} ${lpad(fmt(rps / base), 6)}`);
    } finally {
      proc.stdin!.end();
      proc.kill();
    }
  }
}

main().catch((e) => {
  console.error(`bench:floor failed: ${(e as Error).message}`);
  process.exit(1);
});
