// The derive phases: which derived tables are made before the indexes and which from them, plus the location
// tables (closure, owners' areas by locale). The column store, statistics, the near filter's points, full text
// and cohorts have files of their own.
import type { Database } from 'better-sqlite3';
import { LOCALE_CODE, TRANSLATED_LOCALES } from '../snapshot-format/locales.ts';
import { type CohortCollector, deriveCohorts } from './cohorts.ts';
import { readColumnStore, writeColumnStore } from './column-store.ts';
import { deriveGeo } from './geo-columns.ts';
import { deriveListingStats } from './listing-stats.ts';
import { deriveFullText, deriveTerms } from './text-index.ts';

/**
 * What is derived before the indexes are created: the location closure, the small resources' full-text
 * indexes (and the listings' when the full-text worker did not build it) and the market cohorts.
 */
export function deriveBeforeIndexes(db: Database, cohorts: CohortCollector, listingsFtsDone: boolean) {
  deriveClosure(db);
  deriveAreaNames(db);
  deriveFullText(db, listingsFtsDone);
  deriveCohorts(db, cohorts);
}

/**
 * What is derived from the listings' indexes, after they are created: the column store, the listing
 * statistics and (when the full-text worker did not build them) the term tables.
 * `listingsFtsDone`: the listings full-text index and its term tables were built during the load, in the
 * full-text worker's file (rid order was final).
 */
export function deriveFromIndexes(db: Database, listingsFtsDone: boolean) {
  const store = readColumnStore(db);
  deriveListingStats(db, store);
  writeColumnStore(db, store);
  deriveGeo(db, store.n);
  if (!listingsFtsDone) deriveTerms(db, store.n);
}

function deriveClosure(db: Database) {
  db.exec(`
    INSERT INTO location_closure (ancestor_id, descendant_id, depth)
    WITH RECURSIVE up(descendant_id, ancestor_id, depth) AS (
      SELECT id, id, 0 FROM locations
      UNION ALL
      SELECT up.descendant_id, l.parent_id, up.depth + 1 FROM up JOIN locations l ON l.id = up.ancestor_id WHERE l.parent_id IS NOT NULL
    )
    SELECT ancestor_id, descendant_id, depth FROM up;
  `);
}

/**
 * Owners' areas served in each translated locale: an area whose text is a published location's English name is
 * shown with that location's name in the locale, as a listing's city is (a name used by several locations is the
 * city's, then the province's, then the neighbourhood's; the lowest id among equals). A locale gets a row only
 * when at least one area has a name in it; otherwise the English list is served. Such areas count towards
 * Content-Language (owners.areas_places, owners_i18n.areas_lang); the other areas are the source's own text.
 */
function deriveAreaNames(db: Database) {
  db.exec(`
    CREATE TEMP TABLE area_location AS
    SELECT name, rid FROM (
      SELECT l.name, l.rid, row_number() OVER (
        PARTITION BY l.name ORDER BY CASE l.type WHEN 'city' THEN 0 WHEN 'province' THEN 1 ELSE 2 END, l.id) AS n
      FROM locations l WHERE l.published = 1 AND l.name IS NOT NULL)
    WHERE n = 1;
    CREATE UNIQUE INDEX temp.area_location_name ON area_location(name);
    UPDATE owners SET areas_places = (
      SELECT count(*) FROM json_each(owners.areas_served) a JOIN area_location n ON n.name = a.value)
    WHERE areas_served IS NOT NULL;
  `);
  // A row only where some place has a name in the locale: its language bits have bit 1.
  const insert = db.prepare(`
    INSERT INTO owners_i18n (k, rid, locale, areas_served, areas_lang)
    SELECT k, rid, @locale, areas, bits FROM (
      SELECT o.rid * 8 + @code AS k, o.rid,
             (SELECT json_group_array(COALESCE(x.name, a.value) ORDER BY a.key)
                FROM json_each(o.areas_served) a
                LEFT JOIN area_location n ON n.name = a.value
                LEFT JOIN locations_i18n x ON x.k = n.rid * 8 + @code) AS areas,
             (SELECT max(x.name IS NOT NULL) | (max(x.name IS NULL) << 1)
                FROM json_each(o.areas_served) a
                JOIN area_location n ON n.name = a.value
                LEFT JOIN locations_i18n x ON x.k = n.rid * 8 + @code) AS bits
      FROM owners o WHERE o.areas_places > 0)
    WHERE bits & 1
    ON CONFLICT (k) DO UPDATE SET areas_served = excluded.areas_served, areas_lang = excluded.areas_lang`);
  for (const locale of TRANSLATED_LOCALES) insert.run({ code: LOCALE_CODE[locale], locale });
  db.exec('DROP TABLE temp.area_location');
}
