// What a listing shows, as JSON text: the page of summaries and the detail, from listing_text and the per-snapshot
// place names, in the requested locale with the language bits of what was served (Content-Language).
import type { Database } from 'better-sqlite3';
import { LOCALES, type Locale } from '../../snapshot-format/locales.ts';
import { fillSummary, fillValues, SEP } from '../../snapshot-format/summary-json.ts';
import { IN_ENGLISH, IN_LOCALE } from '../http/content-language.ts';
import { i18nJoinIn, langBitsOf } from './i18n-sql.ts';

/** Separates the listings of a page in byRids' one string (SEP separates the values within one). */
const ROW_SEP = '\u0002';
/** The separators as SQL expressions, so the statement and the code that splits its result cannot drift apart. */
const sqlChar = (c: string) => `char(${c.charCodeAt(0)})`;

// A listing's summary is JSON text written by the compiler (listing_text.summary, see snapshot-format/summary-json.ts):
// a request reads it, the title in the requested locale and the city id, and puts them together.
// The city's display name comes from a per-snapshot map of location names, not a join per row.
// Each statement is prepared per locale. The title's translations are columns of listing_text (title_nl, ...),
// so a page in any locale reads one row a listing; a detail also joins its description's translation
// (listings_i18n). Each also yields the language bits of its translated columns (see ../http/content-language.ts).
type Localised<T> = Record<Locale, T>;
type Translated = 'title' | 'description';
type Sql = {
  /** The column in the requested locale, falling back to English. */
  text: (col: Translated) => string;
  /** The join a detail's description needs ('' in English). */
  join: string;
  lang: (cols: Translated[]) => string;
};
const sqlIn = (locale: Locale): Sql => {
  if (locale === 'en')
    return {
      text: (c) => `l.${c}`,
      join: '',
      lang: (cols) => `((${cols.map((c) => `(l.${c} IS NOT NULL)`).join(' | ')}) << 1)`,
    };
  const tr = { title: `l.title_${locale}`, description: 't.description' };
  return {
    text: (c) => `COALESCE(${tr[c]}, l.${c})`,
    join: i18nJoinIn('listings', 'l', locale),
    lang: (cols) => langBitsOf(cols.map((c) => [tr[c], `l.${c}`])),
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
    // A whole page as one string (one value to hand to JS instead of six per row): per listing its
    // summary values, title (JSON), city id, rid and the title's language bits joined by SEP; listings
    // joined by ROW_SEP. What is shown is in listing_text (l here; schema.sql), keyed by the same rid as listings (f).
    byRids: localised(({ text, lang }) =>
      db
        .prepare(`SELECT group_concat(l.summary || ${sqlChar(SEP)} || json_quote(${text('title')}) || ${sqlChar(SEP)} || l.city_id || ${sqlChar(SEP)} || l.rid || ${sqlChar(SEP)} || (${lang(['title'])}), ${sqlChar(ROW_SEP)})
      FROM listing_text l WHERE l.rid IN (SELECT value FROM json_each(@rids))`)
        .pluck(),
    ),
    // [rid, id, summary, title, city_id, description, images, attributes, sources, language bits]
    byId: localised(({ text, join, lang }) =>
      db
        .prepare(`SELECT l.rid, f.id, l.summary, ${text('title')}, l.city_id, ${text('description')}, l.images, l.attributes, l.sources,
        ${lang(['title', 'description'])}
      FROM listings f CROSS JOIN listing_text l ON l.rid = f.rid ${join} WHERE f.id = @id`)
        .raw(),
    ),
    city: cityNames(db),
  };
}
type TextStmts = ReturnType<typeof prepareText>;
/** What an answer gathers: the requested locale and the language bits of what was served. */
type Answer = { lang: number; meta: { locale: string } };

type SummaryRow = [rid: number, id: string, template: string, title: string, city_id: string];
type DetailRow = [
  ...SummaryRow,
  description: string | null,
  images: string | null,
  attributes: string | null,
  sources: string | null,
  lang: number,
];
/** The detail JSON: the summary plus description and the JSON columns as stored (already JSON text). */
function detailOf(st: TextStmts, r: DetailRow, ctx: Answer): string {
  const city = st.city(r[4], ctx.meta.locale);
  ctx.lang |= r[9] | city.lang;
  const s = fillSummary(r[2], JSON.stringify(r[3]), city.json);
  return `${s.slice(0, -1)},"description":${JSON.stringify(r[5])},"images":${r[6] ?? 'null'},"attributes":${r[7] ?? 'null'},"sources":${r[8] ?? 'null'}}`;
}

/** The detail JSON of the listing with this id in the answer's locale, or undefined when there is none. */
export function detailText(st: TextStmts, id: string, ctx: Answer): string | undefined {
  const locale = ctx.meta.locale;
  const row = forLocale(st.byId, locale).get({ id }) as DetailRow | undefined;
  return row === undefined ? undefined : detailOf(st, row, ctx);
}

/**
 * A listing's summary JSON and its rid; its id (read for a page's cursor only) decoded when asked for; the
 * language bits of its title and city name.
 */
export class PageRow {
  constructor(
    readonly rid: number,
    private readonly idJson: string,
    readonly json: string,
    readonly lang: number,
  ) {}
  get id(): string {
    return JSON.parse(this.idJson) as string;
  }
}

/** Summaries (rid, id and JSON) of the listings with these rids, in rid order (= id order). */
export function rowsByRids(st: TextStmts, rids: number[], locale: string): PageRow[] {
  if (!rids.length) return [];
  const page = forLocale(st.byRids, locale).get({ rids: JSON.stringify(rids) }) as string | null;
  if (page === null) return [];
  const rows = page.split(ROW_SEP).map((row) => {
    const v = row.split(SEP); // the summary's values, then title, city id, rid, language bits
    const n = v.length;
    return { rid: Number(v[n - 2]), v, n };
  });
  // The rows come in rid order from the IN list's index, but SQL does not promise it: check, sort if not.
  for (let i = 1; i < rows.length; i++)
    if (rows[i].rid < rows[i - 1].rid) {
      rows.sort((a, b) => a.rid - b.rid);
      break;
    }
  return rows.map(({ rid, v, n }) => {
    const city = st.city(v[n - 3], locale);
    return new PageRow(rid, v[0], fillValues(v, v[n - 4], city.json), Number(v[n - 1]) | city.lang);
  });
}
