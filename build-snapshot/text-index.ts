// The full-text side of the derived tables: every resource's full-text index (the listings' only when the
// full-text worker did not build it) and the listings' term tables (documents per term, frequent terms' bitmaps).
import type { Database } from 'better-sqlite3';
import { BITMAP_MIN_SHARE } from '../snapshot-format/listing-sql.ts';
import { TRANSLATED_LOCALES } from '../snapshot-format/locales.ts';
import { indexText } from '../snapshot-format/text.ts';
import { blob, parseRids } from './column-store.ts';

/** Terms with bitmaps: every term in at least BITMAP_MIN_SHARE of listings, at most 1,024 (~94 KB each at 751k). */
const BITMAP_TERMS = 1024;

/**
 * Documents per term (listing_terms) and a bitmap of the listings of each frequent term, from the listings
 * full-text index of `db`: the snapshot itself, or the full-text worker's own file (see fts-worker.ts).
 * Returns false if `cancelled()` stopped it (checked between terms).
 */
export function deriveTerms(db: Database, n: number, cancelled = () => false): boolean {
  db.exec('INSERT INTO listing_terms (term, docs) SELECT term, doc FROM listings_fts_vocab');
  const terms = db
    .prepare('SELECT term, docs AS doc FROM listing_terms WHERE docs >= ? ORDER BY docs DESC, term LIMIT ?')
    .all(Math.max(1, Math.ceil(n * BITMAP_MIN_SHARE)), BITMAP_TERMS) as { term: string; doc: number }[];
  // A term's rows come back as one comma-separated string, parsed here: half the time of a JS number per row
  // (measured at 100k listings: 0.72 s against 1.5 s for 754 terms).
  const docs = db.prepare("SELECT group_concat(rowid, ',') FROM listings_fts WHERE listings_fts MATCH ?").pluck();
  const bitmap = db.prepare('INSERT INTO listing_term_bitmaps (term, docs, bits) VALUES (?, ?, ?)');
  const rids = new Uint32Array(n + 1);
  for (const t of terms) {
    if (cancelled()) return false;
    const bits = new Uint8Array((n + 7) >> 3);
    const count = parseRids((docs.get(`"${t.term.replace(/"/g, '""')}"`) as string | null) ?? '', rids);
    for (let j = 0; j < count; j++) {
      const rid = rids[j];
      if (rid === 0) continue; // no rows: an empty list
      const i = rid - 1;
      bits[i >> 3] |= 1 << (i & 7);
    }
    bitmap.run(t.term, t.doc, blob(bits));
  }
  return true;
}

/** The concatenation of a table's text columns in English and every translation (those in its locale table). */
function i18nText(table: string, cols: string[], translated = cols) {
  const base = cols.map((c) => `ifnull(t.${c}, '')`).join(" || ' ' || ");
  const tr = translated.map((c) => `ifnull(x.${c}, '')`).join(" || ' ' || ");
  return `${base} || ' ' || ifnull((SELECT group_concat(${tr}, ' ') FROM ${table}_i18n x WHERE x.k BETWEEN t.rid * 8 AND t.rid * 8 + 7), '')`;
}

/** Every resource's full-text index; the listings' only when `listingsFtsDone` is false (no worker built it). */
export function deriveFullText(db: Database, listingsFtsDone: boolean) {
  // Every body goes through the same indexText as the listings' (see snapshot-format/text.ts): the query side relies on it.
  db.function('index_text', { deterministic: true }, (t: unknown) => (t === null ? null : indexText(String(t))));
  // Every name of a location and of its ancestors, in every locale, so q can match "Den Haag" or "The Hague".
  db.exec(`
    CREATE TEMP TABLE location_text AS
    SELECT c.descendant_id AS id,
           group_concat(l.name || ' ' || ifnull((SELECT group_concat(name, ' ') FROM locations_i18n x WHERE x.k BETWEEN l.rid * 8 AND l.rid * 8 + 7), ''), ' ') AS body
    FROM location_closure c JOIN locations l ON l.id = c.ancestor_id
    GROUP BY c.descendant_id;
    CREATE UNIQUE INDEX temp.location_text_id ON location_text(id);
  `);
  if (!listingsFtsDone)
    db.exec(`INSERT INTO listings_fts (rowid, body)
    SELECT t.rid, index_text(${TRANSLATED_LOCALES.map((l) => `ifnull(s.title_${l}, '') || ' ' || `).join('')}ifnull(s.title, '') || ' ' || ${i18nText('listings', ['description'])} || ' ' || ifnull(t.street, '') || ' ' || ifnull(t.postcode, '')
           || ' ' || ifnull((SELECT body FROM location_text WHERE id = f.location_id), '')) FROM listing_text t JOIN listing_summary s ON s.rid = t.rid JOIN listings f ON f.rid = t.rid ORDER BY t.rid`);
  db.exec(`INSERT INTO locations_fts (rowid, body)
    SELECT t.rid, index_text(t.slug || ' ' || ${i18nText('locations', ['name'])}) FROM locations t WHERE t.published = 1`);
  db.exec(`INSERT INTO owners_fts (rowid, body)
    SELECT t.rid, index_text(ifnull(t.name, '') || ' ' || ifnull(t.areas_served, '') || ' ' || ${i18nText('owners', ['description_short'], ['description_short', 'areas_served'])}) FROM owners t`);
  db.exec(`INSERT INTO internet_providers_fts (rowid, body)
    SELECT t.rid, index_text(t.name || ' ' || ${i18nText('internet_providers', ['description'])}) FROM internet_providers t`);
  db.exec(`INSERT INTO internet_plans_fts (rowid, body)
    SELECT t.rid, index_text(t.name || ' ' || ifnull(t.connection_type, '') || ' ' || ifnull((SELECT name FROM internet_providers p WHERE p.id = t.provider_id), '')
           || ' ' || ${i18nText('internet_plans', ['description'])}) FROM internet_plans t`);
  db.exec(`INSERT INTO insurance_products_fts (rowid, body)
    SELECT t.rid, index_text(t.name || ' ' || ifnull(t.official_name, '') || ' ' || ${i18nText('insurance_products', ['headline', 'summary'])}) FROM insurance_products t`);
  db.exec(`INSERT INTO platforms_fts (rowid, body)
    SELECT t.rid, index_text(t.name || ' ' || ${i18nText('platforms', ['headline', 'description'])}) FROM platforms t`);
  db.exec('DROP TABLE temp.location_text');
}
