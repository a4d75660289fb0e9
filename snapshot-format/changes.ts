// The change feed's contract: how many steps a snapshot's history keeps, the kinds of change, and how changes over
// several steps collapse into one per record (the compiler writes the steps; the server collapses them in SQL by
// the same rule, src/routes/changes.ts).

/**
 * Steps of history a snapshot keeps: a client up to this many snapshots behind catches up from the feed; one
 * further behind walks the collections again. At ~1 % of listings changed per snapshot, 30 steps at 1M listings
 * are ~225,000 rows (~10 MB) of a ~1.3 GB file.
 */
export const CHANGE_HISTORY_STEPS = 30;

export const CHANGE_KINDS = ['added', 'removed', 'changed'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/**
 * One record's changes over consecutive steps, oldest first, as one change (null: nothing to do). Only the record's
 * state before the first step and after the last matter: the first change says whether the client's copy had it
 * (anything but 'added'), the last whether the snapshot has it (anything but 'removed'). So added then removed is
 * nothing, added then changed is added, removed then added is changed, changed then removed is removed.
 */
export function collapse(first: ChangeKind, last: ChangeKind): ChangeKind | null {
  const before = first !== 'added';
  const after = last !== 'removed';
  if (before && after) return 'changed';
  if (before) return 'removed';
  if (after) return 'added';
  return null;
}
