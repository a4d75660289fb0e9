// The messages between a cluster's primary and its workers (node:cluster IPC, JSON), each tagged `nlr`.

import type { LimitAnswer, LimitOp } from '../access/limits-ipc.ts';
import type { FollowState } from '../snapshot/follow.ts';
import type { OwnerState } from '../snapshot/owner.ts';
import type { ServedFile } from '../snapshot/served-file.ts';
import type { MetricsAnswer, MetricsRequest } from './cluster-metrics.ts';

/** The environment variable that tells a forked process it is a worker, and which slot it fills. */
export const SLOT_ENV = 'NLR_WORKER_SLOT';
/** The snapshot file a worker starts on (JSON ServedFile): the one the primary serves, never the path's current file. */
export const SERVED_ENV = 'NLR_SERVED_SNAPSHOT';

/** Worker → primary. */
export type ToPrimary =
  /** Listening; what the primary's "listening" line reports. */
  /** snapshotId null: following a publication, none served yet. */
  | { nlr: 'ready'; url: string; redirectUrl?: string; snapshotId: string | null }
  /** Start-up failed: the one-line reason (the primary prints it once, not once per worker). */
  | { nlr: 'failed'; message: string }
  | { nlr: 'limits'; ops: LimitOp[] }
  /** A candidate opened and every statement prepared (its snapshot id), or why not. */
  | { nlr: 'snapshot-prepared'; gen: number; snapshotId?: string; error?: string }
  /** Switched: serving the candidate, `lateMs` after the instant it was given (0: at it). */
  | { nlr: 'snapshot-serving'; gen: number; snapshotId: string; lateMs: number }
  | MetricsAnswer;

/** Primary → worker. */
export type ToWorker =
  | { nlr: 'limits'; answers: LimitAnswer[] }
  | MetricsRequest
  /** SIGTERM/SIGINT reached the primary: drain and exit. */
  | { nlr: 'drain' }
  /** Open this checked candidate and prepare every statement (answer snapshot-prepared). */
  | { nlr: 'snapshot-prepare'; gen: number; served: ServedFile }
  /** Serve the prepared candidate from `at` (Date.now() ms) on. */
  | { nlr: 'snapshot-switch'; gen: number; at: number }
  /** Another worker could not prepare it: close it. */
  | { nlr: 'snapshot-drop'; gen: number }
  /** The owner's word on the path and the served file (for /readyz and /metrics). */
  | { nlr: 'snapshot-state'; state: OwnerState; refused: boolean }
  /** The primary's follower's state (SNAPSHOT_FOLLOW), for /readyz. */
  | { nlr: 'follow-state'; state: FollowState };

export const isMessage = (m: unknown): m is { nlr: string } =>
  typeof m === 'object' && m !== null && typeof (m as { nlr?: unknown }).nlr === 'string';
