// The source data format: one valibot schema per NDJSON file. This file IS the format; data/README.md explains it.
import * as v from 'valibot';
import { TRANSLATED_LOCALES } from '../snapshot-format/locales.ts';
import { RESOURCES as RESOURCE_NAMES, type ResourceName } from '../snapshot-format/resources.ts';

const idPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
export const Id = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(120),
  v.regex(idPattern, 'must be 1-120 characters of A-Z a-z 0-9 . _ : - starting with a letter or digit'),
);
const Ref = Id;
const Str = (max = 500) => v.pipe(v.string(), v.minLength(1), v.maxLength(max));
const Code = v.pipe(v.string(), v.minLength(1), v.maxLength(120));
const Url = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.regex(/^https?:\/\/[^\s/?#]+[^\s]*$/i, 'must be an absolute http or https URL'),
);
/**
 * An ISO 8601 timestamp with a time zone, on a real calendar date (no 31 February) and a real time of
 * day (no 25:00, no minute 60; the earlier check let those through), with an offset of at most ±23:59.
 */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export function isTimestamp(s: string): boolean {
  const m = TIMESTAMP.exec(s);
  if (!m) return false;
  const year = +m[1],
    month = +m[2],
    day = +m[3];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS[month - 1])) return false;
  if (+m[4] > 23 || +m[5] > 59 || (m[6] !== undefined && +m[6] > 59)) return false;
  return m[7] === undefined || (+m[7] <= 23 && +m[8] <= 59);
}
/**
 * A valid timestamp in the form the API serves: RFC 3339 (what OpenAPI's `date-time` means), which needs
 * seconds. ISO 8601 lets a source leave them out (`2025-01-31T12:00+01:00`); they are added as `:00`, the
 * same instant. Position 16 is the seconds' colon when there are seconds, else the zone.
 */
export const withSeconds = (s: string): string =>
  s.charCodeAt(16) === 58 /* : */ ? s : `${s.slice(0, 16)}:00${s.slice(16)}`;
const Timestamp = v.pipe(
  v.string(),
  v.check(
    isTimestamp,
    'must be an ISO 8601 timestamp with time zone on a real date and time of day, e.g. 2025-01-31T12:00:00Z',
  ),
  v.transform(withSeconds),
);
/** Keys a record (valibot's, and any JavaScript object) does not keep as data: refused, never silently dropped. */
const RESERVED_KEYS = ['__proto__', 'prototype', 'constructor'];
/** Free-form attributes: any JSON object (top-level keys other than RESERVED_KEYS), at most 16 KB serialised. */
const Attributes = v.pipe(
  v.unknown(),
  v.check(
    (o) => typeof o !== 'object' || o === null || !RESERVED_KEYS.some((k) => Object.hasOwn(o, k)),
    `must not have the keys ${RESERVED_KEYS.join(', ')}`,
  ),
  v.record(v.string(), v.unknown()),
  v.check((o) => JSON.stringify(o).length <= 16_384, 'must be at most 16 KB as JSON'),
);
const NonNegative = v.pipe(v.number(), v.finite(), v.minValue(0, 'must not be negative'));
const NonNegativeInt = v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must not be negative'));
const Cents = NonNegativeInt;
const StrList = v.array(Str(500));
const Published = v.boolean();

type Translated = (typeof TRANSLATED_LOCALES)[number];
/** One value per locale: English required, every translated locale optional, no other keys. */
function translatable<S extends v.GenericSchema>(s: S) {
  const entries = { en: s } as { en: S } & { [L in Translated]: v.OptionalSchema<S, undefined> };
  for (const l of TRANSLATED_LOCALES) (entries as Record<string, v.GenericSchema>)[l] = v.optional(s);
  return v.strictObject(entries);
}
/** A translatable text: {"en": "...", "nl": "..."}. */
export const Text = (max = 100_000) => translatable(v.pipe(v.string(), v.minLength(1), v.maxLength(max)));
/** A translatable list of strings: {"en": ["..."], "nl": ["..."]}. */
export const TextList = () => translatable(v.array(Str(500)));
const n = <T extends v.GenericSchema>(s: T) => v.nullable(s);
const opt = <T extends v.GenericSchema>(s: T) => v.nullish(s, null);

