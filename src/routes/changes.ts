// /v1/changes: the records added, removed or changed since an earlier snapshot, from the change history the compiler
// recorded (build-snapshot --previous), so a client that keeps a copy catches up without walking every collection.
import type { Database, Statement } from 'better-sqlite3';
import * as v from 'valibot';
import { CHANGE_HISTORY_STEPS, CHANGE_KINDS } from '../../snapshot-format/changes.ts';
import { RESOURCES } from '../../snapshot-format/resources.ts';
import { badRequest } from '../http/errors.ts';
import { cursor, documented, limit, oneOf, str } from '../http/params.ts';
import { collection } from '../http/respond.ts';
import { type Ctx, defineRoute } from '../http/route.ts';
import { J } from './support/fields.ts';
import { keysetPosition } from './support/paging.ts';

const SNAPSHOT_EXAMPLE = 'snap_6a1f0c9e2b7d4e8a9c3f5d21';

// limit first: a value outside its rule is named before a missing since (the OpenAPI document's 400 example).
const Query = v.strictObject({
  limit: limit(100, 20),
  cursor,
  since: documented(
    str(1, 120),
    "The snapshot your copy was taken from: the X-Snapshot-Id of the answers you copied, or the meta.snapshot_id of the last feed you applied. Unknown, or older than this snapshot's history, it is a 400: walk the collections in full instead.",
    SNAPSHOT_EXAMPLE,
  ),
  resource: documented(
    v.optional(oneOf(RESOURCES)),
    'Only the changes of this resource (the name of its table: listings, owners, internet_plans, …).',
    'listings',
  ),
});
type Query = v.InferOutput<typeof Query>;

/** A change kind's code in change_log's order (step * 4 + code: the first and last change of a record are its min and max). */
const CODE = `(CASE change WHEN 'added' THEN 1 WHEN 'removed' THEN 2 ELSE 3 END)`;
// Collapsed over several steps: the copy had the record unless the first change added it, the snapshot has it
// unless the last removed it (snapshot-format/changes.ts collapse(), the same rule).
const COLLAPSED = `CASE WHEN min(step * 4 + ${CODE}) % 4 <> 1
    THEN (CASE WHEN max(step * 4 + ${CODE}) % 4 <> 2 THEN 'changed' ELSE 'removed' END)
  WHEN max(step * 4 + ${CODE}) % 4 <> 2 THEN 'added' END`;

/**
 * The page's statement: one step (the client is one snapshot behind) is a range of change_log's primary key; more
 * steps walk the (resource, id, step) index and collapse each record's changes. The position is the row value
 * (resource, id), so a page starts where the last one ended; the page size is a literal (see small-search.ts).
 */
export function pageSql(oneStep: boolean, byResource: boolean, n: number): string {
  const where = [
    oneStep ? 'step = @step' : 'step >= @step',
    byResource ? 'resource = @resource AND id > @id' : '(resource, id) > (@resource, @id)',
  ].join(' AND ');
  return oneStep
    ? `SELECT resource, id, change FROM change_log WHERE ${where} ORDER BY resource, id LIMIT ${n}`
    : `SELECT resource, id, ${COLLAPSED} AS collapsed FROM change_log INDEXED BY change_log_record WHERE ${where}
       GROUP BY resource, id HAVING collapsed IS NOT NULL ORDER BY resource, id LIMIT ${n}`;
}

export function prepare(db: Database) {
  const history = db.prepare('SELECT step, snapshot_id FROM change_history ORDER BY step').raw().all() as [
    number,
    string,
  ][];
  // The latest step of each snapshot id (an id may appear twice when a source changed and changed back).
  const stepOf = new Map(history.map(([step, id]) => [id, step]));
  const statements = new Map<string, Statement>();
  return {
    stepOf,
    steps: history.length,
    oldest: history[0]?.[1] ?? null,
    /** Up to n changes after the position, in (resource, id) order, from `step` on. */
    page(step: number, after: { resource: string; id: string }, byResource: boolean, n: number) {
      const oneStep = step === history.length;
      const key = `${oneStep}:${byResource}:${n}`;
      let st = statements.get(key);
      if (st === undefined) statements.set(key, (st = db.prepare(pageSql(oneStep, byResource, n)).raw()));
      return st.all({ step, ...after }) as [string, string, string][];
    },
  };
}

