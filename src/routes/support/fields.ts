// Response fields: JSON-schema shorthands for the OpenAPI document, and mappers from stored values to API values.
import type { Database } from 'better-sqlite3';
import { LANG_COLUMN } from '../../http/content-language.ts';
import { i18nJoin, langBits, trValue } from './i18n-sql.ts';

/** JSON-schema shorthands for response items; every documented field is present and may be null. */
export const J = {
  str: { type: ['string', 'null'] },
  num: { type: ['number', 'null'] },
  int: { type: ['integer', 'null'] },
  bool: { type: ['boolean', 'null'] },
  ts: { type: ['string', 'null'], format: 'date-time' },
  strs: { type: ['array', 'null'], items: { type: 'string' } },
  obj: { type: ['object', 'null'] },
  /**
   * An object with exactly these properties, every one present; the description and examples are for the OpenAPI
   * document (a list's example shows all of `examples`, in their order).
   */
  object(
    props: Record<string, unknown>,
    doc: { description?: string; example?: Record<string, unknown>; examples?: Record<string, unknown>[] } = {},
  ) {
    const examples = doc.examples ?? (doc.example ? [doc.example] : undefined);
    return {
      type: 'object',
      ...(doc.description ? { description: doc.description } : {}),
      properties: props,
      required: Object.keys(props),
      additionalProperties: false,
      ...(examples ? { examples } : {}),
    };
  },
};

/**
 * A response field, declared once per route: how its stored column becomes its API value (FieldKind) and its JSON
 * Schema in the OpenAPI document (schemasOf).
 */
export interface Field {
  kind: FieldKind;
  schema: Record<string, unknown>;
}
/** The fields of J as stored columns: a plain value, stored JSON text (arrays, objects) or an SQLite 0/1. */
export const F = {
  id: { kind: 'value', schema: { type: 'string' } },
  str: { kind: 'value', schema: J.str },
  num: { kind: 'value', schema: J.num },
  int: { kind: 'value', schema: J.int },
  ts: { kind: 'value', schema: J.ts },
  bool: { kind: 'bool', schema: J.bool },
  strs: { kind: 'json', schema: J.strs },
  obj: { kind: 'json', schema: J.obj },
} as const satisfies Record<string, Field>;
export type Fields = Record<string, Field>;
/** The JSON Schema properties of a route's fields, in their order. */
export const schemasOf = (fields: Fields): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, f.schema]));

export const parseJson = <T = unknown>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

/**
 * How a stored column becomes its API value: as it is, stored JSON text (the compiler writes it with
 * JSON.stringify, build-snapshot/write.ts, so it is already the text JSON.stringify would make of the parsed
 * value), or an SQLite 0/1 as a boolean.
 */
export type FieldKind = 'value' | 'json' | 'bool';

/**
 * One item's JSON text from its row, the fields in the given order, so a page of items is text from the start.
 * Parsing the JSON columns into objects only to serialise them again (and the objects around them) was a third
 * of an owners page's CPU.
 */
export function itemJson(fields: Fields): (row: Record<string, any>) => string {
  const parts = Object.entries(fields).map(([name, { kind }], i) => ({
    name,
    kind,
    key: `${i === 0 ? '{' : ','}${JSON.stringify(name)}:`,
  }));
  return (r) => {
    let out = '';
    for (const { name, kind, key } of parts) out += key + fieldJson(kind, r[name]);
    return `${out}}`;
  };
}

/** A stored value's JSON text, by its kind (see FieldKind); a missing value is null. */
function fieldJson(kind: FieldKind, x: any): string {
  if (kind === 'json') return x ?? 'null';
  if (kind === 'bool') return x == null ? 'null' : x === 1 ? 'true' : 'false';
  return JSON.stringify(x ?? null);
}

/** Marks a REAL value in itemSql's text, written as SQLite prints it, for itemText to rewrite as JavaScript does. */
const REAL = '\u0003';
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const REAL_PLACE = new RegExp(`${REAL}([^${REAL}]*)${REAL}`, 'g');

