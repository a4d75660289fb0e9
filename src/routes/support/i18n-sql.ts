// SQL for translated fields: the requested locale's row joined by its key, each field falling back to English,
// and which languages a row's translated fields were served in (for the Content-Language header).
import { LOCALE_CODE, type Locale, localeKeySql } from '../../../snapshot-format/locales.ts';
import { LANG_COLUMN } from '../../http/content-language.ts';

/** LEFT JOIN of a table's translations in the requested locale: one rowid lookup. */
export const i18nJoin = (table: string, alias: string, t = 't') =>
  `LEFT JOIN ${table}_i18n ${t} ON ${t}.k = ${localeKeySql(alias)}`;

/** The same join for a locale fixed when the statement is prepared (no @locale parameter). */
export const i18nJoinIn = (table: string, alias: string, locale: Locale, t = 't') =>
  `LEFT JOIN ${table}_i18n ${t} ON ${t}.k = ${alias}.rid * 8 + ${LOCALE_CODE[locale]}`;

/**
 * Languages of a row's translated columns as bits (see ../http/content-language.ts): 1 when one of them came
 * from the translation, 2 when one fell back to English (no translation, an English value). Computed by SQLite
 * in the same statement: no JavaScript per column or per row.
 */
export const langBits = (alias: string, cols: string[], t = 't') =>
  langBitsOf(cols.map((c) => [`${t}.${c}`, `${alias}.${c}`]));

/** langBits of columns given as [translation, English] SQL expressions. */
export const langBitsOf = (cols: [translated: string, english: string][]) =>
  `(${cols.map(([t]) => `(${t} IS NOT NULL)`).join(' | ')}) | ((${cols.map(([t, en]) => `(${t} IS NULL AND ${en} IS NOT NULL)`).join(' | ')}) << 1)`;

/** A translated column's value in the requested locale: the translation, else the English value. */
export const trValue = (alias: string, col: string, t = 't') => `COALESCE(${t}.${col}, ${alias}.${col})`;

/**
 * trValue for each translated column (field-by-field fallback to English), then the row's language bits as the
 * column LANG_COLUMN, which the page and detail helpers take out of the row.
 */
export const tr = (alias: string, cols: string[], t = 't') =>
  `${cols.map((c) => `${trValue(alias, c, t)} AS ${c}`).join(', ')}, ${langBits(alias, cols, t)} AS ${LANG_COLUMN}`;