/** The cursor's position: resource and id joined by a slash (a resource's name has none). */
const positionOf = (after: string | null, resource: string | undefined) => {
  if (after === null) return { resource: resource ?? '', id: '' };
  const slash = after.indexOf('/');
  return { resource: after.slice(0, slash), id: after.slice(slash + 1) };
};

function sinceUnknown(since: string, st: ReturnType<typeof prepare>) {
  const holds =
    st.steps === 0
      ? 'it holds none: it was built without a previous snapshot'
      : `it holds the last ${st.steps} snapshot${st.steps === 1 ? '' : 's'} before this one, the oldest ${st.oldest}`;
  return badRequest(
    `Parameter "since" (${since}) is not a snapshot in this snapshot's change history (${holds}): walk the collections in full, then ask for the changes since this snapshot's id (meta.snapshot_id).`,
  );
}

function changesPage(ctx: Ctx<Query>) {
  const st = ctx.snap.use(prepare);
  const served = ctx.snap.meta.snapshot_id;
  const meta = { ...ctx.meta, snapshot_id: served };
  // The cursor is bound to the served snapshot too: after a swap the feed is another one (since → the new snapshot),
  // and a walk continued in it would skip what the new feed holds before the cursor; its 400 restarts the walk.
  const position = keysetPosition({ ...ctx, query: { ...ctx.query, snapshot: served } as Query });
  const { since, resource, limit: n } = ctx.query;
  if (since === served) return collection([], position.pagination(null), meta);
  const step = st.stepOf.get(since);
  if (step === undefined) throw sinceUnknown(since, st);
  const rows = st.page(step, positionOf(position.after, resource), resource !== undefined, n + 1);
  const more = rows.length > n;
  if (more) rows.length = n;
  const last = rows[rows.length - 1];
  const items = rows.map(([resource, id, change]) => ({ resource, id, change }));
  return collection(items, position.pagination(more ? `${last[0]}/${last[1]}` : null), meta);
}

const CHANGE = J.object(
  {
    resource: { type: 'string', enum: RESOURCES, description: 'The resource: the path family that serves the record.' },
    id: { type: 'string', description: "The record's id, as that resource's id field shows it." },
    change: {
      type: 'string',
      enum: CHANGE_KINDS,
      description:
        'added: public now and not in your copy; removed: in your copy and no longer public (its detail is a 404); changed: some field differs in at least one locale (fetch it again).',
    },
  },
  {
    examples: [
      { resource: 'listings', id: 'lst_000123', change: 'changed' },
      { resource: 'listings', id: 'lst_000456', change: 'added' },
      { resource: 'owners', id: 'own_0042', change: 'removed' },
    ],
  },
);

export const routes = () => [
  defineRoute<Query>({
    path: '/v1/changes',
    tag: 'Changes',
    kind: 'collection',
    query: Query,
    item: CHANGE,
    meta: {
      schema: {
        snapshot_id: {
          type: 'string',
          description:
            'The snapshot this answer brings a copy to (as X-Snapshot-Id): keep it, and pass it as since next time.',
        },
      },
      example: { snapshot_id: SNAPSHOT_EXAMPLE },
    },
    summary: 'What changed since an earlier snapshot',
    description: `The records of every resource that were added, removed or changed between the snapshot named by since and the one served (meta.snapshot_id), in ascending order of resource, then id; one item per record, its changes over several snapshots taken together (added then removed is nothing, removed then added is changed). Apply them to your copy: drop the removed, fetch the added and changed again (every locale you keep). since equal to the served snapshot is an empty page. The history holds the last ${CHANGE_HISTORY_STEPS} snapshots at most; since older than that, or unknown, is a 400 that names the oldest one held.`,
    handle: changesPage,
  }),
];
