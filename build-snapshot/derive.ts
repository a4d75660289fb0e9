// Derived tables: location closure, full-text indexes, market cohorts and precomputed listing statistics.
import type { Database } from 'better-sqlite3';
import { BITMAP_MIN_SHARE, INDEX_OF } from '../snapshot-format/listing-sql.ts';
import { LOCALE_CODE, TRANSLATED_LOCALES } from '../snapshot-format/locales.ts';
import { median, round2 } from '../snapshot-format/price-stats.ts';
import { indexText } from '../snapshot-format/text.ts';

/** Groups published rent listings (active or not) by city and first-seen month while the source streams. */
export class CohortCollector {
  // city → month → values; prices and price per m² kept as plain arrays (a few numbers per listing).
  groups = new Map<string, Map<string, { n: number; prices: number[]; perM2: number[] }>>();
  add(cityId: string, firstSeenAt: string, price: number | null, size: number | null) {
    const month = `${firstSeenAt.slice(0, 7)}-01`;
    let byMonth = this.groups.get(cityId);
    if (!byMonth) this.groups.set(cityId, (byMonth = new Map()));
    let g = byMonth.get(month);
    if (!g) byMonth.set(month, (g = { n: 0, prices: [], perM2: [] }));
    g.n++;
    if (price != null) {
      g.prices.push(price);
      if (size != null && size > 0) g.perM2.push(price / size);
    }
  }
}

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
  const n = deriveColumns(db);
  if (!listingsFtsDone) deriveTerms(db, n);
}

/**
 * Columns whose single-value filters get precomputed statistics, and the scope prefix they are stored
 * under: 'location:<id>' for a location at any level (ids are unique across levels), '<column>:<value>'.
 */
const VALUE_STATS_COLUMNS: [column: string, prefix: string][] = [
  ['city_id', 'location'],
  ['province_id', 'location'],
  ['neighbourhood_id', 'location'],
  ['property_type', 'property_type'],
  ['furnishing', 'furnishing'],
  ['owner_id', 'owner_id'],
];

/**
 * Everything precomputed about listing prices and filter values, from the column store (no per-value
 * arrays, nothing collected while loading):
 * - statistics for all listings (scope '') and for every value of the single-filter columns: one pass
 *   over all rows counts (and sums) per code, one pass over the price order picks each value's min, max
 *   and middle prices as the running count per code reaches them;
 * - the planner's statistics: listings per value of each equality filter (and per city + property
 *   type), and quantiles of each range filter.
 */
