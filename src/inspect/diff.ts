// `snapshot diff`: records added, removed and changed per resource between two snapshots, and the change of the
// median asking rent per city. The old file is attached to the new one's read-only connection, so every
// comparison is one SQL join on id inside SQLite; only ids and listing prices reach JavaScript.
import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { median } from '../../snapshot-format/price-stats.ts';
import { type FileMeta, openSnapshotFile, SnapshotError } from '../snapshot/file.ts';
import { COMPANIONS, columnsOf, q, RESOURCES } from './tables.ts';
import { alignedTable } from './text-table.ts';

export interface IdSample {
  count: number;
  /** The first ids in ascending order, at most the `ids` asked for. */
  ids: string[];
}

export interface ResourceDiff {
  resource: string;
  old_count: number;
  new_count: number;
  added: IdSample;
  removed: IdSample;
  /** In both files with any stored column or any translation different. */
  changed: IdSample;
}

export interface CityMedian {
  city_id: string;
  name: string | null;
  old_median: number | null;
  new_median: number | null;
  /** new - old; null when the city has no priced listing on one side. */
  change: number | null;
  old_listings: number;
  new_listings: number;
}

export interface DiffReport {
  old: Omit<FileMeta, 'counts'>;
  new: Omit<FileMeta, 'counts'>;
  resources: ResourceDiff[];
  /** Median price_eur of the stored (active, published) listings per city, the cities where it differs. */
  median_price_by_city: { cities: number; changed: number; top: CityMedian[] };
}

function sample(rows: Iterable<unknown>, n: number): IdSample {
  let count = 0;
  const ids: string[] = [];
  for (const id of rows) if (count++ < n) ids.push(id as string);
  return { count, ids };
}

/** The columns of `table` compared between the files (all but the rid, a position); the same in both files. */
function compared(db: Database.Database, table: string, skip: string[]): string[] {
  const cols = columnsOf(db, 'main', table);
  const old = columnsOf(db, 'old', table);
  if (cols.length === 0 || cols.join() !== old.join())
    throw new SnapshotError(`the two files differ in the columns of table ${table}: they cannot be compared`);
  return cols.filter((c) => !skip.includes(c));
}

const differs = (cols: string[], a: string, b: string) => cols.map((c) => `${a}.${q(c)} IS NOT ${b}.${q(c)}`);

function resourceDiff(db: Database.Database, t: string, ids: number): ResourceDiff {
  const T = q(t);
  const I = q(`${t}_i18n`);
  const count = (schema: string) => db.prepare(`SELECT count(*) FROM ${schema}.${T}`).pluck().get() as number;
  const only = (a: string, b: string) =>
    db
      .prepare(`SELECT id FROM ${a}.${T} x WHERE NOT EXISTS (SELECT 1 FROM ${b}.${T} y WHERE y.id = x.id) ORDER BY id`)
      .pluck();

  // Rows whose stored columns differ: each new row finds its old row by id, its companions by rid.
  const joins: string[] = [];
  const conds = differs(compared(db, t, ['rid']), 'n', 'o');
  for (const [i, c] of (COMPANIONS[t] ?? []).entries()) {
    joins.push(`LEFT JOIN main.${q(c)} n${i} ON n${i}.rid = n.rid LEFT JOIN old.${q(c)} o${i} ON o${i}.rid = o.rid`);
    conds.push(...differs(compared(db, c, ['rid']), `n${i}`, `o${i}`));
  }
  const changed = new Set(
    db
      .prepare(
        `SELECT n.id FROM main.${T} n JOIN old.${T} o ON o.id = n.id ${joins.join(' ')} WHERE ${conds.join(' OR ')}`,
      )
      .pluck()
      .all() as string[],
  );
  // Translations (a resource may have none): k = rid * 8 + locale code, so a translation's counterpart is
  // k & 7 on the other record's rid. Added or different on the new side, then present only on the old side.
  if (columnsOf(db, 'main', `${t}_i18n`).length + columnsOf(db, 'old', `${t}_i18n`).length > 0) {
    const tr = differs(compared(db, `${t}_i18n`, ['k', 'rid']), 'ni', 'oi');
    const translated = db
      .prepare(`
        SELECT n.id FROM main.${I} ni JOIN main.${T} n ON n.rid = ni.rid JOIN old.${T} o ON o.id = n.id
          LEFT JOIN old.${I} oi ON oi.k = o.rid * 8 + (ni.k & 7)
        WHERE oi.k IS NULL OR ${tr.join(' OR ')}
        UNION
        SELECT o.id FROM old.${I} oi JOIN old.${T} o ON o.rid = oi.rid JOIN main.${T} n ON n.id = o.id
        WHERE NOT EXISTS (SELECT 1 FROM main.${I} ni WHERE ni.k = n.rid * 8 + (oi.k & 7))`)
      .pluck();
    for (const id of translated.iterate()) changed.add(id as string);
  }
  return {
    resource: t,
    old_count: count('old'),
    new_count: count('main'),
    added: sample(only('main', 'old').iterate(), ids),
    removed: sample(only('old', 'main').iterate(), ids),
    changed: sample([...changed].sort(), ids),
  };
}

