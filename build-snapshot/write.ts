// Maps validated source records to snapshot rows: one column vocabulary per table, inserted by @name.
import type { Database, Statement } from 'better-sqlite3';
import { LOCALE_CODE, TRANSLATED_LOCALES } from '../snapshot-format/locales.ts';
import { SUMMARY_COLUMNS } from '../snapshot-format/summary-json.ts';

/** How a source field becomes a column: as is, the English text of a locale map, JSON text, or 0/1. */
type Kind = 'plain' | 'text' | 'textlist' | 'json' | 'bool';
const isText = (k: Kind) => k === 'text' || k === 'textlist';
export interface TableSpec {
  table: string;
  cols: Record<string, Kind>;
  /** Whether the table has translated columns kept in `i18nTable`. */
  i18n: boolean;
  i18nTable: string;
  /**
   * Translated fields kept in the row itself, once per locale: `<field>` in English and `<field>_<locale>`
   * for each translated locale (NULL where there is no translation), instead of in `i18nTable`.
   */
  inline: readonly string[];
  /** Whether the row starts with the record's id (after rid). */
  withId: boolean;
  /** The fields whose columns (inline ones with their locales' columns) go to a second table, with the same rid. */
  split?: { table: string; fields: readonly string[] };
}

const spec = (
  table: string,
  cols: Record<string, Kind>,
  opts: { i18nTable?: string; withId?: boolean; inline?: readonly string[]; split?: TableSpec['split'] } = {},
): TableSpec => ({
  table,
  cols,
  i18n: Object.keys(cols).some((c) => isText(cols[c]) && !opts.inline?.includes(c)),
  i18nTable: opts.i18nTable ?? `${table}_i18n`,
  withId: opts.withId ?? true,
  inline: opts.inline ?? [],
  split: opts.split,
});

export const TABLES = {
  locations: spec('locations', {
    slug: 'plain',
    type: 'plain',
    parent_id: 'plain',
    depth: 'plain',
    latitude: 'plain',
    longitude: 'plain',
    postcode_prefixes: 'json',
    published: 'bool',
    name: 'text',
  }),
  // A listing is three rows (see schema.sql): what is filtered and joined on here, what is shown and
  // searched in LISTING_TEXT (in two tables). Display-only fields (slug, energy label, number, coordinates, image,
  // timestamps) live only in the summary's columns (snapshot-format/summary-json.ts).
  listings: spec('listings', {
    price_eur: 'plain',
    size_m2: 'plain',
    rooms: 'plain',
    furnishing: 'plain',
    property_type: 'plain',
    owner_id: 'plain',
    location_id: 'plain',
    neighbourhood_id: 'plain',
    city_id: 'plain',
    province_id: 'plain',
  }),
  owners: spec('owners', {
    slug: 'plain',
    name: 'plain',
    type: 'plain',
    website_url: 'plain',
    image_url: 'plain',
    phone_numbers: 'json',
    emails: 'json',
    areas_served: 'json',
    certifications: 'json',
    description_short: 'text',
    description: 'text',
    updated_at: 'plain',
  }),
  internet_providers: spec('internet_providers', {
    slug: 'plain',
    name: 'plain',
    website_url: 'plain',
    postcode_check_url: 'plain',
    logo_url: 'plain',
    customer_service_url: 'plain',
    support_languages: 'json',
    description: 'text',
    support_details: 'text',
    strengths: 'textlist',
    considerations: 'textlist',
    last_verified_at: 'plain',
    updated_at: 'plain',
  }),
  internet_plans: spec('internet_plans', {
    provider_id: 'plain',
    name: 'plain',
    connection_type: 'plain',
    download_mbps: 'plain',
    upload_mbps: 'plain',
    minimum_contract_months: 'plain',
    regular_monthly_price_cents: 'plain',
    intro_monthly_price_cents: 'plain',
    intro_duration_months: 'plain',
    activation_fee_cents: 'plain',
    installation_fee_cents: 'plain',
    currency: 'plain',
    official_url: 'plain',
    postcode_check_url: 'plain',
    availability_status: 'plain',
    description: 'text',
    last_verified_at: 'plain',
    updated_at: 'plain',
  }),
  insurance_providers: spec('insurance_providers', {
    slug: 'plain',
    name: 'plain',
    website_url: 'plain',
    logo_url: 'plain',
    customer_service_url: 'plain',
    complaints_url: 'plain',
    last_verified_at: 'plain',
    updated_at: 'plain',
  }),
  insurance_products: spec('insurance_products', {
    slug: 'plain',
    provider_id: 'plain',
    name: 'plain',
    official_name: 'plain',
    insurance_type: 'plain',
    product_kind: 'plain',
    availability: 'plain',
    official_url: 'plain',
    quote_url: 'plain',
    headline: 'text',
    summary: 'text',
    last_verified_at: 'plain',
    updated_at: 'plain',
  }),
  platforms: spec('platforms', {
    slug: 'plain',
    name: 'plain',
    url: 'plain',
    logo_url: 'plain',
    type: 'plain',
    category: 'plain',
    registration_required: 'bool',
    registration_fee_amount: 'plain',
    subscription_fee_from: 'plain',
    fee_currency: 'plain',
    headline: 'text',
    features: 'textlist',
    attributes: 'json',
    description: 'text',
    pricing_details: 'text',
    content: 'text',
    last_verified_at: 'plain',
    updated_at: 'plain',
  }),
  articles: spec('articles', {
    slug: 'plain',
    title: 'text',
    description: 'text',
    content: 'text',
    category: 'plain',
    location_id: 'plain',
    created_at: 'plain',
    updated_at: 'plain',
  }),
  glossary: spec('glossary', { slug: 'plain', term: 'text', definition: 'text', updated_at: 'plain' }),
  metrics: spec('metrics', {
    name: 'text',
    description: 'text',
    unit: 'plain',
    aggregation: 'plain',
    min_sample_size: 'plain',
  }),
} as const;
export type TableName = keyof typeof TABLES;

