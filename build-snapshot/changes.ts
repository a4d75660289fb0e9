// build-snapshot --previous OLD: the public records of each resource added, removed or changed since OLD (one step
// of the change feed), after OLD's own history carried forward, at most CHANGE_HISTORY_STEPS steps. OLD is attached
// to the new file's connection, so every comparison is a join on id inside SQLite, as `snapshot diff` does.
import Database from 'better-sqlite3';
import { CHANGE_HISTORY_STEPS } from '../snapshot-format/changes.ts';
import { COMPANIONS, RESOURCES } from '../snapshot-format/resources.ts';

/** Resources that store more than the public records (the others store only those): the condition of a public row. */
const PUBLIC: Partial<Record<string, string>> = { locations: 'published = 1' };

export interface Previous {
  path: string;
  snapshotId: string;
  builtAt: string;
  /** OLD has the change tables (an older layout has none: its history is empty). */
  hasHistory: boolean;
}

/** What the build needs of the previous snapshot, or why it cannot be compared with. */
export function readPrevious(path: string): Previous | string {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const tables = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]);
    const missing = ['snapshot_meta', ...RESOURCES].filter((t) => !tables.has(t));
    if (missing.length) return `not a snapshot (no table ${missing.join(', ')})`;
    const meta = new Map(db.prepare('SELECT key, value FROM snapshot_meta').raw().all() as [string, string][]);
    const snapshotId = meta.get('snapshot_id');
    const builtAt = meta.get('built_at');
    if (!snapshotId || !builtAt) return 'not a snapshot (no snapshot_id or built_at in snapshot_meta)';
    return { path, snapshotId, builtAt, hasHistory: tables.has('change_history') && tables.has('change_log') };
  } catch (e) {
    return `cannot be read as a snapshot: ${(e as Error).message}`;
  } finally {
    db?.close();
  }
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

function columnsOf(db: Database.Database, schema: string, table: string): string[] {
  return (db.prepare(`PRAGMA ${schema}.table_info(${q(table)})`).all() as { name: string }[]).map((c) => c.name);
}

/**
 * The SQL condition that a row `n` of `table` in the new file differs from its counterpart `o` in the old one, over
 * every column but `skip`; 'TRUE' where the two files' columns differ (a field added or dropped changes every record).
 */
function differs(db: Database.Database, table: string, n: string, o: string, skip: string[]): string {
  const cols = columnsOf(db, 'main', table);
  if (cols.join() !== columnsOf(db, 'old', table).join()) return 'TRUE';
  const conds = cols.filter((c) => !skip.includes(c)).map((c) => `${n}.${q(c)} IS NOT ${o}.${q(c)}`);
  return conds.length ? conds.join(' OR ') : 'FALSE';
}

/** The ids of `t`'s records public in both files whose stored columns, companions or translations differ. */
function changedSql(db: Database.Database, t: string, pub: (alias: string) => string): string[] {
  const T = q(t);
  const joins: string[] = [];
  const conds = [differs(db, t, 'n', 'o', ['rid'])];
  for (const [i, c] of (COMPANIONS[t] ?? []).entries()) {
    joins.push(`LEFT JOIN main.${q(c)} n${i} ON n${i}.rid = n.rid LEFT JOIN old.${q(c)} o${i} ON o${i}.rid = o.rid`);
    conds.push(differs(db, c, `n${i}`, `o${i}`, ['rid']));
  }
  const both = `${pub('n')} AND ${pub('o')}`;
  const selects = [
    `SELECT n.id FROM main.${T} n JOIN old.${T} o ON o.id = n.id ${joins.join(' ')} WHERE ${both} AND (${conds.join(' OR ')})`,
  ];
  // Translations: k = rid * 8 + locale code, so a translation's counterpart is k & 7 on the other record's rid.
  // Added or different on the new side, then present only on the old side.
  const I = `${t}_i18n`;
  const has = (schema: string) => columnsOf(db, schema, I).length > 0;
  if (has('main') || has('old')) {
    if (!has('main') || !has('old'))
      return [`SELECT n.id FROM main.${T} n JOIN old.${T} o ON o.id = n.id WHERE ${both}`];
    selects.push(
      `SELECT n.id FROM main.${q(I)} ni JOIN main.${T} n ON n.rid = ni.rid JOIN old.${T} o ON o.id = n.id
         LEFT JOIN old.${q(I)} oi ON oi.k = o.rid * 8 + (ni.k & 7)
       WHERE ${both} AND (oi.k IS NULL OR ${differs(db, I, 'ni', 'oi', ['k', 'rid'])})`,
      `SELECT o.id FROM old.${q(I)} oi JOIN old.${T} o ON o.rid = oi.rid JOIN main.${T} n ON n.id = o.id
       WHERE ${both} AND NOT EXISTS (SELECT 1 FROM main.${q(I)} ni WHERE ni.k = n.rid * 8 + (oi.k & 7))`,
    );
  }
  return selects;
}