export const LocationSource = v.strictObject({
  id: Id,
  slug: Str(200),
  type: v.picklist(['province', 'city', 'neighbourhood']),
  parent_id: n(Ref),
  name: Text(200),
  latitude: opt(v.pipe(v.number(), v.minValue(-90), v.maxValue(90))),
  longitude: opt(v.pipe(v.number(), v.minValue(-180), v.maxValue(180))),
  postcode_prefixes: opt(v.array(v.pipe(v.string(), v.regex(/^[1-9][0-9]{0,3}$/, 'must be 1-4 digits')))),
  published: Published,
});

export const ListingSource = v.strictObject({
  id: Id,
  slug: Str(200),
  offer_type: v.picklist(['rent', 'sale']),
  active: v.boolean(),
  published: Published,
  title: Text(500),
  description: opt(Text()),
  price_eur: opt(v.pipe(NonNegative, v.maxValue(10_000_000))),
  size_m2: opt(v.pipe(NonNegative, v.maxValue(10_000_000))),
  rooms: opt(v.pipe(NonNegative, v.maxValue(100))),
  furnishing: opt(v.picklist(['SHELL', 'UPHOLSTERED', 'FURNISHED'])),
  property_type: opt(Code),
  energy_label: opt(Code),
  owner_id: opt(Ref),
  location_id: Ref,
  street: opt(Str(200)),
  number: opt(Str(40)),
  // Stored in one form, "1012 AB", whether the source wrote "1012AB" or "1012 AB".
  postcode: opt(
    v.pipe(
      v.string(),
      v.regex(/^[1-9][0-9]{3} ?[A-Z]{2}$/, 'must be a Dutch postcode like 1012 AB'),
      v.transform((p) => `${p.slice(0, 4)} ${p.slice(-2)}`),
    ),
  ),
  latitude: opt(v.pipe(v.number(), v.minValue(-90), v.maxValue(90))),
  longitude: opt(v.pipe(v.number(), v.minValue(-180), v.maxValue(180))),
  image_url: opt(Url),
  images: opt(v.array(Url)),
  attributes: opt(Attributes),
  sources: opt(v.array(v.strictObject({ url: Url, type: Code }))),
  first_seen_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const OwnerSource = v.strictObject({
  id: Id,
  slug: opt(Str(200)),
  name: opt(Str(300)),
  type: opt(Code),
  website_url: opt(Url),
  image_url: opt(Url),
  phone_numbers: opt(StrList),
  emails: opt(StrList),
  areas_served: opt(StrList),
  certifications: opt(StrList),
  description_short: opt(Text(2000)),
  description: opt(Text()),
  published: Published,
  updated_at: opt(Timestamp),
});

export const InternetProviderSource = v.strictObject({
  id: Id,
  slug: Str(200),
  name: Str(300),
  website_url: opt(Url),
  postcode_check_url: opt(Url),
  logo_url: opt(Url),
  customer_service_url: opt(Url),
  support_languages: opt(v.array(Code)),
  description: opt(Text()),
  support_details: opt(Text()),
  strengths: opt(TextList()),
  considerations: opt(TextList()),
  published: Published,
  last_verified_at: opt(Timestamp),
  updated_at: opt(Timestamp),
});

export const InternetPlanSource = v.strictObject({
  id: Id,
  provider_id: Ref,
  name: Str(300),
  connection_type: opt(Code),
  download_mbps: opt(v.pipe(NonNegative, v.maxValue(100_000))),
  upload_mbps: opt(v.pipe(NonNegative, v.maxValue(100_000))),
  minimum_contract_months: opt(NonNegative),
  regular_monthly_price_cents: opt(Cents),
  intro_monthly_price_cents: opt(Cents),
  intro_duration_months: opt(NonNegativeInt),
  activation_fee_cents: opt(Cents),
  installation_fee_cents: opt(Cents),
  currency: opt(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code like EUR'))),
  official_url: opt(Url),
  postcode_check_url: opt(Url),
  availability_status: opt(Code),
  description: opt(Text()),
  published: Published,
  last_verified_at: opt(Timestamp),
  updated_at: opt(Timestamp),
});

export const InsuranceProviderSource = v.strictObject({
  id: Id,
  slug: Str(200),
  name: Str(300),
  website_url: opt(Url),
  logo_url: opt(Url),
  customer_service_url: opt(Url),
  complaints_url: opt(Url),
  published: Published,
  last_verified_at: opt(Timestamp),
  updated_at: opt(Timestamp),
});

export const InsuranceProductSource = v.strictObject({
  id: Id,
  slug: Str(200),
  provider_id: Ref,
  name: Str(300),
  official_name: opt(Str(300)),
  insurance_type: opt(Code),
  product_kind: opt(Code),
  availability: opt(Code),
  official_url: opt(Url),
  quote_url: opt(Url),
  headline: opt(Text(500)),
  summary: opt(Text()),
  published: Published,
  last_verified_at: opt(Timestamp),
  updated_at: opt(Timestamp),
});

export const PlatformSource = v.strictObject({
  id: Id,
  slug: Str(200),
  name: Str(300),
  url: opt(Url),
  logo_url: opt(Url),
  type: opt(Code),
  category: opt(Code),
  registration_required: opt(v.boolean()),
  registration_fee_amount: opt(NonNegative),
  subscription_fee_from: opt(NonNegative),
  fee_currency: opt(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code like EUR'))),
  headline: opt(Text(500)),
  features: opt(TextList()),
  attributes: opt(Attributes),
  description: opt(Text()),
  pricing_details: opt(Text()),
  content: opt(Text()),
  published: Published,
  last_verified_at: opt(Timestamp),
  updated_at: opt(Timestamp),
});

export const ArticleSource = v.strictObject({
  id: Id,
  slug: Str(200),
  title: Text(500),
  description: opt(Text(5000)),
  content: opt(Text()),
  category: opt(Code),
  location_id: opt(Ref),
  published: Published,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const GlossarySource = v.strictObject({
  id: Id,
  slug: Str(200),
  term: Text(300),
  definition: Text(20_000),
  published: Published,
  updated_at: opt(Timestamp),
});

/** How the compiler computes a metric's monthly value from a cohort of rent listings (fixed vocabulary). */
export const METRIC_AGGREGATIONS = ['median_price_eur', 'median_price_per_m2', 'average_price_eur', 'count'] as const;

export const MetricSource = v.strictObject({
  id: Id,
  name: Text(300),
  description: opt(Text(5000)),
  unit: Code,
  aggregation: v.picklist(METRIC_AGGREGATIONS),
  min_sample_size: v.pipe(
    v.number(),
    v.integer('must be an integer'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(1_000_000),
  ),
});

const SCHEMAS = {
  locations: LocationSource,
  owners: OwnerSource,
  listings: ListingSource,
  internet_providers: InternetProviderSource,
  internet_plans: InternetPlanSource,
  insurance_providers: InsuranceProviderSource,
  insurance_products: InsuranceProductSource,
  platforms: PlatformSource,
  articles: ArticleSource,
  glossary: GlossarySource,
  metrics: MetricSource,
} satisfies Record<ResourceName, unknown>;

/** Every source file, in the order the compiler reads them (references point backwards only). */
export const RESOURCES = RESOURCE_NAMES.map((name) => ({ name, file: `${name}.ndjson`, schema: SCHEMAS[name] }));
export type { ResourceName };

export type LocationRec = v.InferOutput<typeof LocationSource>;
export type ListingRec = v.InferOutput<typeof ListingSource>;
export type OwnerRec = v.InferOutput<typeof OwnerSource>;
export type InternetProviderRec = v.InferOutput<typeof InternetProviderSource>;
export type InternetPlanRec = v.InferOutput<typeof InternetPlanSource>;
export type InsuranceProviderRec = v.InferOutput<typeof InsuranceProviderSource>;
export type InsuranceProductRec = v.InferOutput<typeof InsuranceProductSource>;
export type PlatformRec = v.InferOutput<typeof PlatformSource>;
export type ArticleRec = v.InferOutput<typeof ArticleSource>;
export type GlossaryRec = v.InferOutput<typeof GlossarySource>;
export type MetricRec = v.InferOutput<typeof MetricSource>;
