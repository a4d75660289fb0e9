// Post-build checks: SQLite integrity, referential sanity of derived tables, and query plans of hot statements.
import type { Database } from 'better-sqlite3';
import { HOT_QUERY_SAMPLES, planOf, planHasFullScan } from '../src/listing-query.ts';

/** Returns a list of problems; an empty list means the file may be renamed into place. */
export function runChecks(db: Database): string[] {
  const problems: string[] = [];
  const integrity = db.pragma('integrity_check') as { integrity_check: string }[];
  if (integrity.length !== 1 || integrity[0].integrity_check !== 'ok') {
    problems.push(...integrity.slice(0, 20).map((r) => `integrity_check: ${r.integrity_check}`));
  }
  const orphans = db.prepare(`
    SELECT 'listing city' AS what, count(*) AS n FROM listings WHERE city_id NOT IN (SELECT id FROM locations WHERE type = 'city')
    UNION ALL SELECT 'closure without location', count(*) FROM location_closure WHERE ancestor_id NOT IN (SELECT id FROM locations)
    UNION ALL SELECT 'cohort without metric', count(*) FROM market_observations WHERE metric_id NOT IN (SELECT id FROM metrics)
    -- A listing is a row in listings and one in listing_text with the same rid: both tables hold rids 1..n
    -- exactly (smallest 1, largest = count, rids unique) and have the same count. Cheaper than a join at 1M.
    UNION ALL SELECT 'listings rids not 1..n', abs(ifnull((SELECT min(rid) FROM listings), 1) - 1) + abs(ifnull((SELECT max(rid) FROM listings), 0) - (SELECT count(*) FROM listings))
    UNION ALL SELECT 'listing_text rids not 1..n', abs(ifnull((SELECT min(rid) FROM listing_text), 1) - 1) + abs(ifnull((SELECT max(rid) FROM listing_text), 0) - (SELECT count(*) FROM listing_text))
    UNION ALL SELECT 'listings without their text row', (SELECT count(*) FROM listings) - (SELECT count(*) FROM listing_text)
    UNION ALL SELECT 'listings without statistics', (SELECT count(*) FROM listings) - (SELECT count FROM listing_stats WHERE scope = '')
  `).all() as { what: string; n: number }[];
  for (const o of orphans) if (o.n !== 0) problems.push(`consistency: ${o.what}: ${o.n}`);
  for (const [name, filters] of Object.entries(HOT_QUERY_SAMPLES)) {
    const plan = planOf(db, filters);
    if (planHasFullScan(plan)) problems.push(`query plan: "${name}" scans the listings table: ${plan.join(' | ')}`);
  }
  return problems;
}