function deriveListingStats(
  db: Database,
  floats: Record<string, Float64Array>,
  codes: Record<string, Uint16Array | Uint32Array>,
  dicts: Map<string, Map<string, number>>,
  orders: Record<string, Uint32Array>,
) {
  const order = orders.price_eur;
  const price = floats.price_eur;
  const n = price.length;
  const insert = db.prepare(
    'INSERT INTO listing_stats (scope, count, min_price_eur, max_price_eur, average_price_eur, median_price_eur) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const vc = db.prepare('INSERT INTO listing_value_counts (column, value, n) VALUES (?, ?, ?)');
  const all = new Uint8Array(n).fill(1); // the '' scope: every listing has code 1 of a one-value column
  for (const [col, prefix] of [['', ''], ...VALUE_STATS_COLUMNS] as [string, string][]) {
    const code = col === '' ? all : codes[col];
    const dict = col === '' ? new Map([['', 1]]) : dicts.get(col)!;
    const size = dict.size + 1;
    const count = new Float64Array(size),
      priced = new Float64Array(size),
      sum = new Float64Array(size);
    for (let i = 0; i < n; i++) {
      const c = code[i];
      if (c === 0) continue;
      count[c]++;
      if (!Number.isNaN(price[i])) {
        priced[c]++;
        sum[c] += price[i];
      }
    }
    const seen = new Float64Array(size),
      min = new Float64Array(size).fill(NaN),
      max = new Float64Array(size),
      lo = new Float64Array(size),
      hi = new Float64Array(size);
    for (let pos = 0; pos < order.length; pos++) {
      const i = order[pos],
        c = code[i];
      if (c === 0) continue;
      const k = seen[c]++;
      const p = price[i];
      if (k === 0) min[c] = p;
      if (k === priced[c] - 1) max[c] = p;
      if (k === Math.floor((priced[c] - 1) / 2)) lo[c] = p;
      if (k === Math.floor(priced[c] / 2)) hi[c] = p;
    }
    for (const [value, c] of dict) {
      const has = priced[c] > 0;
      const scope = col === '' ? '' : `${prefix}:${value}`;
      insert.run(
        scope,
        count[c],
        has ? min[c] : null,
        has ? max[c] : null,
        has ? round2(sum[c] / priced[c]) : null,
        has ? (priced[c] % 2 ? hi[c] : (lo[c] + hi[c]) / 2) : null,
      );
      if (col !== '') vc.run(col, value, count[c]);
    }
  }
  // City and property type together (the similar-listings and city + type index): 'city\u0001type'.
  const city = codes.city_id,
    type = codes.property_type;
  const pairs = new Map<number, number>();
  for (let i = 0; i < n; i++)
    if (type[i] !== 0) {
      const k = city[i] * 65536 + type[i];
      pairs.set(k, (pairs.get(k) ?? 0) + 1);
    }
  const name = (col: string) => {
    const byCode = new Map<number, string>();
    for (const [v, c] of dicts.get(col)!) byCode.set(c, v);
    return byCode;
  };
  const cities = name('city_id'),
    types = name('property_type');
  for (const [k, count] of pairs)
    vc.run('city_type', `${cities.get(Math.floor(k / 65536))}\u0001${types.get(k % 65536)}`, count);
  const q = db.prepare('INSERT INTO listing_quantiles (column, k, value, nonnull) VALUES (?, ?, ?, ?)');
  for (const col of FLOAT_COLUMNS) {
    const sorted = Float64Array.from(orders[col], (i) => floats[col][i]); // the values in order (deriveColumns)
    if (sorted.length === 0) continue;
    for (let k = 0; k <= QUANTILES; k++)
      q.run(
        col,
        k,
        sorted[Math.min(sorted.length - 1, Math.floor((k * (sorted.length - 1)) / QUANTILES))],
        sorted.length,
      );
  }
}

export const CODED_COLUMNS = [
  'city_id',
  'province_id',
  'neighbourhood_id',
  'property_type',
  'furnishing',
  'owner_id',
] as const;
export const FLOAT_COLUMNS = ['price_eur', 'size_m2', 'rooms'] as const;
/** Terms with bitmaps: every term in at least BITMAP_MIN_SHARE of listings, at most 1,024 (~94 KB each at 751k). */
const BITMAP_TERMS = 1024;

const blob = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * Calls `each(value, rids, count)` for every distinct non-null value of a listings column, in value order,
 * with the rows holding it in ascending order in `rids[0..count)` (a buffer reused between calls).
 *
 * It reads the column's (value, rid) index (INDEX_OF, the planner's), not the table: ~25 MB instead of ~770 MB of pages at 1M listings, and a
 * value's rows come back as one comma-separated string (parsed here) instead of a JavaScript row each.
 * Measured at 1M listings: 1.6 s for all nine columns, against 4.2 s for one scan of the table plus 0.7 s
 * to sort the price and size orders.
 */
function valueGroups(
  db: Database,
  column: string,
  n: number,
  each: (value: string | number, rids: Uint32Array, count: number) => void,
) {
  const rids = new Uint32Array(n);
  const rows = db
    .prepare(`SELECT ${column}, group_concat(rid) FROM listings INDEXED BY ${INDEX_OF[column]}
    WHERE ${column} IS NOT NULL GROUP BY ${column} ORDER BY ${column}`)
    .raw()
    .iterate() as IterableIterator<[string | number, string]>;
  for (const [value, list] of rows) {
    let count = 0,
      rid = 0;
    for (let k = 0; k <= list.length; k++) {
      const ch = k < list.length ? list.charCodeAt(k) : 44; // a comma ends the last number too
      if (ch !== 44) {
        rid = rid * 10 + ch - 48;
        continue;
      }
      rids[count++] = rid;
      rid = 0;
    }
    // group_concat's order within a group is SQLite's to choose: sorted here (numerically: a typed array).
    rids.subarray(0, count).sort();
    each(value, rids, count);
  }
}

/**
 * The listing filter columns as typed arrays in rid order, plus price and size order (see schema.sql),
 * read from the indexes (valueGroups); returns the listing count. A coded column's codes follow its values'
 * order (1 = the smallest).
 */
