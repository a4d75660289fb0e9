// Search over a small table: a fixed clause per filter, q through the table's full-text index, keyset paging by id.
import type { Database, Statement } from 'better-sqlite3';
import { LANG_COLUMN } from '../../http/content-language.ts';
import type { Ctx } from '../../http/route.ts';
import type { ItemRow } from './fields.ts';
import { ftsQuery } from './full-text.ts';
import { pageJson } from './paging.ts';

type SmallSearch = ReturnType<typeof smallSearch>;

/**
 * One page of a small-table search made with `json` for the validated query: its rows are items already, and the
 * page is their JSON text. `q` becomes an FTS expression first (a q without letters or digits is a 400), the other
 * filters are the search's clause names.
 */
export function searchPageJson(ctx: Ctx<{ limit: number; cursor?: string; q?: string }>, search: SmallSearch) {
  const filters = filtersOf(ctx.query);
  return pageJson(ctx, (after, n) => search(filters, after, n, ctx.meta.locale), itemOf);
}

/**
 * The search's filters: the validated query, with q as a full-text expression (a q without letters or digits is a
 * 400). Made once per query object: a route's short queries are remembered and frozen (QueryMemo), and q's terms
 * (Unicode normalisation and two regular expressions) are made once too.
 */
const filtersOf = (query: { q?: string }): Record<string, unknown> => {
  let filters = madeFilters.get(query);
  if (filters === undefined) {
    filters = { ...query, fts: query.q === undefined ? undefined : ftsQuery(query.q).expr };
    madeFilters.set(query, filters);
  }
  return filters;
};
const madeFilters = new WeakMap<object, Record<string, unknown>>();

/**
 * Statements kept per search and snapshot: present-filter sets × cursor or not × page sizes (1 to 101) can
 * be many, so the least recently used are dropped, and a dropped one is prepared again.
 */
const STATEMENT_CACHE_SIZE = 128;

/**
 * Search over a small table: each filter one fixed clause, q through the table's FTS index, keyset
 * on id. One statement per present-filter set and page size, prepared on first use and cached per
 * snapshot. `where` is a condition that always applies (the select itself must not have a WHERE clause).
 *
 * The page size is a literal in the SQL, not a parameter: SQLite (3.47 on) plans with the value bound to
 * a LIMIT parameter, and binding it again (even the same value) makes the next run prepare the statement
 * anew, which was half of a page of 11 platforms (docs/performance.md).
 *
 * With `json`, the items' JSON text is made once per snapshot and locale (see itemTexts) and a search's statement
 * reads only rids: its rows are the table's ItemRows ({ id, json, _lang }, shared: not to be changed).
 */