/**
 * itemJson's text, made by SQLite in the statement that reads the row: concat() of the keys and each field's JSON
 * text, so that a row hands JavaScript one string instead of a value per field (better-sqlite3 makes a JS value of
 * each: two thirds of the time of a page of 21 owners went there). `translated` fields are read from the requested
 * locale's row, aliased t, falling back to English (trValue in ./i18n-sql.ts).
 *
 * json_quote writes a string (SQLite holds valid UTF-8) and a safe integer as JSON.stringify does, but not a REAL
 * (100.0, 17 digits) nor an integer past 2^53 (all its digits, where JavaScript reads the nearest double). In a
 * column that may hold those (REAL or INTEGER affinity) they are written between REAL marks as CAST(x AS TEXT),
 * which reads back as the same double, and itemText rewrites them with JSON.stringify. That costs more than twice what better-sqlite3
 * takes to hand a number over (SQLite's printing of a double, then the rewrite), so a table with REAL values in
 * most rows (internet plans' speeds, locations' coordinates) stays with itemJson.
 */
export function itemSql(
  db: Database,
  table: string,
  alias: string,
  fields: Fields,
  translated: readonly Translated[] = [],
): string {
  const names = translated.map(colOf);
  const types = new Map(
    (db.pragma(`table_info(${table})`) as { name: string; type: string }[]).map((c) => [c.name, c.type.toUpperCase()]),
  );
  const mark = `char(${REAL.charCodeAt(0)})`;
  const args = Object.entries(fields).flatMap(([name, { kind }], i) => {
    const type = types.get(name);
    if (type === undefined) throw new Error(`itemSql: ${table} has no column ${name}`);
    const at = names.includes(name) ? trValue(alias, name) : `${alias}.${name}`;
    const value =
      kind === 'json'
        ? `ifnull(${at}, 'null')`
        : kind === 'bool'
          ? `CASE WHEN ${at} IS NULL THEN 'null' WHEN ${at} = 1 THEN 'true' ELSE 'false' END`
          : type === 'TEXT'
            ? `json_quote(${at})`
            : `CASE WHEN typeof(${at}) = 'real' OR (typeof(${at}) = 'integer' AND ${at} NOT BETWEEN ${-MAX_SAFE} AND ${MAX_SAFE}) THEN concat(${mark}, CAST(${at} AS TEXT), ${mark}) ELSE json_quote(${at}) END`;
    return [`'${i === 0 ? '{' : ','}${JSON.stringify(name)}:'`, value];
  });
  return `concat(${args.join(', ')}, '}')`;
}

/** itemSql's text with each REAL value written as JSON.stringify writes it. */
export function itemText(json: string): string {
  return json.indexOf(REAL) === -1 ? json : json.replace(REAL_PLACE, (_, x: string) => JSON.stringify(Number(x)));
}

/** A row of itemSelect: the item's id, its JSON text and, with translated fields, their language bits. */
export type ItemRow = { id: string; json: string; [LANG_COLUMN]?: number };
export const rowJson = (r: Record<string, any>): string => itemText((r as ItemRow).json);

/**
 * A field read from the requested locale's row: its column, which counts towards Content-Language as a translation
 * of its English value; or its column with its own SQL for its language bits (t is the locale's row), for a field
 * whose English value is not all text in English (owners' areas_served: only the areas that are places count).
 */
export type Translated = string | { col: string; lang: string };
const colOf = (t: Translated) => (typeof t === 'string' ? t : t.col);

/**
 * SELECT of each row's id, its JSON text (itemSql) and, when some fields are translated, their language bits
 * (LANG_COLUMN) with the requested locale's translations joined (bound as @locale).
 */
export function itemSelect(
  db: Database,
  table: string,
  alias: string,
  fields: Fields,
  translated: readonly Translated[] = [],
): string {
  const json = itemSql(db, table, alias, fields, translated);
  if (!translated.length) return `SELECT ${alias}.id, ${json} AS json FROM ${table} ${alias}`;
  const plain = translated.filter((t): t is string => typeof t === 'string');
  const bits = [
    ...(plain.length ? [langBits(alias, plain)] : []),
    ...translated.flatMap((t) => (typeof t === 'string' ? [] : [t.lang])),
  ];
  return `SELECT ${alias}.id, ${json} AS json, ${bits.map((b) => `(${b})`).join(' | ')} AS ${LANG_COLUMN} FROM ${table} ${alias} ${i18nJoin(table, alias)}`;
}
