// The snapshot's tables as the compiler fills them: each table's columns and how a source field becomes each one
// (write.ts maps records to rows by these specs).
import { SUMMARY_COLUMNS } from '../snapshot-format/summary-json.ts';

/** How a source field becomes a column: as is, the English text of a locale map, JSON text, or 0/1. */
export type Kind = 'plain' | 'text' | 'textlist' | 'json' | 'bool';
export const isText = (k: Kind) => k === 'text' || k === 'textlist';
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
