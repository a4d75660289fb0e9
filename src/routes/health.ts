// GET /livez and /readyz (public, not part of the API's description): for supervisors and load balancers.
import type { ServerResponse } from 'node:http';
import * as v from 'valibot';
import { sendJson } from '../http/respond.ts';
import { type AppDeps, definePublicRoute } from '../http/route.ts';
import { staleness } from '../snapshot/follow.ts';
import { J } from './support/fields.ts';

/** What /readyz says: why it is (not) ready, what it serves, and the last replacement file it refused. */
export function readiness(deps: AppDeps, now = Date.now()) {
  const snap = deps.snapshots.peek();
  const keys = deps.keysReady ? deps.keysReady() : true;
  const draining = deps.lifecycle?.draining === true;
  const damaged = deps.snapshots.damaged !== null;
  const persisted = deps.keysPersistence?.();
  // The first reason not to take traffic, in this order.
  const reasons: [boolean, string][] = [
    [draining, 'draining'],
    [!snap, 'no_snapshot'],
    [damaged, 'snapshot_damaged'],
    // A shared key store (Redis) down makes no replica unready: it is in the body, and keyed requests answer 503.
    [!keys && deps.keysShared !== true, 'key_store_unavailable'],
  ];
  const follow = deps.snapshots.follow;
  const stale = follow === null ? null : staleness(follow, now);
  // Stale (the publication expired, or following has not succeeded for a while) stays ready: old data beats none.
  const status = reasons.find(([holds]) => holds)?.[1] ?? (stale !== null ? 'stale' : 'ready');
  return {
    status,
    snapshot: snap
      ? {
          id: snap.meta.snapshot_id,
          built_at: snap.meta.built_at,
          age_seconds: Math.round((now - Date.parse(snap.meta.built_at)) / 1000),
          schema_version: snap.meta.schema_version,
        }
      : null,
    ...(damaged ? { damaged: deps.snapshots.damaged } : {}),
    key_store: keys ? 'ok' : 'unavailable',
    ...(persisted ? { key_store_persistence: persisted.persistence } : {}),
    candidate: deps.snapshots.candidate,
    path_refused: pathRefused(deps.snapshots, damaged),
    // A cluster's workers that have not confirmed the last switch yet (asked again, or being replaced): only then.
    ...(deps.snapshots.behind.length > 0 ? { workers_behind: deps.snapshots.behind } : {}),
    ...(follow !== null ? { follow: { ...follow, stale } } : {}),
    ...(persisted?.warning ? { warnings: [persisted.warning] } : {}),
  };
}

/** Why the file at SNAPSHOT_PATH is not the one served (refused or missing), in words that agree with the status. */
function pathRefused(snapshots: AppDeps['snapshots'], damaged: boolean): string | null {
  if (!snapshots.pathRefused) return null;
  const what = `the file at SNAPSHOT_PATH was ${snapshots.candidate?.state === 'missing' ? 'missing' : 'refused'} (${snapshots.candidate?.reason})`;
  // Damaged: the served file itself changed in place, so nothing valid is served until a good file is renamed in.
  if (damaged) return `${what}; data requests get 503 until a valid snapshot is renamed into place`;
  // Served on regardless (a restarted worker starts on the served snapshot): a new start would read this file.
  return `${what}; the snapshot above goes on serving, but a new start of the service would fail on this file`;
}

const noStore = (res: ServerResponse, status: number, body: unknown) =>
  sendJson(res, status, body, { 'Cache-Control': 'no-store' });

export const routes = () => [
  definePublicRoute({
    path: '/livez',
    tag: 'Service',
    kind: 'raw',
    public: true,
    hidden: true,
    query: v.strictObject({}),
    item: J.object({ status: { type: 'string', const: 'ok' } }),
    summary: 'The process is up (for a supervisor: restart it when this fails)',
    handle: ({ res }) => noStore(res, 200, { status: 'ok' }),
  }),
  definePublicRoute({
    path: '/readyz',
    tag: 'Service',
    kind: 'raw',
    public: true,
    hidden: true,
    query: v.strictObject({}),
    item: { type: 'object' },
    summary:
      'Ready for traffic (for a load balancer): a valid snapshot is open, its own key store file is readable, not draining (stale data answers 200 with status stale)',
    handle: ({ res, deps }) => {
      const r = readiness(deps);
      noStore(res, r.status === 'ready' || r.status === 'stale' ? 200 : 503, r);
    },
  }),
];
