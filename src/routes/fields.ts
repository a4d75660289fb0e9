// Response fields: JSON-schema shorthands for the OpenAPI document, and mappers from stored values to API values.
import type { Database } from 'better-sqlite3';
import { LANG_COLUMN } from '../http/content-language.ts';
import { i18nJoin, langBits } from './i18n-sql.ts';

/** JSON-schema shorthands for response items; every documented field is present and may be null. */
export const J = {
  str: { type: ['string', 'null'] },
  num: { type: ['number', 'null'] },
  int: { type: ['integer', 'null'] },
  bool: { type: ['boolean', 'null'] },
  ts: { type: ['string', 'null'], format: 'date-time' },
  strs: { type: ['array', 'null'], items: { type: 'string' } },
  obj: { type: ['object', 'null'] },
  /** An object with exactly these properties, every one present; the description and example are for the OpenAPI document. */
  object(props: Record<string, unknown>, doc: { description?: string; example?: Record<string, unknown> } = {}) {
    return {
      type: 'object',
      ...(doc.description ? { description: doc.description } : {}),
      properties: props,
      required: Object.keys(props),
      additionalProperties: false,
      ...(doc.example ? { examples: [doc.example] } : {}),
    };
  },
};

export const parseJson = <T = unknown>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

/**
 * How a stored column becomes its API value: as it is, stored JSON text (the compiler writes it with
 * JSON.stringify, build-snapshot/write.ts, so it is already the text JSON.stringify would make of the parsed
 * value), or an SQLite 0/1 as a boolean.
 */
export type FieldKind = 'value' | 'json' | 'bool';

/**
 * One item's JSON text from its row, the fields in the given order: a function put together once per item
 * shape, so a page of items is text from the start. Parsing the JSON columns into objects only to serialise
 * them again (and the objects around them) was a third of an owners page's CPU.
 */
export function itemJson(fields: Record<string, FieldKind>): (row: Record<string, any>) => string {
  const parts = Object.entries(fields).map(([name, kind], i) => {
    const key = JSON.stringify(`${i === 0 ? '{' : ','}${JSON.stringify(name)}:`);
    const at = `r[${JSON.stringify(name)}]`;
    const value =
      kind === 'json'
        ? `(${at} ?? 'null')`
        : kind === 'bool'
          ? `(${at} == null ? 'null' : ${at} === 1 ? 'true' : 'false')`
          : `S(${at} ?? null)`;
    return `${key} + ${value}`;
  });
  return new Function('S', `return (r) => ${parts.join(' + ')} + '}';`)(JSON.stringify) as (
    row: Record<string, any>,
  ) => string;
}

/**
 * itemJson's text, made by SQLite in the statement that reads the row: concat() of the keys and each field's JSON
 * text, so that a row hands JavaScript one string instead of a value per field (better-sqlite3 makes a JS value of
 * each: two thirds of the time of a page of 21 owners went there). `translated` fields are read from the requested
 * locale's row, aliased t, falling back to English (COALESCE), as `tr` in ./i18n-sql.ts does.
 *
 * A `value` field must be a TEXT or INTEGER column: json_quote writes those as JSON.stringify does (a string, which
 * SQLite holds as valid UTF-8; an integer), but a REAL as SQLite prints it (100.0, 17 digits), so a REAL column is
 * refused when the statement is prepared.
 */
export function itemSql(
  db: Database,
  table: string,
  alias: string,
  fields: Record<string, FieldKind>,
  translated: readonly string[] = [],
): string {
  const types = new Map(
    (db.pragma(`table_info(${table})`) as { name: string; type: string }[]).map((c) => [c.name, c.type.toUpperCase()]),
  );
  const args = Object.entries(fields).flatMap(([name, kind], i) => {
    const type = types.get(name);
    if (type === undefined) throw new Error(`itemSql: ${table} has no column ${name}`);
    if (kind === 'value' && type !== 'TEXT' && type !== 'INTEGER')
      throw new Error(
        `itemSql: ${table}.${name} is ${type}; json_quote writes only TEXT and INTEGER as JSON.stringify does`,
      );
    const at = translated.includes(name) ? `COALESCE(t.${name}, ${alias}.${name})` : `${alias}.${name}`;
    const value =
      kind === 'json'
        ? `ifnull(${at}, 'null')`
        : kind === 'bool'
          ? `CASE WHEN ${at} IS NULL THEN 'null' WHEN ${at} = 1 THEN 'true' ELSE 'false' END`
          : `json_quote(${at})`;
    return [`'${i === 0 ? '{' : ','}${JSON.stringify(name)}:'`, value];
  });
  return `concat(${args.join(', ')}, '}')`;
}

/** A row of itemSelect: the item's id, its JSON text and, with translated fields, their language bits. */
export type ItemRow = { id: string; json: string; [LANG_COLUMN]?: number };
export const rowJson = (r: Record<string, any>): string => (r as ItemRow).json;

/**
 * SELECT of each row's id, its JSON text (itemSql) and, when some fields are translated, their language bits
 * (LANG_COLUMN) with the requested locale's translations joined (bound as @locale).
 */
export function itemSelect(
  db: Database,
  table: string,
  alias: string,
  fields: Record<string, FieldKind>,
  translated: readonly string[] = [],
): string {
  const json = itemSql(db, table, alias, fields, translated);
  return translated.length
    ? `SELECT ${alias}.id, ${json} AS json, ${langBits(alias, [...translated])} AS ${LANG_COLUMN} FROM ${table} ${alias} ${i18nJoin(table, alias)}`
    : `SELECT ${alias}.id, ${json} AS json FROM ${table} ${alias}`;
}
