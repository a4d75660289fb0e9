// The source data format: one valibot schema per NDJSON file, made of the field rules in ./source-fields.ts. These two
// files ARE the format; data/README.md explains it.
import * as v from 'valibot';
import { RESOURCES as RESOURCE_NAMES, type ResourceName } from '../snapshot-format/resources.ts';
import {
  Attributes,
  Cents,
  Code,
  Id,
  NonNegative,
  NonNegativeInt,
  n,
  opt,
  Published,
  Ref,
  Str,
  StrList,
  Text,
  TextList,
  Timestamp,
  Url,
} from './source-fields.ts';

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
