// Search over a small table: a fixed clause per filter, q through the table's full-text index, keyset paging by id.
import type { Database, Statement } from 'better-sqlite3';
import type { Ctx } from '../http/route.ts';
import { ftsQuery } from './full-text.ts';
import { page, pageJson } from './paging.ts';

type SmallSearch = ReturnType<typeof smallSearch>;

/**
 * One page of a small-table search for the validated query: `q` becomes an FTS expression first (a
 * q without letters or digits is a 400), the other filters are the search's clause names.
 */
export function searchPage(
  ctx: Ctx<{ limit: number; cursor?: string; q?: string }>,
  search: SmallSearch,
  map?: (row: Record<string, any>) => unknown,
) {
  const filters = filtersOf(ctx.query);
  return page(ctx, (after, n) => search(filters, after, n, ctx.meta.locale), map);
}

/** searchPage with each row made into its item's JSON text (itemJson in ./fields.ts). */
export function searchPageJson(
  ctx: Ctx<{ limit: number; cursor?: string; q?: string }>,
  search: SmallSearch,
  toJson: (row: Record<string, any>) => string,
) {
  const filters = filtersOf(ctx.query);
  return pageJson(ctx, (after, n) => search(filters, after, n, ctx.meta.locale), toJson);
}

/** The search's filters: the validated query, with q as a full-text expression (a q without letters or digits is a 400). */
const filtersOf = (query: { q?: string }): Record<string, unknown> => ({
  ...query,
  fts: query.q === undefined ? undefined : ftsQuery(query.q).expr,
});

/**
 * Statements kept per search and snapshot: present-filter sets × cursor or not × page sizes (1 to 101) can
 * be many, so the least recently used are dropped, and a dropped one is prepared again (20–60 µs).
 */
const STATEMENT_CACHE_SIZE = 128;

/**
 * Search over a small table: each filter one fixed clause, q through the table's FTS index, keyset
 * on id. One statement per present-filter set and page size, prepared on first use and cached per
 * snapshot. `where` is a condition that always applies (the select itself must not have a WHERE clause).
 *
 * The page size is a literal in the SQL, not a parameter: SQLite (3.47 on) plans with the value bound to
 * a LIMIT parameter, and binding it again (even the same value) makes the next run prepare the statement
 * anew, which cost a page of 11 platforms 20 of its 40 µs.
 */
export function smallSearch(
  db: Database,
  opts: { select: string; alias: string; fts?: string; clauses: Record<string, string>; where?: string },
) {
  const cache = new Map<string, { stmt: Statement; row: (values: unknown[]) => Record<string, unknown> }>();
  const table = new RegExp(`\\bFROM (\\w+) ${opts.alias}\\b`).exec(opts.select)?.[1];
  if (table === undefined) throw new Error(`smallSearch: no "FROM <table> ${opts.alias}" in ${opts.select}`);
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
      const stmt = db
        .prepare(
          `${opts.select}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${opts.alias}.rid LIMIT ${Math.trunc(n)}`,
        )
        .raw();
      shape = { stmt, row: rowObject(stmt.columns().map((c) => c.name)) };
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(key, shape);
    const params: Record<string, unknown> = { locale };
    for (const k of present) params[k] = filters[k];
    if (useFts) params.fts = filters.fts;
    if (afterId !== null) params.after = afterId;
    return (shape.stmt.all(params) as unknown[][]).map(shape.row);
  };
}

/**
 * Rows as plain objects, keys in column order (as better-sqlite3 makes them), built by one function per statement
 * from its raw arrays: better-sqlite3 sets each property of each row through the V8 API, which took about as long
 * as the query itself on a page of owners. The source is put together from the statement's own column names.
 */
function rowObject(columns: string[]): (values: unknown[]) => Record<string, unknown> {
  const last = new Map(columns.map((c, i) => [c, i])); // a name given twice: its last value, at its first place
  const fields = [...last.keys()].map((c) => `${JSON.stringify(c)}: r[${last.get(c)}]`);
  return new Function('r', `return { ${fields.join(', ')} };`) as (values: unknown[]) => Record<string, unknown>;
}
