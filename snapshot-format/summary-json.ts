// The pre-serialised listing summary: written by the compiler into listing_text.summary, completed by the server per locale.
//
// A search page of 20 listings spent most of its time turning 20-column rows into JS objects (better-sqlite3
// builds an object per row, ~0.3-0.6 µs a column) and those objects back into JSON. The summary's JSON is
// instead written once at build time (values only), leaving out the only locale-dependent values: the title
// and the city's display name. A request reads three columns per listing and puts the keys back in.

/** Separates the values. JSON text never holds a raw control character (JSON.stringify escapes them all). */
export const SEP = '\u0001';

/**
 * The summary's fields in the API's order; the last six are inside "location". The stored text holds
 * only the values, as JSON text, joined by SEP (the keys would be half of it, the same in every row);
 * the title and city places are empty and filled per request.
 */
const FIELDS = [
  'id',
  'slug',
  'title',
  'price_eur',
  'size_m2',
  'rooms',
  'furnishing',
  'property_type',
  'energy_label',
  'owner_id',
  'image_url',
  'created_at',
  'updated_at',
  'city',
  'street',
  'number',
  'postcode',
  'latitude',
  'longitude',
] as const;
const TITLE = FIELDS.indexOf('title');
const CITY = FIELDS.indexOf('city');
/** What goes before each value. */
const KEYS = FIELDS.map(
  (f, i) => `${(i === 0 ? '{' : ',') + (f === 'city' ? '"location":{' : '') + JSON.stringify(f)}:`,
);

/** The summary fields as read from the source record (null or undefined where absent). */
export type SummaryFields = Record<Exclude<(typeof FIELDS)[number], 'title' | 'city'>, unknown>;

/** The stored form of a listing's summary (the compiler writes it into listing_text.summary). */
export function summaryTemplate(r: SummaryFields): string {
  return FIELDS.map((f) => (f === 'title' || f === 'city' ? '' : JSON.stringify(r[f] ?? null))).join(SEP);
}

/** The summary JSON: the stored values with their keys, and the title and city (JSON text) in their places. */
export const fillSummary = (template: string, titleJson: string, cityJson: string): string =>
  fillValues(template.split(SEP), titleJson, cityJson);

/** fillSummary on a template already split at SEP (extra trailing items are ignored). */
export function fillValues(values: string[], titleJson: string, cityJson: string): string {
  let out = '';
  for (let i = 0; i < KEYS.length; i++) out += KEYS[i] + (i === TITLE ? titleJson : i === CITY ? cityJson : values[i]);
  return `${out}}}`;
}
