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
    UNION ALL SELECT 'listings without statistics', (SELECT count(*) FROM listings) - (SELECT count FROM listing_stats WHERE scope = '')
  `).all() as { what: string; n: number }[];
  for (const o of orphans) if (o.n !== 0) problems.push(`consistency: ${o.what}: ${o.n}`);
  for (const [name, filters] of Object.entries(HOT_QUERY_SAMPLES)) {
    const plan = planOf(db, filters);
    if (planHasFullScan(plan)) problems.push(`query plan: "${name}" scans the listings table: ${plan.join(' | ')}`);
  }
  return problems;
}
