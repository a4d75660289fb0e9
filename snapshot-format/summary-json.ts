// The listing summary as the compiler stores it and as SQL puts it together: one column of JSON text per field.
//
// A page of summaries is built by SQLite in the statement that finds its rows: each row's object is one concat()
// of the keys (literals in the statement) and the stored values, with the title in the requested locale and a
// place for the city's display name, and the rows are joined by group_concat. The server gets one string per page
// and only puts the city names in. Every value is stored as the JSON text JSON.stringify wrote at build time, so
// numbers and strings are served exactly as written; the title goes through json_quote, which writes a valid
// UTF-8 string as JSON.stringify does.

/**
 * Each summary field with its JSON type, in the API's order (the route's OpenAPI schema is built from this): `id` a
 * string always present, `str` a string or null, `num` a number or null, `ts` a date-time string or null.
 */
export const SUMMARY_FIELDS = {
  id: 'id',
  slug: 'str',
  title: 'str',
  price_eur: 'num',
  size_m2: 'num',
  rooms: 'num',
  furnishing: 'str',
  property_type: 'str',
  energy_label: 'str',
  owner_id: 'str',
  image_url: 'str',
  created_at: 'ts',
  updated_at: 'ts',
  location: { city: 'str', street: 'str', number: 'str', postcode: 'str', latitude: 'num', longitude: 'num' },
} as const;
export type SummaryType = 'id' | 'str' | 'num' | 'ts';
SUMMARY_FIELDS satisfies Record<string, SummaryType | Record<string, SummaryType>>;
/** The summary's fields flat, in the API's order; the location's fields (city first) are the last. */
const { location: LOCATION, ...TOP } = SUMMARY_FIELDS;
const FIELDS = [...(Object.keys(TOP) as (keyof typeof TOP)[]), ...(Object.keys(LOCATION) as (keyof typeof LOCATION)[])];
type Field = (typeof FIELDS)[number];
/** The fields whose values depend on the locale: the title and the city's name. Every other field is stored. */
type Stored = Exclude<Field, 'title' | 'city'>;
const isStored = (f: Field): f is Stored => f !== 'title' && f !== 'city';

/** The listing_text column holding a field's JSON text (schema.sql): `s_<field>`. */
const column = (f: Stored) => `s_${f}`;
/** Every stored field's column, in the API's order. */
export const SUMMARY_COLUMNS: readonly string[] = FIELDS.filter(isStored).map(column);

/** The summary fields as read from the source record (null or undefined where absent). */
export type SummaryFields = Record<Stored, unknown>;

/** The stored form of a listing's summary: per column, the field's JSON text ('null' where absent). */
export function summaryColumns(r: SummaryFields): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of FIELDS) if (isStored(f)) out[column(f)] = JSON.stringify(r[f] ?? null);
  return out;
}

/** A string as an SQL literal (the keys hold no single quote, but the rule is kept). */
const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * SQL for the summary object of the row `alias` as JSON text: concat() of the keys, the stored values, `title`
 * (an SQL expression yielding JSON text) and `city` (one or more concat() arguments, comma-separated). `extra`,
 * further concat() arguments, is put after the location object, before the closing brace (the detail's fields).
 */
export function summarySql(alias: string, sql: { title: string; city: string; extra?: string }): string {
  const args: string[] = [];
  FIELDS.forEach((f, i) => {
    args.push(literal(`${(i === 0 ? '{' : ',') + (f === 'city' ? '"location":{' : '') + JSON.stringify(f)}:`));
    args.push(f === 'title' ? sql.title : f === 'city' ? sql.city : `${alias}.${column(f)}`);
  });
  args.push(literal('}'));
  if (sql.extra) args.push(sql.extra);
  args.push(literal('}'));
  return `concat(${args.join(', ')})`;
}
