// The messages between a cluster's primary and its workers (node:cluster IPC, JSON), each tagged `nlr`.
import type { LimitAnswer, LimitOp } from '../access/limits-ipc.ts';
import type { MetricsAnswer, MetricsRequest } from './cluster-metrics.ts';

/** The environment variable that tells a forked process it is a worker, and which slot it fills. */
export const SLOT_ENV = 'NLR_WORKER_SLOT';

/** Worker → primary. */
export type ToPrimary =
  /** Listening; what the primary's "listening" line reports. */
  | { nlr: 'ready'; url: string; redirectUrl?: string; snapshotId: string }
  /** Start-up failed: the one-line reason (the primary prints it once, not once per worker). */
  | { nlr: 'failed'; message: string }
  | { nlr: 'limits'; ops: LimitOp[] }
  | MetricsAnswer;

/** Primary → worker. */
export type ToWorker =
  | { nlr: 'limits'; answers: LimitAnswer[] }
  | MetricsRequest
  /** SIGTERM/SIGINT reached the primary: drain and exit. */
  | { nlr: 'drain' }
  /** SIGHUP reached the primary: look at the snapshot file now. */
  | { nlr: 'refresh' };

export const isMessage = (m: unknown): m is { nlr: string } =>
  typeof m === 'object' && m !== null && typeof (m as { nlr?: unknown }).nlr === 'string';
