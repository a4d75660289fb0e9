// Benchmark-only: the real service (loadConfig(process.env) → startService, the wiring src/main.ts uses) plus an
// event-loop delay monitor that bench/serve.ts drives over stdin, so the server itself needs no opt-in.
//   stdin  "start\n"  reset the window histogram and start sampling            → stdout {"eld":"started"}
//   stdin  "stop\n"   stop sampling; report this window and all windows so far  → stdout {"eld":"stopped",window,overall,memory}
//   SIGUSR2           report without changing anything                         → stdout {"eld":"report",…}
// Only this protocol goes to stdout; the service's log lines go to stderr, its request lines (LOG_REQUESTS=1) through
// the service's buffered request log into /dev/null: formatted and written as deployed, without the bench reading them.
//
// The delay is sampled with a timer chain (how late a RESOLUTION_MS timer fires), not monitorEventLoopDelay: that
// monitor keeps its last timestamp across disable()/enable(), so the first sample of every window would count the
// whole idle gap before it. Each window starts with a fresh timestamp here.
import { createWriteStream } from 'node:fs';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { loadConfig } from '../src/config.ts';
import { stdoutLog } from '../src/log.ts';
import { startService } from '../src/service/server.ts';

const RESOLUTION_MS = 5;
const windowHist = createHistogram();
const overall = createHistogram();
let timer: NodeJS.Timeout | null = null;
let last = 0n;
function tick() {
  const now = process.hrtime.bigint();
  const late = Number(now - last) - RESOLUTION_MS * 1e6;
  const ns = Math.max(1, late);
  windowHist.record(ns);
  overall.record(ns);
  last = now;
  timer = setTimeout(tick, RESOLUTION_MS);
}
const startSampling = () => {
  if (timer) clearTimeout(timer);
  last = process.hrtime.bigint();
  timer = setTimeout(tick, RESOLUTION_MS);
};
const stopSampling = () => {
  if (timer) clearTimeout(timer);
  timer = null;
};

const ms = (ns: number) => +(ns / 1e6).toFixed(3);
const summary = (h: RecordableHistogram) => ({
  samples: h.count,
  mean_ms: h.count ? ms(h.mean) : null,
  p50_ms: h.count ? ms(h.percentile(50)) : null,
  p99_ms: h.count ? ms(h.percentile(99)) : null,
  max_ms: h.count ? ms(h.max) : null,
});
const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);
const report = (eld: string) =>
  out({
    eld,
    resolution_ms: RESOLUTION_MS,
    window: summary(windowHist),
    overall: summary(overall),
    memory: process.memoryUsage(),
  });

const log = (line: Record<string, unknown>) =>
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);
const { requestLog } = stdoutLog(createWriteStream('/dev/null'));
const service = await startService(loadConfig(process.env), { log, requestLog });
out({ ready: service.url, pid: process.pid });

createInterface({ input: process.stdin }).on('line', (cmd) => {
  if (cmd === 'start') {
    windowHist.reset();
    startSampling();
    out({ eld: 'started' });
  } else if (cmd === 'stop') {
    stopSampling();
    report('stopped');
  }
});
process.on('SIGUSR2', () => report('report'));
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  stopSampling();
  report('exit');
  setTimeout(() => process.exit(0), 2000).unref();
  service.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop); // the bench went away: never outlive it
