// The follow metrics (SNAPSHOT_FOLLOW), registered by the process that follows: a single process, or a cluster's
// primary. Every series carries the URL followed; none is exported when the process does not follow.
import { Counter, Gauge, type Registry } from 'prom-client';
import { type FollowState, staleness } from '../snapshot/follow.ts';
import type { RefusalReason } from '../snapshot/follow-state.ts';

const REASONS: RefusalReason[] = [
  'signature',
  'rollback',
  'schema',
  'size',
  'no_space',
  'manifest',
  'mismatch',
  'candidate',
  'expired',
];

const seconds = (iso: string | null | undefined) => (iso ? Date.parse(iso) / 1000 : Number.NaN);

/** Registers the follow series in `registry`, read from `state()` at scrape time. */
export function followMetrics(registry: Registry, state: () => FollowState | null, now: () => number = Date.now) {
  const registers = [registry];
  const gauge = (name: string, help: string, value: (s: FollowState) => number, labels: string[] = []) =>
    new Gauge({
      name,
      help,
      labelNames: ['url', ...labels],
      registers,
      collect() {
        this.reset();
        const s = state();
        if (s !== null) this.set({ url: s.url }, value(s));
      },
    });
  gauge('nlr_follow_last_check_time_seconds', 'When latest.json was last asked for (Unix time).', (s) =>
    seconds(s.last_check),
  );
  gauge(
    'nlr_follow_last_success_time_seconds',
    'When a check of latest.json last succeeded (Unix time; the start time until the first does).',
    (s) => seconds(s.last_success ?? s.started_at),
  );
  gauge(
    'nlr_follow_failing',
    'Whether the last check failed (1): latest.json or the publication could not be fetched.',
    (s) => (s.last_error === null ? 0 : 1),
  );
  gauge(
    'nlr_follow_stale',
    'Whether the served data is stale (1): its publication expired, or no check succeeded for SNAPSHOT_FOLLOW_STALE_MS.',
    (s) => (staleness(s, now()) === null ? 0 : 1),
  );
  gauge(
    'nlr_follow_expiry_time_seconds',
    "When the served publication's signed expiry passes (Unix time; NaN: none).",
    (s) => seconds(s.served?.expires_at),
  );
  new Gauge({
    name: 'nlr_follow_publication_info',
    help: 'The publication latest.json names (value 1) and whether it is the one served (served="1").',
    labelNames: ['url', 'snapshot_id', 'served'],
    registers,
    collect() {
      this.reset();
      const s = state();
      if (s?.publication)
        this.set(
          {
            url: s.url,
            snapshot_id: s.publication.snapshot_id,
            served: s.served?.snapshot_id === s.publication.snapshot_id ? '1' : '0',
          },
          1,
        );
    },
  });
  new Gauge({
    name: 'nlr_follow_refused',
    help: 'Whether the publication named now was refused (1), by reason; the served snapshot goes on.',
    labelNames: ['url', 'reason'],
    registers,
    collect() {
      this.reset();
      const s = state();
      if (s?.refused) this.set({ url: s.url, reason: s.refused.reason }, 1);
    },
  });
  new Counter({
    name: 'nlr_follow_refusals_total',
    help: 'Publications refused, by reason.',
    labelNames: ['url', 'reason'],
    registers,
    collect() {
      this.reset();
      const s = state();
      // Every reason from the start, at 0: an increase() over them has data before the first refusal.
      if (s !== null) for (const reason of REASONS) this.inc({ url: s.url, reason }, s.refusals[reason] ?? 0);
    },
  });
}