export function smallSearch(
  db: Database,
  opts: {
    select: string;
    alias: string;
    fts?: string;
    clauses: Record<string, string>;
    where?: string;
    json?: (row: Record<string, any>) => string;
  },
) {
  const cache = new Map<string, { stmt: Statement; row: (values: unknown[]) => Record<string, unknown> }>();
  const table = new RegExp(`\\bFROM (\\w+) ${opts.alias}\\b`).exec(opts.select)?.[1];
  if (table === undefined) throw new Error(`smallSearch: no "FROM <table> ${opts.alias}" in ${opts.select}`);
  const texts = opts.json && itemTexts(db, opts as typeof opts & { json: NonNullable<typeof opts.json> });
  const select = texts ? `SELECT ${opts.alias}.rid FROM ${table} ${opts.alias}` : opts.select;
  // The page after a cursor's id, as a rid bound: rid order is id order, so this is "id > @after", but it starts
  // the walk of the driving index (rowid or a filter's (column, rid) index) at the bound instead of filtering
  // every row before it. The id may be gone (a cursor outlives a snapshot): the greatest id below it counts.
  const after = `${opts.alias}.rid > coalesce((SELECT rid FROM ${table} WHERE id <= @after ORDER BY id DESC LIMIT 1), 0)`;
  return (
    filters: Record<string, unknown>,
    afterId: string | null,
    n: number,
    locale: string,
  ): Record<string, unknown>[] => {
    const present = Object.keys(opts.clauses).filter((k) => filters[k] !== undefined);
    const useFts = filters.fts !== undefined && opts.fts;
    const key = `${present.join(',')}${useFts ? '|fts' : ''}${afterId === null ? '' : '|after'}|${n}`;
    let shape = cache.get(key);
    if (shape) {
      cache.delete(key); // most recently used last
    } else {
      const where = [...(opts.where ? [opts.where] : []), ...present.map((k) => opts.clauses[k])];
      if (useFts) where.push(`${opts.alias}.rid IN (SELECT rowid FROM ${opts.fts} WHERE ${opts.fts} MATCH @fts)`);
      if (afterId !== null) where.push(after);
      // rid order is id order (the compiler assigns rid by id), and every (filter column) index holds
      // rid, so ORDER BY rid is served by the filter's index without a sort.
      const stmt = db.prepare(
        `${select}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${opts.alias}.rid LIMIT ${Math.trunc(n)}`,
      );
      // With kept items, a page is its rids: one number a row, where a row array costs an array and a V8 API call
      // a value (a third of a page of owners' statement).
      if (texts) stmt.pluck();
      else stmt.raw();
      shape = { stmt, row: rowObject(stmt.columns().map((c) => c.name)) };
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(key, shape);
    const params: Record<string, unknown> = texts ? {} : { locale };
    for (const k of present) params[k] = filters[k];
    if (useFts) params.fts = filters.fts;
    if (afterId !== null) params.after = afterId;
    if (texts) {
      const items = texts(locale);
      return (shape.stmt.all(params) as number[]).map((rid) => items.get(rid)!);
    }
    return (shape.stmt.all(params) as unknown[][]).map(shape.row);
  };
}

/** The item's JSON text of a row of a smallSearch with `json`. */
export const itemOf = (row: Record<string, any>): string => (row as ItemRow).json;

/**
 * Every row's item in a locale (its id, JSON text and language bits), made with `json` from the rows of `select`
 * (with `where`) the first time the locale is asked for, then kept as long as the snapshot is served: the table is
 * small (owners, the largest, is ~5,000 rows: 20–30 ms and ~1.2 MB a locale, less where a row has no translation and
 * shares the English text), and putting an item's JSON together was most of a page's statement; a search then reads rids
 * only (docs/performance.md).
 */
function itemTexts(
  db: Database,
  opts: { select: string; alias: string; where?: string; json: (row: Record<string, any>) => string },
): (locale: string) => Map<number, ItemRow> {
  const all = db.prepare(
    `SELECT ${opts.alias}.rid AS _rid, ${opts.select.replace(/^SELECT /, '')}${opts.where ? ` WHERE ${opts.where}` : ''}`,
  );
  const byLocale = new Map<string, Map<number, ItemRow>>();
  const items = (locale: string): Map<number, ItemRow> => {
    let made = byLocale.get(locale);
    if (made !== undefined) return made;
    const en = locale === 'en' ? undefined : items('en');
    made = new Map();
    for (const r of all.all({ locale }) as Record<string, any>[]) {
      const json = opts.json(r);
      const english = en?.get(r._rid);
      made.set(r._rid, {
        id: english?.id ?? r.id,
        json: english?.json === json ? english.json : json,
        [LANG_COLUMN]: r[LANG_COLUMN],
      });
    }
    byLocale.set(locale, made);
    return made;
  };
  return items;
}

/**
 * Rows as plain objects, keys in column order (as better-sqlite3 makes them), from the statement's raw arrays:
 * better-sqlite3 sets each property of each row through the V8 API, which took about as long as the query itself
 * on a page of owners.
 */
function rowObject(columns: string[]): (values: unknown[]) => Record<string, unknown> {
  const last = new Map(columns.map((c, i) => [c, i])); // a name given twice: its last value, at its first place
  const names = [...last.keys()];
  const at = names.map((c) => last.get(c)!);
  return (r) => {
    const o: Record<string, unknown> = {};
    for (let k = 0; k < names.length; k++) o[names[k]] = r[at[k]];
    return o;
  };
}