function deriveColumns(db: Database) {
  const n = db.prepare('SELECT count(*) FROM listings').pluck().get() as number;
  const floats = {} as Record<string, Float64Array>;
  /** Each float column's rows with a value, sorted by value, ties by row. */
  const orders = {} as Record<string, Uint32Array>;
  for (const c of FLOAT_COLUMNS) {
    const values = new Float64Array(n).fill(NaN),
      order = new Uint32Array(n);
    let pos = 0;
    valueGroups(db, c, n, (value, rids, count) => {
      for (let j = 0; j < count; j++) {
        const i = rids[j] - 1;
        values[i] = value as number;
        order[pos++] = i;
      }
    });
    floats[c] = values;
    orders[c] = order.slice(0, pos);
  }
  const dicts = new Map<string, Map<string, number>>();
  const codes: Record<string, Uint16Array | Uint32Array> = {};
  for (const c of CODED_COLUMNS) {
    const dict = new Map<string, number>(),
      code = c === 'owner_id' ? new Uint32Array(n) : new Uint16Array(n);
    valueGroups(db, c, n, (value, rids, count) => {
      dict.set(String(value), dict.size + 1);
      for (let j = 0; j < count; j++) code[rids[j] - 1] = dict.size;
    });
    if (dict.size >= (c === 'owner_id' ? 2 ** 32 : 2 ** 16))
      throw new Error(`too many distinct ${c} values for the column store`);
    dicts.set(c, dict);
    codes[c] = code;
  }
  const order = orders.price_eur;
  const rank = new Uint32Array(n).fill(0xffffffff);
  order.forEach((row, pos) => {
    rank[row] = pos;
  });
  // Size order too: a size range's rows in a straddled bin are then a binary search away.
  const sizeOrder = orders.size_m2;

  deriveListingStats(db, floats, codes, dicts, orders);

  const put = db.prepare('INSERT INTO listing_columns (name, data) VALUES (?, ?)');
  for (const c of FLOAT_COLUMNS) put.run(c, blob(floats[c]));
  for (const c of CODED_COLUMNS) put.run(c, blob(codes[c]));
  put.run('price_order', blob(order));
  put.run('price_rank', blob(rank));
  put.run('size_order', blob(sizeOrder));
  const dict = db.prepare('INSERT INTO listing_dict (column, code, value) VALUES (?, ?, ?)');
  for (const [c, d] of dicts) for (const [v, code] of d) dict.run(c, code, v);
  return n;
}

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
  for (const t of terms) {
    if (cancelled()) return false;
    const bits = new Uint8Array((n + 7) >> 3);
    const list = (docs.get(`"${t.term.replace(/"/g, '""')}"`) as string | null) ?? '';
    let rid = 0;
    for (let k = 0; k <= list.length; k++) {
      const ch = k < list.length ? list.charCodeAt(k) : 44; // a comma ends the last number too
      if (ch !== 44) {
        rid = rid * 10 + ch - 48;
        continue;
      }
      if (rid > 0) {
        const i = rid - 1;
        bits[i >> 3] |= 1 << (i & 7);
      }
      rid = 0;
    }
    bitmap.run(t.term, t.doc, blob(bits));
  }
  return true;
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

/** The concatenation of a table's text columns in English and every translation (those in its locale table). */
function i18nText(table: string, cols: string[], translated = cols) {
  const base = cols.map((c) => `ifnull(t.${c}, '')`).join(" || ' ' || ");
  const tr = translated.map((c) => `ifnull(x.${c}, '')`).join(" || ' ' || ");
  return `${base} || ' ' || ifnull((SELECT group_concat(${tr}, ' ') FROM ${table}_i18n x WHERE x.k BETWEEN t.rid * 8 AND t.rid * 8 + 7), '')`;
}

function deriveFullText(db: Database, listingsFtsDone: boolean) {
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

function deriveCohorts(db: Database, cohorts: CohortCollector) {
  const metrics = db.prepare('SELECT id, aggregation, min_sample_size FROM metrics ORDER BY rid').all() as {
    id: string;
    aggregation: string;
    min_sample_size: number;
  }[];
  const insert = db.prepare(
    'INSERT INTO market_observations (metric_id, city_id, month, value, sample_size) VALUES (?, ?, ?, ?, ?)',
  );
  for (const [city, byMonth] of cohorts.groups) {
    for (const [month, g] of byMonth) {
      for (const m of metrics) {
        let value: number | null;
        let sample: number;
        switch (m.aggregation) {
          case 'count':
            sample = g.n;
            value = g.n;
            break;
          case 'median_price_eur':
            sample = g.prices.length;
            value = median(g.prices);
            break;
          case 'average_price_eur':
            sample = g.prices.length;
            value = sample ? g.prices.reduce((a, b) => a + b, 0) / sample : null;
            break;
          case 'median_price_per_m2':
            sample = g.perM2.length;
            value = median(g.perM2);
            break;
          default:
            throw new Error(`unknown aggregation ${m.aggregation}`);
        }
        if (value === null || sample < m.min_sample_size) continue;
        insert.run(m.id, city, month, round2(value), sample);
      }
    }
  }
}

/** Quantiles kept per range filter column for the planner's estimates. */
export const QUANTILES = 1024;
