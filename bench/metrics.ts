// npm run bench:metrics [-- --n 2000000]: CPU per request of what the metrics add to a request (in flight up and down,
// the request counter and the latency histogram of one route and status), in process, against an empty loop.
import { parseArgs } from 'node:util';
import { createMetrics } from '../src/http/metrics.ts';

const { values } = parseArgs({ options: { n: { type: 'string', default: '2000000' } } });
const n = Number(values.n);
const metrics = createMetrics({ snapshot: () => null, keyReloads: () => 0 });
const ROUTES = ['/v1/listings', '/v1/listings/:id', '/v1/listings/stats', '/v1/owners'];

function cpuNsPerCall(body: (i: number) => void): number {
  for (let i = 0; i < 100_000; i++) body(i); // warm up
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) body(i);
  const t = process.cpuUsage(t0);
  return ((t.user + t.system) * 1000) / n;
}

let sink = 0;
const empty = cpuNsPerCall((i) => {
  sink += i & 1;
});
const withMetrics = cpuNsPerCall((i) => {
  metrics.inFlight.inc();
  const started = process.hrtime.bigint();
  metrics.inFlight.dec();
  metrics.request(ROUTES[i & 3], i % 50 === 0 ? 404 : 200, Number(process.hrtime.bigint() - started) / 1e9);
});
const text = await metrics.registry.metrics();
console.log(
  `metrics per request: ${((withMetrics - empty) / 1000).toFixed(2)} µs of CPU (n = ${n.toLocaleString('en')}; target < 5 µs)`,
);
console.log(
  `(empty loop ${empty.toFixed(1)} ns; exposition ${text.length.toLocaleString('en')} bytes; sink ${sink & 1})`,
);