/**
 * The text rows of a listing (schema.sql): what a page of summaries shows goes to listing_summary, the rest of
 * what the detail shows and q searches to listing_text. Its translations are the listings' (listings_i18n), but
 * for the title, which a page of summaries reads in every locale: it is kept in the row (title_nl, title_de, ...).
 * One spec for both tables, so that a record's missing translations are counted once.
 */
export const LISTING_TEXT = spec(
  'listing_text',
  {
    ...Object.fromEntries(SUMMARY_COLUMNS.map((c) => [c, 'plain' as const])),
    title: 'text',
    city_id: 'plain',
    street: 'plain',
    postcode: 'plain',
    description: 'text',
    images: 'json',
    attributes: 'json',
    sources: 'json',
  },
  {
    i18nTable: 'listings_i18n',
    withId: false,
    inline: ['title'],
    split: { table: 'listing_summary', fields: [...SUMMARY_COLUMNS, 'title', 'city_id'] },
  },
);

/** The tables a listing is a row of, each keyed by the same rid: the filter columns, the summary, the rest of the text. */
export const LISTING_TABLES = [TABLES.listings.table, LISTING_TEXT.split!.table, LISTING_TEXT.table] as const;

type Rec = Record<string, unknown>;

function columnValue(kind: Kind, value: unknown, locale: string): unknown {
  if (value === undefined || value === null) return null;
  switch (kind) {
    case 'plain':
      return value;
    case 'bool':
      return value ? 1 : 0;
    case 'json':
      return JSON.stringify(value);
    case 'text':
      return (value as Rec)[locale] ?? null;
    case 'textlist': {
      const list = (value as Rec)[locale];
      return list === undefined ? null : JSON.stringify(list);
    }
  }
}

/**
 * A record as positional rows: the base row (rid, id, then the spec's columns and its inline fields' columns per
 * locale) and, per locale that has
 * any translation, the locale table's row (k, rid, locale, then the translated columns).
 */
export interface Rows {
  base: unknown[];
  i18n: unknown[][];
  missing: string[];
}

