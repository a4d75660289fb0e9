// Maps validated source records to snapshot rows by their table's spec (./tables.ts), and inserts them.
import type { Database, Statement } from 'better-sqlite3';
import { LOCALE_CODE, TRANSLATED_LOCALES } from '../snapshot-format/locales.ts';
import { isText, type Kind, type TableSpec } from './tables.ts';

type Rec = Record<string, unknown>;

function columnValue(kind: Kind, value: unknown, locale: string): unknown {
  if (value === undefined || value === null) return null;
  switch (kind) {
    case 'plain':
      return value;
    case 'bool':
      return value ? 1 : 0;
    case 'json':
      return JSON.stringify(value);
    case 'text':
      return (value as Rec)[locale] ?? null;
    case 'textlist': {
      const list = (value as Rec)[locale];
      return list === undefined ? null : JSON.stringify(list);
    }
  }
}

/**
 * A record as positional rows: the base row (rid, id, then the spec's columns and its inline fields' columns per
 * locale) and, per locale that has
 * any translation, the locale table's row (k, rid, locale, then the translated columns).
 */
export interface Rows {
  base: unknown[];
  i18n: unknown[][];
  missing: string[];
}

/** A table's columns as arrays, worked out once per table (rowsOf runs once per record: 751k listings). */
interface Plan {
  /** The base row's columns after rid (and id): their names, source fields, kinds and locales. */
  names: string[];
  fields: string[];
  kinds: Kind[];
  locales: string[];
  /** The locale table's columns after k, rid and locale. */
  translated: string[];
  translatedKinds: Kind[];
}
const plans = new WeakMap<TableSpec, Plan>();
function planOf(t: TableSpec): Plan {
  let p = plans.get(t);
  if (!p) {
    const cols = Object.keys(t.cols).map((field) => ({ name: field, field, locale: 'en' }));
    for (const field of t.inline)
      for (const locale of TRANSLATED_LOCALES) cols.push({ name: `${field}_${locale}`, field, locale });
    const translated = Object.keys(t.cols).filter((c) => isText(t.cols[c]) && !t.inline.includes(c));
    p = {
      names: cols.map((c) => c.name),
      fields: cols.map((c) => c.field),
      kinds: cols.map((c) => t.cols[c.field]),
      locales: cols.map((c) => c.locale),
      translated,
      translatedKinds: translated.map((c) => t.cols[c]),
    };
    plans.set(t, p);
  }
  return p;
}

/** Pure (no database): usable in a worker thread. */
export function rowsOf(t: TableSpec, rid: number, rec: Rec): Rows {
  const { names, fields, kinds, locales, translated, translatedKinds } = planOf(t);
  const first = t.withId ? 2 : 1;
  const base: unknown[] = new Array(names.length + first);
  base[0] = rid;
  if (t.withId) base[1] = rec.id;
  for (let k = 0; k < names.length; k++) base[k + first] = columnValue(kinds[k], rec[fields[k]], locales[k]);
  const i18n: unknown[][] = [];
  const missing: string[] = [];
  if (translated.length || t.inline.length) {
    for (const locale of TRANSLATED_LOCALES) {
      const row: unknown[] = new Array(translated.length + 3);
      row[0] = rid * 8 + LOCALE_CODE[locale];
      row[1] = rid;
      row[2] = locale;
      let any = false;
      let gap = false;
      for (let k = 0; k < translated.length; k++) {
        const source = rec[translated[k]];
        const value = columnValue(translatedKinds[k], source, locale);
        row[k + 3] = value;
        if (value !== null) any = true;
        else if (source != null) gap = true;
      }
      for (const f of t.inline) if (rec[f] != null && columnValue(t.cols[f], rec[f], locale) === null) gap = true;
      if (gap) missing.push(locale);
      if (any) i18n.push(row);
    }
  }
  return { base, i18n, missing };
}

/** Positional inserts for one table (and its split-off second table) and its locale table. */
export interface TableWriter {
  spec: TableSpec;
  insert(rid: number, rec: Rec): void;
  insertRows(rows: Rows): void;
}

/** `onMissingTranslation(locale)` is called once per record and locale that lacks a translation of some text. */
export function tableWriter(db: Database, t: TableSpec, onMissingTranslation?: (locale: string) => void): TableWriter {
  const { names, fields, translated } = planOf(t);
  const head = t.withId ? ['rid', 'id'] : ['rid'];
  const cols = [...head, ...names];
  // The base row's positions that each table takes: rid in both, a split field's columns in the second only.
  const second = (i: number) => i >= head.length && t.split?.fields.includes(fields[i - head.length]) === true;
  const positions = (inSecond: boolean) => cols.flatMap((_, i) => (i === 0 || second(i) === inSecond ? [i] : []));
  const insertOf = (table: string, at: number[]) => {
    const stmt = db.prepare(
      `INSERT INTO ${table} (${at.map((i) => cols[i]).join(', ')}) VALUES (${at.map(() => '?').join(', ')})`,
    );
    if (at.length === cols.length) return (row: unknown[]) => void stmt.run(row);
    const picked: unknown[] = new Array(at.length);
    return (row: unknown[]) => {
      for (let k = 0; k < at.length; k++) picked[k] = row[at[k]];
      stmt.run(picked);
    };
  };
  const inserts = [insertOf(t.table, positions(false))];
  if (t.split) inserts.push(insertOf(t.split.table, positions(true)));
  const i18n: Statement | null = t.i18n
    ? db.prepare(
        `INSERT INTO ${t.i18nTable} (k, rid, locale, ${translated.join(', ')}) VALUES (${['k', 'rid', 'locale', ...translated].map(() => '?').join(', ')})`,
      )
    : null;
  const insertRows = (rows: Rows) => {
    for (const insert of inserts) insert(rows.base);
    for (const r of rows.i18n) i18n!.run(r);
    if (onMissingTranslation) for (const l of rows.missing) onMissingTranslation(l);
  };
  return { spec: t, insertRows, insert: (rid, rec) => insertRows(rowsOf(t, rid, rec)) };
}