/**
 * What a record shows of other records: a listing its city's name (every locale), a location its parents' ids,
 * slugs, types and names. Such a record changes when one of those locations does (stored columns or translations,
 * published or not): `touched` is the temporary table of those location ids.
 */
const DEPENDS: Partial<Record<string, (pub: string) => string>> = {
  listings: (both) =>
    `SELECT n.id FROM main.listings n JOIN old.listings o ON o.id = n.id
     WHERE n.city_id IN (SELECT id FROM temp.touched) AND ${both}`,
  locations: (both) =>
    `SELECT n.id FROM main.locations n JOIN old.locations o ON o.id = n.id
     WHERE n.id IN (SELECT descendant_id FROM main.location_closure
                    WHERE depth > 0 AND ancestor_id IN (SELECT id FROM temp.touched)) AND ${both}`,
};

export interface ChangeSummary {
  /** Steps of history the new snapshot holds. */
  steps: number;
  /** Per resource, the records of the new step: added, removed, changed. */
  counts: Record<string, { added: number; removed: number; changed: number }>;
}

/**
 * Writes the new snapshot's change_history and change_log: OLD's own, its oldest steps dropped to keep at most
 * `limit` (default CHANGE_HISTORY_STEPS), and one step from OLD to this snapshot. A rebuild of the same source
 * (the same snapshot id) adds no step. Runs outside any open transaction (ATTACH cannot run inside one).
 */
export function recordChanges(
  db: Database.Database,
  prev: Previous,
  snapshotId: string,
  limit = CHANGE_HISTORY_STEPS,
): ChangeSummary {
  if (!(limit >= 1)) throw new Error('the change history keeps at least one step');
  db.prepare('ATTACH DATABASE ? AS old').run(prev.path);
  try {
    db.exec('BEGIN');
    const same = prev.snapshotId === snapshotId;
    const oldSteps = prev.hasHistory
      ? ((db.prepare('SELECT max(step) FROM old.change_history').pluck().get() as number | null) ?? 0)
      : 0;
    const keep = Math.min(oldSteps, same ? limit : limit - 1);
    const shift = oldSteps - keep;
    if (keep > 0) {
      db.prepare(
        'INSERT INTO change_history SELECT step - @shift, snapshot_id, built_at FROM old.change_history WHERE step > @shift',
      ).run({ shift });
      db.prepare(
        'INSERT INTO change_log SELECT step - @shift, resource, id, change FROM old.change_log WHERE step > @shift',
      ).run({ shift });
    }
    const counts: ChangeSummary['counts'] = {};
    if (!same) {
      const step = keep + 1;
      db.prepare('INSERT INTO change_history (step, snapshot_id, built_at) VALUES (?, ?, ?)').run(
        step,
        prev.snapshotId,
        prev.builtAt,
      );
      db.exec('CREATE TEMP TABLE touched (id TEXT PRIMARY KEY) WITHOUT ROWID');
      db.exec(`INSERT OR IGNORE INTO temp.touched ${changedSql(db, 'locations', () => 'TRUE').join(' UNION ')}`);
      for (const t of RESOURCES) counts[t] = recordStep(db, t, step);
      db.exec('DROP TABLE temp.touched');
    }
    db.exec('COMMIT');
    return { steps: keep + (same ? 0 : 1), counts };
  } catch (e) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw e;
  } finally {
    db.exec('DETACH DATABASE old');
  }
}

/** One resource's changes from OLD to this snapshot, as rows of change_log for `step`. */
function recordStep(db: Database.Database, t: string, step: number) {
  const T = q(t);
  const pub = (alias: string) => (PUBLIC[t] ? `${alias}.${PUBLIC[t]}` : 'TRUE');
  const insert = (change: string, select: string) =>
    db
      .prepare(
        `INSERT OR IGNORE INTO change_log (step, resource, id, change) SELECT @step, @t, id, '${change}' FROM (${select})`,
      )
      .run({ step, t }).changes;
  const only = (a: string, b: string) =>
    `SELECT x.id FROM ${a}.${T} x WHERE ${pub('x')} AND NOT EXISTS (SELECT 1 FROM ${b}.${T} y WHERE y.id = x.id AND ${pub('y')})`;
  const added = insert('added', only('main', 'old'));
  const removed = insert('removed', only('old', 'main'));
  const depends = DEPENDS[t];
  const selects = [...changedSql(db, t, pub), ...(depends ? [depends(`${pub('n')} AND ${pub('o')}`)] : [])];
  const changed = insert('changed', selects.join(' UNION '));
  return { added, removed, changed };
}
