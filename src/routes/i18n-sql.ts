// SQL for translated fields: the requested locale's row joined by its key, each field falling back to English,
// and which languages a row's translated fields were served in (for the Content-Language header).
import { localeKeySql } from '../../snapshot-format/locales.ts';
import { LANG_COLUMN } from '../http/content-language.ts';

/** LEFT JOIN of a table's translations in the requested locale: one rowid lookup. */
export const i18nJoin = (table: string, alias: string, t = 't') =>
  `LEFT JOIN ${table}_i18n ${t} ON ${t}.k = ${localeKeySql(alias)}`;

/**
 * Languages of a row's translated columns as bits (see ../http/content-language.ts): 1 when one of them came
 * from the translation, 2 when one fell back to English (no translation, an English value). Computed by SQLite
 * in the same statement: no JavaScript per column or per row.
 */
export const langBits = (alias: string, cols: string[], t = 't') =>
  `(${cols.map((c) => `(${t}.${c} IS NOT NULL)`).join(' | ')}) | ((${cols.map((c) => `(${t}.${c} IS NULL AND ${alias}.${c} IS NOT NULL)`).join(' | ')}) << 1)`;

/**
 * COALESCE(translation, english) for each translated column (field-by-field fallback to English), then the
 * row's language bits as the column LANG_COLUMN, which the page and detail helpers take out of the row.
 */
export const tr = (alias: string, cols: string[], t = 't') =>
  `${cols.map((c) => `COALESCE(${t}.${c}, ${alias}.${c}) AS ${c}`).join(', ')}, ${langBits(alias, cols, t)} AS ${LANG_COLUMN}`;
