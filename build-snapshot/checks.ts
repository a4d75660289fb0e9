// Post-build checks: SQLite integrity, referential sanity of derived tables, and query plans of hot statements.

import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { explainPage, HOT_QUERY_SAMPLES, indexDriver, planHasFullScan } from '../snapshot-format/listing-sql.ts';
import { LISTING_TABLES } from './tables.ts';

/**
 * The table whose `integrity_check` runs on a second thread (see runChecks): the listings and their 11
 * indexes are ~75 % of the whole check at 1M listings (one index seek per row and index).
 */
export const PARALLEL_TABLE = 'listings';

/** What a check worker is asked (kind 'check' of the compiler's worker entry, listings-worker.ts). */
export interface CheckJob {
  kind: 'check';
  file: string;
  table: string;
}

/** The lines of an integrity pragma that are not 'ok', prefixed with what ran. */
function integrityProblems(db: Database.Database, pragma: string): string[] {
  const rows = db.pragma(pragma) as Record<string, string>[];
  const lines = rows.map((r) => Object.values(r)[0]);
  return lines.length === 1 && lines[0] === 'ok' ? [] : lines.slice(0, 20).map((l) => `${pragma}: ${l}`);
}

/** `integrity_check` of one table and its indexes, on a connection of its own (read-only). */
export function checkTable(file: string, table: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('cache_size = -16384');
    return integrityProblems(db, `integrity_check(${JSON.stringify(table)})`);
  } finally {
    db.close();
  }
}

/**
 * Returns a list of problems; an empty list means the file may be renamed into place.
 *
 * The integrity part is `PRAGMA integrity_check` split so that it runs on both cores:
 * `integrity_check(T)` for every table T (each with its indexes), PARALLEL_TABLE's on another thread
 * (`checkParallelTable`, started first), and `quick_check` over the whole file for what a check
 * limited to tables skips: the freelist and that every page is used exactly once. (`quick_check`
 * alone would not do for the tables: besides the UNIQUE and index-content checks SQLite documents it
 * as leaving out, it does not check the key order of WITHOUT ROWID tables, found by a review.)
 */
export async function runChecks(db: Database.Database, checkParallelTable: Promise<string[]>): Promise<string[]> {
  // Collected below even if this thread's checks throw, so that the other thread is never left running unawaited.
  const parallel = checkParallelTable.then(
    (p) => p,
    (e: Error) => [`integrity_check(${JSON.stringify(PARALLEL_TABLE)}): could not run: ${e.message}`],
  );
  const problems: string[] = [];
  try {
    problems.push(...integrityProblems(db, 'quick_check'));
    // Ordinary and WITHOUT ROWID tables, FTS5's shadow tables and sqlite_schema; a virtual table's own
    // check (FTS5's) is run by quick_check already.
    const tables = db
      .prepare(
        "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'shadow') AND name <> ? ORDER BY name",
      )
      .pluck()
      .all(PARALLEL_TABLE) as string[];
    for (const t of tables) problems.push(...integrityProblems(db, `integrity_check(${JSON.stringify(t)})`));
    problems.push(...consistencyProblems(db));
  } finally {
    problems.unshift(...(await parallel));
  }
  return problems;
}

function consistencyProblems(db: Database.Database): string[] {
  const problems: string[] = [];
  const orphans = db
    .prepare(`
    SELECT 'listing city' AS what, count(*) AS n FROM listings WHERE city_id NOT IN (SELECT id FROM locations WHERE type = 'city')
    UNION ALL SELECT 'closure without location', count(*) FROM location_closure WHERE ancestor_id NOT IN (SELECT id FROM locations)
    UNION ALL SELECT 'cohort without metric', count(*) FROM market_observations WHERE metric_id NOT IN (SELECT id FROM metrics)
    -- A listing is a row in listings, one in listing_summary and one in listing_text with the same rid: each
    -- table holds rids 1..n exactly (smallest 1, largest = count, rids unique) and they have the same count.
    -- Cheaper than a join at 1M.
    ${LISTING_TABLES.map((t) => `UNION ALL SELECT '${t} rids not 1..n', abs(ifnull((SELECT min(rid) FROM ${t}), 1) - 1) + abs(ifnull((SELECT max(rid) FROM ${t}), 0) - (SELECT count(*) FROM ${t}))`).join('\n    ')}
    UNION ALL SELECT 'listings without their text row', (SELECT count(*) FROM listings) - (SELECT count(*) FROM listing_text)
    UNION ALL SELECT 'listings without their summary row', (SELECT count(*) FROM listings) - (SELECT count(*) FROM listing_summary)
    UNION ALL SELECT 'listings without statistics', (SELECT count(*) FROM listings) - (SELECT count FROM listing_stats WHERE scope = '')
  `)
    .all() as { what: string; n: number }[];
  for (const o of orphans) if (o.n !== 0) problems.push(`consistency: ${o.what}: ${o.n}`);
  for (const [name, filters] of Object.entries(HOT_QUERY_SAMPLES)) {
    const plan = explainPage(db, filters, indexDriver(filters));
    if (planHasFullScan(plan)) problems.push(`query plan: "${name}" scans the listings table: ${plan.join(' | ')}`);
  }
  return problems;
}

/** A check worker's answer: the table's problems, or why it could not check it. */
export type CheckResult = { problems: string[] } | { error: string };

if (parentPort && workerData?.kind === 'check') {
  const job = workerData as CheckJob;
  let result: CheckResult;
  try {
    result = { problems: checkTable(job.file, job.table) };
  } catch (e) {
    // A better-sqlite3 error reaches the other thread without its message: sent as text.
    const err = e as { code?: string; message?: string };
    result = { error: [err.code, err.message ?? String(e)].filter(Boolean).join(': ') };
  }
  parentPort.postMessage(result);
}
