// Prometheus metrics of one service (prom-client): requests, latency, in flight, the snapshot, swaps, refusals, keys.
import { createServer, type Server } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { FollowState } from '../snapshot/follow.ts';
import type { SnapshotMeta } from '../snapshot/source.ts';
import { VERSION } from '../version.ts';
import { followMetrics } from './follow-metrics.ts';

export interface MetricsSources {
  /** The snapshot being served, or null. */
  snapshot: () => SnapshotMeta | null;
  /** Whether data requests are answered from a snapshot (false: none was opened, or the served file was damaged). */
  serving?: () => boolean;
  /** Whether the file at SNAPSHOT_PATH is not the one served because it was refused or is missing. */
  pathRefused?: () => boolean;
  /** Key-store reloads so far. */
  keyReloads: () => number;
  /** Where the keys are (the file of KEYS_PATH, or Redis) and whether they can be read now; null before it exists. */
  keyStore?: () => { store: 'file' | 'redis'; readable: boolean } | null;
  /** Following a publication in this process: its state (a cluster's primary follows, not its workers). */
  follow?: () => FollowState | null;
  now?: () => number;
}

export interface Metrics {
  registry: Registry;
  /** One finished request: its route pattern (or a fixed name), status and duration in seconds. */
  request(route: string, status: number, seconds: number): void;
  inFlight: Gauge;
  swaps: Counter;
  refused: Counter;
  /** 429s by kind: 'key' (the key's limit) or 'address' (failed authentications). */
  limited: Counter<'kind'>;
  unauthorized: Counter;
}

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

type Registers = Registry[];

/** The service's metrics in a registry of their own, with the process's default ones. */
export function createMetrics(src: MetricsSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry }); // process CPU, memory, handles, GC, event-loop delay
  const registers = [registry];
  const requests = requestMetrics(registers);
  new Gauge({
    name: 'nlr_build_info',
    help: 'The release running (value 1), by version and Node version.',
    labelNames: ['version', 'node_version'],
    registers,
  }).set({ version: VERSION, node_version: process.version }, 1);
  const snapshot = snapshotMetrics(src, registers);
  const access = accessMetrics(src, registers);
  if (src.follow) followMetrics(registry, src.follow, src.now);
  const request = (route: string, status: number, seconds: number) => {
    requests.record(route, status, seconds);
    if (status === 401) access.unauthorized.inc();
  };
  return { registry, request, inFlight: requests.inFlight, ...snapshot, ...access };
}

/** Requests: answered by route and status, their durations, those in flight. */
function requestMetrics(registers: Registers) {
  const requests = new Counter({
    name: 'nlr_http_requests_total',
    help: 'Requests answered, by route pattern and status.',
    labelNames: ['route', 'status'],
    registers,
  });
  const duration = new Histogram({
    name: 'nlr_http_request_duration_seconds',
    help: 'Time from the request to the end of the response, by route pattern.',
    labelNames: ['route'],
    buckets: BUCKETS,
    registers,
  });
  const inFlight = new Gauge({ name: 'nlr_http_requests_in_flight', help: 'Requests being answered.', registers });
  // One child per label set, kept: labelling on every request would hash the labels each time.
  const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  const record = (route: string, status: number, seconds: number) => {
    const key = `${status} ${route}`;
    let c = children.get(key);
    if (c === undefined) {
      c = { count: requests.labels(route, String(status)), time: duration.labels(route) };
      children.set(key, c);
    }
    c.count.inc();
    c.time.observe(seconds);
  };
  return { record, inFlight };
}

/** The snapshot: which one is served, whether data requests are answered, its age, swaps and refused candidates. */
function snapshotMetrics(src: MetricsSources, registers: Registers) {
  const now = src.now ?? Date.now;
  new Gauge({
    name: 'nlr_snapshot_info',
    help: 'The snapshot being served (value 1), by id and schema version.',
    labelNames: ['snapshot_id', 'schema_version'],
    registers,
    collect() {
      this.reset();
      const m = src.snapshot();
      if (m) this.set({ snapshot_id: m.snapshot_id, schema_version: String(m.schema_version) }, 1);
    },
  });
  new Gauge({
    name: 'nlr_snapshot_serving',
    help: 'Whether data requests are answered (1) or get 503 (0: no snapshot, or the served file was changed in place).',
    registers,
    collect() {
      this.set((src.serving?.() ?? src.snapshot() !== null) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'nlr_snapshot_path_refused',
    help: 'Whether the file at SNAPSHOT_PATH was refused or is missing (1): the served snapshot goes on, but a new start of the service would fail there.',
    registers,
    collect() {
      this.set(src.pathRefused?.() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'nlr_snapshot_build_time_seconds',
    help: 'Build time of the snapshot being served, as a Unix time.',
    registers,
    collect() {
      const m = src.snapshot();
      this.set(m ? Date.parse(m.built_at) / 1000 : Number.NaN);
    },
  });
  new Gauge({
    name: 'nlr_snapshot_age_seconds',
    help: 'Seconds since the snapshot being served was built.',
    registers,
    collect() {
      const m = src.snapshot();
      this.set(m ? (now() - Date.parse(m.built_at)) / 1000 : Number.NaN);
    },
  });
  const swaps = new Counter({ name: 'nlr_snapshot_swaps_total', help: 'Snapshots swapped in.', registers });
  const refused = new Counter({
    name: 'nlr_snapshot_candidates_refused_total',
    help: 'Replacement snapshot files refused (the previous one kept serving).',
    registers,
  });
  return { swaps, refused };
}

/** Access: 429s by kind, 401s, and the key store (readable now, reloads so far). */
function accessMetrics(src: MetricsSources, registers: Registers) {
  const limited = new Counter({
    name: 'nlr_rate_limited_total',
    help: '429 answers, by kind: key (the key used up its limit) or address (too many failed authentications).',
    labelNames: ['kind'],
    registers,
  });
  // Both kinds from the start, at 0: a rate() over them has data before the first 429.
  for (const kind of ['key', 'address']) limited.inc({ kind }, 0);
  const unauthorized = new Counter({ name: 'nlr_unauthorized_total', help: '401 answers.', registers });
  new Gauge({
    name: 'nlr_key_store_readable',
    help: 'Whether the key store can be read now (1) or keyed requests get 503 (0), by store: file (KEYS_PATH) or redis.',
    labelNames: ['store'],
    registers,
    collect() {
      this.reset();
      const k = src.keyStore?.();
      if (k) this.set({ store: k.store }, k.readable ? 1 : 0);
    },
  });
  new Counter({
    name: 'nlr_key_store_reloads_total',
    help: 'Times the key store was read into memory.',
    registers,
    collect() {
      this.reset();
      this.inc(src.keyReloads());
    },
  });
  return { limited, unauthorized };
}

/**
 * The metrics listener: GET (or HEAD) /metrics in the Prometheus text format, nothing else (a registry, or a
 * cluster's merge). Another method on /metrics is a 405 naming the methods; another path a 404 naming the one path.
 */
export function serveMetrics(registry: Pick<Registry, 'metrics' | 'contentType'>): Server {
  return createServer((req, res) => {
    const text = (status: number, body: string, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers }).end(body);
    if (req.url?.split('?')[0] !== '/metrics') return text(404, 'not found: only /metrics is served here\n');
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head)
      return text(405, `method ${req.method} not allowed on /metrics: use GET\n`, { Allow: 'GET, HEAD' });
    registry.metrics().then(
      (body) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(head ? undefined : body),
      (e) => text(500, `metrics failed: ${(e as Error).message}\n`),
    );
  });
}
