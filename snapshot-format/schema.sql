-- The snapshot's only DDL. Every table, index and view the server reads is declared here.
-- Conventions:
--   * `rid INTEGER PRIMARY KEY` is the record's position in ascending `id` order (assigned by the
--     compiler), so "ORDER BY id" is "ORDER BY rid" and every single-column index (col, rid)
--     serves keyset paging without a sort.
--   * Base tables hold English text; `<table>_i18n` holds only real translations (nl, de, fr, es),
--     keyed by k = rid * 8 + locale code (nl 1, de 2, fr 3, es 4): one rowid lookup per record.
--     The server falls back to English field by field with COALESCE.
--   * Arrays and objects are stored as JSON text; booleans as 0/1; timestamps as ISO 8601 text.
--   * Only public records are stored (see the compiler), except locations, which are reference
--     data for listing display and carry `published` for the locations endpoints.

CREATE TABLE snapshot_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- Locations: province > city > neighbourhood.
CREATE TABLE locations (
  rid         INTEGER PRIMARY KEY,
  id          TEXT NOT NULL UNIQUE,
  slug        TEXT NOT NULL,
  type        TEXT NOT NULL,
  parent_id   TEXT,
  depth       INTEGER NOT NULL,        -- 0 province, 1 city, 2 neighbourhood
  latitude    REAL,
  longitude   REAL,
  postcode_prefixes TEXT,              -- JSON array or NULL
  published   INTEGER NOT NULL,
  name        TEXT NOT NULL
);
CREATE TABLE locations_i18n (
  k      INTEGER PRIMARY KEY,        -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid    INTEGER NOT NULL,
  locale TEXT NOT NULL,
  name   TEXT
);
CREATE VIRTUAL TABLE locations_fts USING fts5(body, content='', detail='none', tokenize='unicode61 remove_diacritics 2');
-- Every (ancestor, descendant) pair, including each location with itself at depth 0.
CREATE TABLE location_closure (
  ancestor_id   TEXT NOT NULL,
  descendant_id TEXT NOT NULL,
  depth         INTEGER NOT NULL,
  PRIMARY KEY (ancestor_id, descendant_id)
) WITHOUT ROWID;

