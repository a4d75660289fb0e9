// What a listing shows, as JSON text: the page of summaries and the detail, from listing_summary and listing_text
// and the per-snapshot place names, in the requested locale with the language bits of what was served (Content-Language).
import type { Database } from 'better-sqlite3';
import { LOCALES, type Locale } from '../../../snapshot-format/locales.ts';
import { summarySql } from '../../../snapshot-format/summary-json.ts';
import { IN_ENGLISH, IN_LOCALE } from '../../http/content-language.ts';
import { i18nJoinIn, langBitsOf } from './i18n-sql.ts';

// A listing's summary is put together by SQLite from listing_summary's columns (snapshot-format/summary-json.ts),
// with the title in the requested locale; a page's summaries come back as one string, joined by commas.
// The city's display name comes from a per-snapshot map of location names, not a join per row: SQLite writes the
// city id between two CITY marks in its place and the server puts the name in (JSON text never holds a raw control
// character: JSON.stringify and json_quote escape them, so a mark is only ever a city place's).
const CITY = '\u0002';
const CITY_SQL = `char(${CITY.charCodeAt(0)}), l.city_id, char(${CITY.charCodeAt(0)})`;

// Each statement is prepared per locale. The title's translations are columns of listing_summary (title_nl, ...),
// so a page in any locale reads one row a listing; a detail also reads its listing_text row and joins its
// description's translation (listings_i18n). Each also yields the language bits of its translated columns (see ../http/content-language.ts).
type Localised<T> = Record<Locale, T>;
type Translated = 'title' | 'description';
type Sql = {
  /** The column in the requested locale, falling back to English. */
  text: (col: Translated) => string;
  /** The join a detail's description needs ('' in English). */
  join: string;
  lang: (cols: Translated[]) => string;
};
/** The English text's column: the title in listing_summary (l), the description in listing_text (d). */
const EN: Record<Translated, string> = { title: 'l.title', description: 'd.description' };
const sqlIn = (locale: Locale): Sql => {
  if (locale === 'en')
    return {
      text: (c) => EN[c],
      join: '',
      lang: (cols) => `((${cols.map((c) => `(${EN[c]} IS NOT NULL)`).join(' | ')}) << 1)`,
    };
  const tr = { title: `l.title_${locale}`, description: 't.description' };
  return {
    text: (c) => `COALESCE(${tr[c]}, ${EN[c]})`,
    join: i18nJoinIn('listings', 'l', locale),
    lang: (cols) => langBitsOf(cols.map((c) => [tr[c], EN[c]])),
  };
};
const localised = <T>(build: (sql: Sql) => T): Localised<T> =>
  Object.fromEntries(LOCALES.map((l) => [l, build(sqlIn(l))])) as Localised<T>;
const forLocale = <T>(s: Localised<T>, locale: string) => s[locale as Locale] ?? s.en;

/** A location's display name as JSON text, and its language bits (see ../http/content-language.ts). */
type CityName = { json: string; lang: number };
const NO_CITY: CityName = { json: 'null', lang: 0 };

/** Display names of every location in every locale (a few hundred rows), read once per snapshot. */
function cityNames(db: Database): (id: string, locale: string) => CityName {
  const rows = db
    .prepare(
      `SELECT l.id, l.name, t.locale, t.name AS tname FROM locations l LEFT JOIN locations_i18n t ON t.rid = l.rid`,
    )
    .all() as { id: string; name: string; locale: string | null; tname: string | null }[];
  // One map per locale, the English name where there is no translation: a lookup builds no key string.
  const en = new Map<string, CityName>();
  for (const r of rows) en.set(r.id, r.name === null ? NO_CITY : { json: JSON.stringify(r.name), lang: IN_ENGLISH });
  const byLocale = new Map<string, Map<string, CityName>>(LOCALES.map((l) => [l, new Map(en)]));
  for (const r of rows)
    if (r.locale && r.tname) byLocale.get(r.locale)?.set(r.id, { json: JSON.stringify(r.tname), lang: IN_LOCALE });
  return (id, locale) => (byLocale.get(locale) ?? en).get(id) ?? NO_CITY;
}

/** The statements and the place names a listing's text needs, per snapshot. */
export function prepareText(db: Database) {
  return {
    // The summaries of the listings whose rids are bound as @rids (a JSON array), as one string in the array's
    // order: json_each drives the join (CROSS JOIN keeps it the outer loop) and group_concat appends each row
    // as it is visited (an ORDER BY inside group_concat would sort the row strings in a temporary b-tree
    // on every page). Also the last listing's id (JSON text: a bare column of an aggregate query with one
    // max() takes the row where max() was found) and the language bits of the titles.
    byRids: localised(({ text, lang }) =>
      db
        .prepare(`SELECT group_concat(${summarySql('l', { title: `json_quote(${text('title')})`, city: CITY_SQL })}, ','),
        max(j.key), l.s_id, (sum((${lang(['title'])}) & 1) > 0) | ((sum((${lang(['title'])}) & 2) > 0) << 1)
      FROM json_each(@rids) j CROSS JOIN listing_summary l ON l.rid = j.value`)
        .raw(),
    ),
    // [detail JSON, language bits]
    byId: localised(({ text, join, lang }) =>
      db
        .prepare(`SELECT ${summarySql('l', {
          title: `json_quote(${text('title')})`,
          city: CITY_SQL,
          extra: `',"description":', json_quote(${text('description')}), ',"images":', ifnull(d.images, 'null'), ',"attributes":', ifnull(d.attributes, 'null'), ',"sources":', ifnull(d.sources, 'null')`,
        })}, ${lang(['title', 'description'])}
      FROM listings f CROSS JOIN listing_summary l ON l.rid = f.rid CROSS JOIN listing_text d ON d.rid = f.rid ${join}
      WHERE f.id = @id`)
        .raw(),
    ),
    city: cityNames(db),
  };
}
type TextStmts = ReturnType<typeof prepareText>;
/** JSON text in a locale, with the language bits of the translated text in it (../../http/content-language.ts). */
type Text = { json: string; lang: number };

/**
 * The text with each city place filled with the city's name in `locale`, and the language bits of `lang` and of the
 * names. Split at the marks, every other piece is a city id (quicker than a replace() with a function).
 */
function withCities(st: TextStmts, text: string, locale: string, lang: number): Text {
  const parts = text.split(CITY);
  for (let i = 1; i < parts.length; i += 2) {
    const city = st.city(parts[i], locale);
    lang |= city.lang;
    parts[i] = city.json;
  }
  return { json: parts.length === 1 ? text : parts.join(''), lang };
}

/** The detail JSON of the listing with this id in `locale`, or undefined when there is none. */
export function detailText(st: TextStmts, id: string, locale: string): Text | undefined {
  const row = forLocale(st.byId, locale).get({ id }) as [json: string, lang: number] | undefined;
  return row === undefined ? undefined : withCities(st, row[0], locale, row[1]);
}

/**
 * The summaries of the listings with these rids in `locale`, in the order given, as JSON text joined by commas, with
 * their language bits and the id of the last one (undefined when there are none). Every rid must be a listing's.
 */
export function summariesOf(st: TextStmts, rids: number[], locale: string): Text & { lastId?: string } {
  if (!rids.length) return { json: '', lang: 0 };
  const [json, , lastId, lang] = forLocale(st.byRids, locale).get({ rids: JSON.stringify(rids) }) as [
    string,
    number,
    string,
    number,
  ];
  return { ...withCities(st, json, locale, lang), lastId: JSON.parse(lastId) as string };
}
