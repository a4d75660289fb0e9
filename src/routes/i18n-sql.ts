// SQL for translated fields: the requested locale's row joined by its key, each field falling back to English.
import { localeKeySql } from '../../snapshot-format/locales.ts';

/** LEFT JOIN of a table's translations in the requested locale: one rowid lookup. */
export const i18nJoin = (table: string, alias: string, t = 't') =>
  `LEFT JOIN ${table}_i18n ${t} ON ${t}.k = ${localeKeySql(alias)}`;

/** COALESCE(translation, english) for each translated column: field-by-field fallback to English. */
export const tr = (alias: string, cols: string[], t = 't') =>
  cols.map((c) => `COALESCE(${t}.${c}, ${alias}.${c}) AS ${c}`).join(', ');