/** Per city: the stored listings and the median of their prices (null without a priced listing). */
function cityMedians(db: Database.Database, schema: string): Map<string, { listings: number; median: number | null }> {
  const prices = new Map<string, { listings: number; prices: number[] }>();
  const rows = db.prepare(`SELECT city_id, price_eur FROM ${schema}.listings`).raw();
  for (const [city, price] of rows.iterate() as Iterable<[string, number | null]>) {
    let c = prices.get(city);
    if (!c) prices.set(city, (c = { listings: 0, prices: [] }));
    c.listings++;
    if (price !== null) c.prices.push(price);
  }
  return new Map([...prices].map(([city, c]) => [city, { listings: c.listings, median: median(c.prices) }]));
}

function medianChanges(db: Database.Database, top: number): DiffReport['median_price_by_city'] {
  const before = cityMedians(db, 'old');
  const after = cityMedians(db, 'main');
  const names = new Map<string, string>();
  for (const schema of ['old', 'main'])
    for (const [id, name] of db.prepare(`SELECT id, name FROM ${schema}.locations`).raw().all() as [string, string][])
      names.set(id, name);
  const cities = [...new Set([...before.keys(), ...after.keys()])];
  const changed: CityMedian[] = [];
  for (const city_id of cities) {
    const o = before.get(city_id);
    const n = after.get(city_id);
    const [old_median, new_median] = [o?.median ?? null, n?.median ?? null];
    if (old_median === new_median) continue;
    const change = old_median === null || new_median === null ? null : new_median - old_median;
    const [old_listings, new_listings] = [o?.listings ?? 0, n?.listings ?? 0];
    changed.push({
      city_id,
      name: names.get(city_id) ?? null,
      old_median,
      new_median,
      change,
      old_listings,
      new_listings,
    });
  }
  // Largest absolute change first; a city priced on one side only after those; then by id.
  const size = (c: CityMedian) => (c.change === null ? -1 : Math.abs(c.change));
  changed.sort((a, b) => size(b) - size(a) || (a.city_id < b.city_id ? -1 : 1));
  return { cities: cities.length, changed: changed.length, top: changed.slice(0, top) };
}

/**
 * Compares the snapshots at `oldPath` and `newPath`, both opened read-only. `ids` example ids per kind of
 * change, `cities` cities in the median table. Throws SnapshotError when a file is not a snapshot or
 * the two are of different schema versions.
 */
export function diffSnapshots(oldPath: string, newPath: string, opts: { ids?: number; cities?: number } = {}) {
  const first = openSnapshotFile(oldPath);
  first.db.close();
  const { db, meta } = openSnapshotFile(newPath);
  try {
    if (first.meta.schema_version !== meta.schema_version)
      throw new SnapshotError(
        `${oldPath} has schema version ${first.meta.schema_version} and ${newPath} ${meta.schema_version}: diff compares snapshots of one schema version`,
      );
    // The attached file shares the connection's read-only open flags and query_only: it cannot be written either.
    db.prepare('ATTACH DATABASE ? AS old').run(resolve(oldPath));
    const { counts: _o, ...oldMeta } = first.meta;
    const { counts: _n, ...newMeta } = meta;
    const report: DiffReport = {
      old: oldMeta,
      new: newMeta,
      resources: RESOURCES.map((t) => resourceDiff(db, t, opts.ids ?? 5)),
      median_price_by_city: medianChanges(db, opts.cities ?? 10),
    };
    return report;
  } finally {
    db.close();
  }
}

const n = (x: number) => x.toLocaleString('en-US');
const eur = (x: number | null) => (x === null ? '-' : x.toFixed(2));

/** The report as aligned text: both files, a table of counts per resource, example ids, the city medians. */
export function formatDiff(r: DiffReport): string {
  const files = alignedTable(
    (['old', 'new'] as const).map((k) => [
      k,
      r[k].snapshot_id ?? '-',
      `built ${r[k].built_at ?? '-'}`,
      `schema ${r[k].schema_version}`,
      r[k].file,
    ]),
  );
  const counts = alignedTable(
    [
      ['resource', 'old', 'new', 'added', 'removed', 'changed'],
      ...r.resources.map((x) => [
        x.resource,
        n(x.old_count),
        n(x.new_count),
        n(x.added.count),
        n(x.removed.count),
        n(x.changed.count),
      ]),
    ],
    [false, true, true, true, true, true],
  );
  const examples: string[] = [];
  for (const x of r.resources)
    for (const kind of ['added', 'removed', 'changed'] as const) {
      const s = x[kind];
      if (s.count === 0 || s.ids.length === 0) continue;
      examples.push(`${x.resource} ${kind} (${n(s.count)}): ${s.ids.join(', ')}${s.count > s.ids.length ? ', …' : ''}`);
    }
  const m = r.median_price_by_city;
  const title = `Median asking rent of stored listings per city: changed in ${m.changed} of ${m.cities} cities`;
  const cities =
    m.top.length === 0
      ? ''
      : `\n${alignedTable(
          [
            ['city', 'name', 'old median', 'new median', 'change', 'old listings', 'new listings'],
            ...m.top.map((c) => [
              c.city_id,
              c.name ?? '-',
              eur(c.old_median),
              eur(c.new_median),
              c.change === null ? '-' : `${c.change > 0 ? '+' : ''}${c.change.toFixed(2)}`,
              n(c.old_listings),
              n(c.new_listings),
            ]),
          ],
          [false, false, true, true, true, true, true],
        )}`;
  const shown = m.top.length < m.changed ? ` (the ${m.top.length} largest changes)` : '';
  return `${files}\n\n${counts}\n${examples.length ? `\n${examples.join('\n')}\n` : ''}\n${title}${shown}${cities}\n`;
}