/** A table's columns as arrays, worked out once per table (rowsOf runs once per record: 751k listings). */
interface Plan {
  /** The base row's columns after rid (and id): their names, source fields, kinds and locales. */
  names: string[];
  fields: string[];
  kinds: Kind[];
  locales: string[];
  /** The locale table's columns after k, rid and locale. */
  translated: string[];
  translatedKinds: Kind[];
}
const plans = new WeakMap<TableSpec, Plan>();
function planOf(t: TableSpec): Plan {
  let p = plans.get(t);
  if (!p) {
    const cols = Object.keys(t.cols).map((field) => ({ name: field, field, locale: 'en' }));
    for (const field of t.inline)
      for (const locale of TRANSLATED_LOCALES) cols.push({ name: `${field}_${locale}`, field, locale });
    const translated = Object.keys(t.cols).filter((c) => isText(t.cols[c]) && !t.inline.includes(c));
    p = {
      names: cols.map((c) => c.name),
      fields: cols.map((c) => c.field),
      kinds: cols.map((c) => t.cols[c.field]),
      locales: cols.map((c) => c.locale),
      translated,
      translatedKinds: translated.map((c) => t.cols[c]),
    };
    plans.set(t, p);
  }
  return p;
}

/** Pure (no database): usable in a worker thread. */
export function rowsOf(t: TableSpec, rid: number, rec: Rec): Rows {
  const { names, fields, kinds, locales, translated, translatedKinds } = planOf(t);
  const first = t.withId ? 2 : 1;
  const base: unknown[] = new Array(names.length + first);
  base[0] = rid;
  if (t.withId) base[1] = rec.id;
  for (let k = 0; k < names.length; k++) base[k + first] = columnValue(kinds[k], rec[fields[k]], locales[k]);
  const i18n: unknown[][] = [];
  const missing: string[] = [];
  if (translated.length || t.inline.length) {
    for (const locale of TRANSLATED_LOCALES) {
      const row: unknown[] = new Array(translated.length + 3);
      row[0] = rid * 8 + LOCALE_CODE[locale];
      row[1] = rid;
      row[2] = locale;
      let any = false;
      let gap = false;
      for (let k = 0; k < translated.length; k++) {
        const source = rec[translated[k]];
        const value = columnValue(translatedKinds[k], source, locale);
        row[k + 3] = value;
        if (value !== null) any = true;
        else if (source != null) gap = true;
      }
      for (const f of t.inline) if (rec[f] != null && columnValue(t.cols[f], rec[f], locale) === null) gap = true;
      if (gap) missing.push(locale);
      if (any) i18n.push(row);
    }
  }
  return { base, i18n, missing };
}

/** Positional inserts for one table (and its split-off second table) and its locale table. */
export interface TableWriter {
  spec: TableSpec;
  insert(rid: number, rec: Rec): void;
  insertRows(rows: Rows): void;
}

/** `onMissingTranslation(locale)` is called once per record and locale that lacks a translation of some text. */
export function tableWriter(db: Database, t: TableSpec, onMissingTranslation?: (locale: string) => void): TableWriter {
  const { names, fields, translated } = planOf(t);
  const head = t.withId ? ['rid', 'id'] : ['rid'];
  const cols = [...head, ...names];
  // The base row's positions that each table takes: rid in both, a split field's columns in the second only.
  const second = (i: number) => i >= head.length && t.split?.fields.includes(fields[i - head.length]) === true;
  const positions = (inSecond: boolean) => cols.flatMap((_, i) => (i === 0 || second(i) === inSecond ? [i] : []));
  const insertOf = (table: string, at: number[]) => {
    const stmt = db.prepare(
      `INSERT INTO ${table} (${at.map((i) => cols[i]).join(', ')}) VALUES (${at.map(() => '?').join(', ')})`,
    );
    if (at.length === cols.length) return (row: unknown[]) => void stmt.run(row);
    const picked: unknown[] = new Array(at.length);
    return (row: unknown[]) => {
      for (let k = 0; k < at.length; k++) picked[k] = row[at[k]];
      stmt.run(picked);
    };
  };
  const inserts = [insertOf(t.table, positions(false))];
  if (t.split) inserts.push(insertOf(t.split.table, positions(true)));
  const i18n: Statement | null = t.i18n
    ? db.prepare(
        `INSERT INTO ${t.i18nTable} (k, rid, locale, ${translated.join(', ')}) VALUES (${['k', 'rid', 'locale', ...translated].map(() => '?').join(', ')})`,
      )
    : null;
  const insertRows = (rows: Rows) => {
    for (const insert of inserts) insert(rows.base);
    for (const r of rows.i18n) i18n!.run(r);
    if (onMissingTranslation) for (const l of rows.missing) onMissingTranslation(l);
  };
  return { spec: t, insertRows, insert: (rid, rec) => insertRows(rowsOf(t, rid, rec)) };
}
