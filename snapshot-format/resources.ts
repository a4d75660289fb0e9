// The resources a snapshot holds: each a source file <name>.ndjson, a base table with an `id` column and a
// <name>_i18n table of translations. Listed once, in the order the compiler reads them (references point backwards).
export const RESOURCES = [
  'locations',
  'owners',
  'listings',
  'internet_providers',
  'internet_plans',
  'insurance_providers',
  'insurance_products',
  'platforms',
  'articles',
  'glossary',
  'metrics',
] as const;
export type ResourceName = (typeof RESOURCES)[number];

/** Tables that hold more of a resource's stored columns under the same rid (listings are split in three). */
export const COMPANIONS: Partial<Record<string, string[]>> = { listings: ['listing_summary', 'listing_text'] };