-- Listings: only active, published, rent records, in three tables keyed by the same rid. `listings` holds
-- what is filtered and joined on (~60 bytes a row) and carries the filter indexes; listing_summary holds
-- what a page of summaries shows (~350 bytes a row, ~11 rows a page); listing_text the rest of what the
-- detail shows and q searches (~650 bytes a row). Every CREATE INDEX reads the whole table its index is on:
-- with the text in the same table that was ~770 MB for each of the ten filter indexes at 1M listings
-- (measured in interleaved 1M builds: the indexes 12.7 s with one table, 8.2-8.4 s with two).
-- A page's 20 rows are read from the OS page cache one 4 KB page at a time (a system call each): the narrower
-- summary rows put the 20 matches of a filter that 10-30 % of listings pass on half to two thirds as many pages.
CREATE TABLE listings (
  rid              INTEGER PRIMARY KEY,
  id               TEXT NOT NULL UNIQUE,
  price_eur        REAL,
  size_m2          REAL,
  rooms            REAL,
  furnishing       TEXT,
  property_type    TEXT,
  owner_id         TEXT,
  location_id      TEXT NOT NULL,
  -- The location hierarchy, denormalised from location_closure so that a location_id filter at
  -- any level is one equality on an indexed column.
  neighbourhood_id TEXT,
  city_id          TEXT NOT NULL,
  province_id      TEXT
);
CREATE TABLE listing_summary (
  rid              INTEGER PRIMARY KEY, -- listings.rid
  -- The API's summary object, one field a column, each as its JSON text ('null' where absent): a page's
  -- statement puts keys and values together (snapshot-format/summary-json.ts). The title and the city's
  -- name, which depend on the locale, are not among them. The display-only fields (slug, energy label,
  -- house number, coordinates, image, timestamps) are stored only here.
  s_id             TEXT NOT NULL,
  s_slug           TEXT NOT NULL,
  s_price_eur      TEXT NOT NULL,
  s_size_m2        TEXT NOT NULL,
  s_rooms          TEXT NOT NULL,
  s_furnishing     TEXT NOT NULL,
  s_property_type  TEXT NOT NULL,
  s_energy_label   TEXT NOT NULL,
  s_owner_id       TEXT NOT NULL,
  s_image_url      TEXT NOT NULL,
  s_created_at     TEXT NOT NULL,
  s_updated_at     TEXT NOT NULL,
  s_street         TEXT NOT NULL,
  s_number         TEXT NOT NULL,
  s_postcode       TEXT NOT NULL,
  s_latitude       TEXT NOT NULL,
  s_longitude      TEXT NOT NULL,
  title            TEXT NOT NULL,
  -- The title's translations (NULL where there is none): a page in any locale reads one row a listing,
  -- not a second lookup in listings_i18n, which holds the other translated text.
  title_nl         TEXT,
  title_de         TEXT,
  title_fr         TEXT,
  title_es         TEXT,
  city_id          TEXT NOT NULL         -- as in listings: a page's city names need no second table
);
CREATE TABLE listing_text (
  rid              INTEGER PRIMARY KEY, -- listings.rid
  street           TEXT,                 -- searched by q (with postcode)
  postcode         TEXT,
  description      TEXT,
  images           TEXT,                 -- JSON array or NULL
  attributes       TEXT,                 -- JSON object or NULL
  sources          TEXT                  -- JSON array or NULL
);
CREATE TABLE listings_i18n (
  k           INTEGER PRIMARY KEY, -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid         INTEGER NOT NULL,
  locale      TEXT NOT NULL,
  description TEXT                 -- the title's translations are in listing_summary
);
-- Contentless full-text index over title and description in every locale; rowid = listings.rid.
CREATE VIRTUAL TABLE listings_fts USING fts5(body, content='', detail='none', tokenize='unicode61 remove_diacritics 2');
-- Documents per term (fts5vocab reads the index on every lookup, too slow per request; listing_terms
-- below is its copy with a B-tree on term).
CREATE VIRTUAL TABLE listings_fts_vocab USING fts5vocab(listings_fts, 'row');
CREATE TABLE listing_terms (
  term TEXT PRIMARY KEY,
  docs INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE owners (
  rid               INTEGER PRIMARY KEY,
  id                TEXT NOT NULL UNIQUE,
  slug              TEXT,
  name              TEXT,
  type              TEXT,
  website_url       TEXT,
  image_url         TEXT,
  phone_numbers     TEXT,
  emails            TEXT,
  areas_served      TEXT,
  certifications    TEXT,
  description_short TEXT,
  description       TEXT,
  updated_at        TEXT,
  -- How many of areas_served are a published location's name (derived at build time, build-snapshot/derive.ts):
  -- those count towards Content-Language, as a listing's city does; the other areas are the source's own text.
  areas_places      INTEGER
);
CREATE TABLE owners_i18n (
  k               INTEGER PRIMARY KEY, -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid               INTEGER NOT NULL,
  locale            TEXT NOT NULL,
  description_short TEXT,
  description       TEXT,
  -- The areas served with the names of published locations in this locale ("The Hague" is "Den Haag" in nl), as
  -- a JSON array in the source's order; NULL when no area is a location with a name in this locale. areas_lang:
  -- the language bits of those names (1: some in this locale, 2: some fell back to English). Both derived at
  -- build time from locations and locations_i18n (build-snapshot/derive.ts).
  areas_served      TEXT,
  areas_lang        INTEGER
);
CREATE VIRTUAL TABLE owners_fts USING fts5(body, content='', detail='none', tokenize='unicode61 remove_diacritics 2');

CREATE TABLE internet_providers (
  rid                  INTEGER PRIMARY KEY,
  id                   TEXT NOT NULL UNIQUE,
  slug                 TEXT NOT NULL,
  name                 TEXT NOT NULL,
  website_url          TEXT,
  postcode_check_url   TEXT,
  logo_url             TEXT,
  customer_service_url TEXT,
  support_languages    TEXT,
  description          TEXT,
  support_details      TEXT,
  strengths            TEXT,
  considerations       TEXT,
  last_verified_at     TEXT,
  updated_at           TEXT
);
CREATE TABLE internet_providers_i18n (
  k             INTEGER PRIMARY KEY, -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid             INTEGER NOT NULL,
  locale          TEXT NOT NULL,
  description     TEXT,
  support_details TEXT,
  strengths       TEXT,
  considerations  TEXT
);
CREATE VIRTUAL TABLE internet_providers_fts USING fts5(body, content='', detail='none', tokenize='unicode61 remove_diacritics 2');

CREATE TABLE internet_plans (
  rid                         INTEGER PRIMARY KEY,
  id                          TEXT NOT NULL UNIQUE,
  provider_id                 TEXT NOT NULL,
  name                        TEXT NOT NULL,
  connection_type             TEXT,
  download_mbps               REAL,
  upload_mbps                 REAL,
  minimum_contract_months     REAL,
  regular_monthly_price_cents INTEGER,
  intro_monthly_price_cents   INTEGER,
  intro_duration_months       INTEGER,
  activation_fee_cents        INTEGER,
  installation_fee_cents      INTEGER,
  currency                    TEXT,
  official_url                TEXT,
  postcode_check_url          TEXT,
  availability_status         TEXT,
  description                 TEXT,
  last_verified_at            TEXT,
  updated_at                  TEXT
);
CREATE TABLE internet_plans_i18n (
  k         INTEGER PRIMARY KEY, -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid         INTEGER NOT NULL,
  locale      TEXT NOT NULL,
  description TEXT
);
CREATE VIRTUAL TABLE internet_plans_fts USING fts5(body, content='', detail='none', tokenize='unicode61 remove_diacritics 2');

CREATE TABLE insurance_providers (
  rid                  INTEGER PRIMARY KEY,
  id                   TEXT NOT NULL UNIQUE,
  slug                 TEXT NOT NULL,
  name                 TEXT NOT NULL,
  website_url          TEXT,
  logo_url             TEXT,
  customer_service_url TEXT,
  complaints_url       TEXT,
  last_verified_at     TEXT,
  updated_at           TEXT
);

CREATE TABLE insurance_products (
  rid              INTEGER PRIMARY KEY,
  id               TEXT NOT NULL UNIQUE,
  slug             TEXT NOT NULL,
  provider_id      TEXT NOT NULL,
  name             TEXT NOT NULL,
  official_name    TEXT,
  insurance_type   TEXT,
  product_kind     TEXT,
  availability     TEXT,
  official_url     TEXT,
  quote_url        TEXT,
  headline         TEXT,
  summary          TEXT,
  last_verified_at TEXT,
  updated_at       TEXT
);
CREATE TABLE insurance_products_i18n (
  k      INTEGER PRIMARY KEY, -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid      INTEGER NOT NULL,
  locale   TEXT NOT NULL,
  headline TEXT,
  summary  TEXT
);
CREATE VIRTUAL TABLE insurance_products_fts USING fts5(body, content='', detail='none', tokenize='unicode61 remove_diacritics 2');

CREATE TABLE platforms (
  rid                     INTEGER PRIMARY KEY,
  id                      TEXT NOT NULL UNIQUE,
  slug                    TEXT NOT NULL,
  name                    TEXT NOT NULL,
  url                     TEXT,
  logo_url                TEXT,
  type                    TEXT,
  category                TEXT,
  registration_required   INTEGER,
  registration_fee_amount REAL,
  subscription_fee_from   REAL,
  fee_currency            TEXT,
  headline                TEXT,
  features                TEXT,
  attributes              TEXT,
  description             TEXT,
  pricing_details         TEXT,
  content                 TEXT,
  last_verified_at        TEXT,
  updated_at              TEXT
);
CREATE TABLE platforms_i18n (
  k             INTEGER PRIMARY KEY, -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid             INTEGER NOT NULL,
  locale          TEXT NOT NULL,
  headline        TEXT,
  features        TEXT,
  description     TEXT,
  pricing_details TEXT,
  content         TEXT
);
CREATE VIRTUAL TABLE platforms_fts USING fts5(body, content='', detail='none', tokenize='unicode61 remove_diacritics 2');

CREATE TABLE articles (
  rid         INTEGER PRIMARY KEY,
  id          TEXT NOT NULL UNIQUE,
  slug        TEXT NOT NULL,
  title       TEXT NOT NULL,
  description TEXT,
  content     TEXT,
  category    TEXT,
  location_id TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE TABLE articles_i18n (
  k         INTEGER PRIMARY KEY, -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid         INTEGER NOT NULL,
  locale      TEXT NOT NULL,
  title       TEXT,
  description TEXT,
  content     TEXT
);

CREATE TABLE glossary (
  rid        INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  slug       TEXT NOT NULL,
  term       TEXT NOT NULL,
  definition TEXT NOT NULL,
  updated_at TEXT
);
CREATE TABLE glossary_i18n (
  k        INTEGER PRIMARY KEY, -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid        INTEGER NOT NULL,
  locale     TEXT NOT NULL,
  term       TEXT,
  definition TEXT
);

CREATE TABLE metrics (
  rid             INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  name            TEXT NOT NULL,
  description     TEXT,
  unit            TEXT NOT NULL,
  aggregation     TEXT NOT NULL,
  min_sample_size INTEGER NOT NULL
);
CREATE TABLE metrics_i18n (
  k         INTEGER PRIMARY KEY, -- rid * 8 + locale code (nl 1, de 2, fr 3, es 4)
  rid         INTEGER NOT NULL,
  locale      TEXT NOT NULL,
  name        TEXT,
  description TEXT
);

-- Precomputed market cohorts: per metric, city and first-seen month, over every published rent
-- listing (active or not). Months below the metric's minimum sample size are not stored.
CREATE TABLE market_observations (
  metric_id   TEXT NOT NULL,
  city_id     TEXT NOT NULL,
  month       TEXT NOT NULL,             -- YYYY-MM-01
  value       REAL NOT NULL,
  sample_size INTEGER NOT NULL,
  PRIMARY KEY (metric_id, city_id, month)
) WITHOUT ROWID;

-- Precomputed listing statistics for the filter sets that would otherwise scan many rows:
-- scope '' is all listings; 'location:<id>' one location at any level; 'property_type:<v>',
-- 'furnishing:<v>', 'owner_id:<v>' one value of those filters alone.
CREATE TABLE listing_stats (
  scope             TEXT PRIMARY KEY,
  count             INTEGER NOT NULL,
  min_price_eur     REAL,
  max_price_eur     REAL,
  average_price_eur REAL,
  median_price_eur  REAL
) WITHOUT ROWID;

-- Planner statistics for listing filters, read by the server at start-up to choose the driving index:
-- the number of listings per value of each equality-filter column (and per city + property type,
-- column 'city_type', value '<city_id>\x01<property_type>'), and evenly spaced quantiles of
-- each range-filter column (k = 0..1024 over its non-null values).
CREATE TABLE listing_value_counts (
  column TEXT NOT NULL,
  value  TEXT NOT NULL,
  n      INTEGER NOT NULL,
  PRIMARY KEY (column, value)
) WITHOUT ROWID;
-- Listings per cell of 0.01 degrees of latitude and longitude (cell = floor(degrees * 100)): the planner's
-- estimate of the near filter.
CREATE TABLE listing_geo_cells (
  lat_cell INTEGER NOT NULL,
  lon_cell INTEGER NOT NULL,
  n        INTEGER NOT NULL,
  PRIMARY KEY (lat_cell, lon_cell)
) WITHOUT ROWID;
CREATE TABLE listing_quantiles (
  column  TEXT NOT NULL,
  k       INTEGER NOT NULL,
  value   REAL NOT NULL,
  nonnull INTEGER NOT NULL,
  PRIMARY KEY (column, k)
) WITHOUT ROWID;

-- Columnar copies of the listing filter columns for the in-memory scan (src/listings/scan.ts), in rid
-- order (element i is rid i + 1), little-endian: price_eur, size_m2, rooms as float64 (NaN = null);
-- city, province, neighbourhood, property_type, furnishing as uint16 and owner as uint32 dictionary
-- codes (0 = null); price_order: uint32 row indexes of priced listings sorted by price; price_rank:
-- uint32 position of each row in price_order (0xFFFFFFFF = no price); size_order: uint32 row indexes
-- of the listings with a size, sorted by size; geo_x, geo_y, geo_z: float64, each listing's point as a unit
-- vector (snapshot-format/geo.ts; NaN = no coordinates); geo_cell_order: uint32 row indexes of the listings with
-- coordinates by listing_geo_cells' cell, in (lat_cell, lon_cell) order, ascending within a cell; geo_cell_x,
-- geo_cell_y, geo_cell_z: float64, the same points in geo_cell_order's order.
CREATE TABLE listing_columns (
  name TEXT PRIMARY KEY,
  data BLOB NOT NULL
) WITHOUT ROWID;
-- The dictionary of the coded columns: column, code (1..n), value.
CREATE TABLE listing_dict (
  column TEXT NOT NULL,
  code   INTEGER NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (column, value)
) WITHOUT ROWID;
-- Bitmaps (bit i = row i) of the listings containing each of the most frequent q terms, so a common
-- word costs a bitmap, not a walk over a long FTS document list.
CREATE TABLE listing_term_bitmaps (
  term TEXT PRIMARY KEY,
  docs INTEGER NOT NULL,
  bits BLOB NOT NULL
) WITHOUT ROWID;

-- The change feed (GET /v1/changes, build-snapshot/changes.ts): the earlier snapshots this one can bring a client's
-- copy forward from, at most CHANGE_HISTORY_STEPS (snapshot-format/changes.ts), and what changed at each step. Step s
-- leads from change_history.snapshot_id of s to the snapshot of step s + 1, the last step to this snapshot. Empty
-- when the snapshot was built without --previous. A snapshot id may appear twice (a source changed and changed back):
-- the latest step is the one a client starts from.
CREATE TABLE change_history (
  step        INTEGER PRIMARY KEY,   -- 1 = the oldest kept
  snapshot_id TEXT NOT NULL,
  built_at    TEXT NOT NULL
);
-- One row per record of a resource (its name in RESOURCES) that became public ('added'), stopped being public
-- ('removed'), or shows any field different in any locale ('changed') between the step's snapshot and the next.
CREATE TABLE change_log (
  step     INTEGER NOT NULL,
  resource TEXT NOT NULL,
  id       TEXT NOT NULL,
  change   TEXT NOT NULL CHECK (change IN ('added', 'removed', 'changed')),
  PRIMARY KEY (step, resource, id)
) WITHOUT ROWID;

-- ==== INDEXES: created by the compiler after the bulk load ====
-- Each single-column index is (col, rid) implicitly: an equality on it yields rows in id order.
CREATE INDEX listings_city ON listings(city_id);
CREATE INDEX listings_province ON listings(province_id);
CREATE INDEX listings_neighbourhood ON listings(neighbourhood_id);
CREATE INDEX listings_owner ON listings(owner_id);
CREATE INDEX listings_property_type ON listings(property_type);
CREATE INDEX listings_furnishing ON listings(furnishing);
CREATE INDEX listings_price ON listings(price_eur);
CREATE INDEX listings_size ON listings(size_m2);
CREATE INDEX listings_rooms ON listings(rooms);
-- Similar listings: same city and property type, price band.
CREATE INDEX listings_city_type_price ON listings(city_id, property_type, price_eur);
CREATE INDEX locations_type ON locations(type);
CREATE INDEX locations_parent ON locations(parent_id);
CREATE INDEX location_closure_descendant ON location_closure(descendant_id);
CREATE INDEX owners_type ON owners(type);
CREATE INDEX internet_plans_provider ON internet_plans(provider_id);
CREATE INDEX internet_plans_connection ON internet_plans(connection_type);
CREATE INDEX insurance_products_provider ON insurance_products(provider_id);
CREATE INDEX insurance_products_type ON insurance_products(insurance_type);
CREATE INDEX insurance_products_availability ON insurance_products(availability);
CREATE INDEX platforms_type ON platforms(type);
CREATE INDEX platforms_category ON platforms(category);
-- A feed over several steps walks each record's changes together, in (resource, id) order.
CREATE INDEX change_log_record ON change_log(resource, id, step, change);
CREATE INDEX change_history_snapshot ON change_history(snapshot_id);
