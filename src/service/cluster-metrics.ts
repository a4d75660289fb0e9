// /metrics of a cluster: the primary asks every ready worker for its registry over IPC and merges them with its
// own (worker restarts) through prom-client's AggregatorRegistry; each worker's series carry its `worker` label.
import type { Worker } from 'node:cluster';
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';
import { followMetrics } from '../http/follow-metrics.ts';
import type { FollowState } from '../snapshot/follow.ts';

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** Primary → worker: send your metrics; worker → primary: here they are (or null when collecting failed). */
export type MetricsRequest = { nlr: 'metrics'; id: number };
export type MetricsAnswer = { nlr: 'metrics'; id: number; metrics: MetricsJson | null };

/** How long a scrape waits for the workers; a worker that has not answered by then is left out of it. */
const SCRAPE_TIMEOUT_MS = 2000;

/** A worker's answer to the primary's request: its registry as JSON (the default label `worker` included). */
export function answerMetrics(registry: Registry, req: MetricsRequest, send: (m: MetricsAnswer) => void): void {
  registry.getMetricsAsJSON().then(
    (metrics) => send({ nlr: 'metrics', id: req.id, metrics: metrics as MetricsJson }),
    () => send({ nlr: 'metrics', id: req.id, metrics: null }),
  );
}

export function clusterMetrics(workers: () => Worker[], behind: () => number, follow?: () => FollowState | null) {
  const registry = new Registry();
  const registers = [registry];
  if (follow) followMetrics(registry, follow);
  const restarts = new Counter({
    name: 'nlr_cluster_worker_restarts_total',
    help: 'Workers started again after one died.',
    registers,
  });
  const replacements = new Counter({
    name: 'nlr_cluster_worker_replacements_total',
    help: 'Workers replaced because they did not confirm a snapshot switch (asked twice).',
    registers,
  });
  const drainsCut = new Counter({
    name: 'nlr_cluster_worker_drains_cut_total',
    help: 'Workers taken out of the cluster (replaced) whose drain did not finish within DRAIN_TIMEOUT_MS: requests they still held were cut.',
    registers,
  });
  new Gauge({
    name: 'nlr_cluster_workers_behind',
    help: 'Workers still serving another snapshot than the one every worker was told to switch to, from 1 s after the instant until they confirm or their replacement is gone.',
    registers,
    collect() {
      this.set(behind());
    },
  });
  new Gauge({
    name: 'nlr_cluster_workers',
    help: 'Workers ready and serving.',
    registers,
    collect() {
      this.set(workers().length);
    },
  });
  new Gauge({
    name: 'nlr_cluster_scrape_workers_missing',
    help: 'Workers that did not answer this scrape in time (their series are missing from it).',
    registers,
    collect() {
      this.set(missing);
    },
  });
  let missing = 0;
  let nextId = 1;
  const waiting = new Map<number, { got: MetricsJson[]; left: number; done: () => void }>();

  /** All ready workers' metrics and the primary's own, merged (series are told apart by their `worker` label). */
  async function metrics(): Promise<string> {
    const id = nextId++;
    const ready = workers();
    const got: MetricsJson[] = [];
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, SCRAPE_TIMEOUT_MS);
      const entry = { got, left: ready.length, done: finish };
      function finish() {
        clearTimeout(timer);
        waiting.delete(id);
        missing = entry.left;
        resolve();
      }
      waiting.set(id, entry);
      for (const w of ready) {
        try {
          w.send({ nlr: 'metrics', id } satisfies MetricsRequest);
        } catch {
          /* a worker whose channel just closed: missing from this scrape */
        }
      }
      if (ready.length === 0) finish();
    });
    got.push((await registry.getMetricsAsJSON()) as MetricsJson);
    return AggregatorRegistry.aggregate(got).metrics();
  }

  return {
    restarts,
    replacements,
    drainsCut,
    /** A worker's answer (see answerMetrics). */
    answer(m: MetricsAnswer) {
      const entry = waiting.get(m.id);
      if (entry === undefined) return;
      if (m.metrics !== null) entry.got.push(m.metrics);
      if (--entry.left === 0) entry.done();
    },
    source: { metrics, contentType: registry.contentType },
  };
}
