// Shared route pieces: keyset paging with signed cursors, cached search statements, JSON-schema shorthands.
import type { Database, Statement } from 'better-sqlite3';
import type { Ctx } from '../app.ts';
import { collection } from '../respond.ts';
import { ftsQuery } from '../query.ts';

/** JSON-schema shorthands for response items; every documented field is present and may be null. */
export const J = {
  str: { type: ['string', 'null'] },
  num: { type: ['number', 'null'] },
  int: { type: ['integer', 'null'] },
  bool: { type: ['boolean', 'null'] },
  ts: { type: ['string', 'null'], format: 'date-time' },
  strs: { type: ['array', 'null'], items: { type: 'string' } },
  obj: { type: ['object', 'null'] },
  object(props: Record<string, unknown>, required = Object.keys(props)) {
    return { type: 'object', properties: props, required, additionalProperties: false };
  },
};

export const parseJson = <T = unknown>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));
export const bool = (x: number | null) => (x === null ? null : x === 1);

/**
 * One page of a keyset walk. `fetch(after, n)` returns up to n items after the given position,
 * ascending by id; one extra row tells has_more. The cursor is bound to the endpoint, the filters,
 * the locale and the limit.
 */
export function pageRows<T extends { id: string }>(ctx: Ctx<{ limit: number; cursor?: string }>, fetch: (afterId: string | null, n: number) => T[]) {
  const { query, deps, req } = ctx;
  const scope = deps.cursor.scope(req.path, query as Record<string, unknown>);
  const after = query.cursor === undefined ? null : deps.cursor.verify(query.cursor, scope);
  const rows = fetch(after, query.limit + 1);
  const hasMore = rows.length > query.limit;
  if (hasMore) rows.length = query.limit;
  const next = hasMore ? deps.cursor.sign(rows[rows.length - 1].id, scope) : null;
  return { rows, pagination: { limit: query.limit, has_more: hasMore, next_cursor: next } };
}

/** pageRows in the collection envelope, each row mapped to its API object. */
export function page<T extends Record<string, any>>(
  ctx: Ctx<{ limit: number; cursor?: string }>,
  fetch: (afterId: string | null, n: number) => T[],
  map: (row: T) => unknown = (r) => r,
) {
  const { rows, pagination } = pageRows(ctx, fetch as (afterId: string | null, n: number) => (T & { id: string })[]);
  return collection(rows.map(map), pagination, ctx.meta);
}

type SmallSearch = ReturnType<typeof smallSearch>;

/**
 * One page of a small-table search for the validated query: `q` becomes an FTS expression first (a
 * q without letters or digits is a 400), the other filters are the search's clause names.
 */
export function searchPage(ctx: Ctx<{ limit: number; cursor?: string; q?: string }>, search: SmallSearch, map?: (row: Record<string, any>) => unknown) {
  const filters = { ...(ctx.query as Record<string, unknown>), fts: ctx.query.q === undefined ? undefined : ftsQuery(ctx.query.q).expr };
  return page(ctx, (after, n) => search(filters, after, n, ctx.meta.locale), map);
}

/**
 * Search over a small table: each filter one fixed clause, q through the table's FTS index, keyset
 * on id. One statement per present-filter set, prepared on first use and cached per snapshot.
 * `where` is a condition that always applies (the select itself must not have a WHERE clause).
 */
export function smallSearch(db: Database, opts: { select: string; alias: string; fts?: string; clauses: Record<string, string>; where?: string }) {
  const cache = new Map<string, Statement>();
  return (filters: Record<string, unknown>, afterId: string | null, n: number, locale: string): Record<string, unknown>[] => {
    const present = Object.keys(opts.clauses).filter((k) => filters[k] !== undefined);
    const useFts = filters.fts !== undefined && opts.fts;
    const key = present.join(',') + (useFts ? '|fts' : '') + (afterId === null ? '' : '|after');
    let stmt = cache.get(key);
    if (!stmt) {
      const where = [...(opts.where ? [opts.where] : []), ...present.map((k) => opts.clauses[k])];
      if (useFts) where.push(`${opts.alias}.rid IN (SELECT rowid FROM ${opts.fts} WHERE ${opts.fts} MATCH @fts)`);
      if (afterId !== null) where.push(`${opts.alias}.id > @after`);
      // rid order is id order (the compiler assigns rid by id), and every (filter column) index holds
      // rid, so ORDER BY rid is served by the filter's index without a sort.
      stmt = db.prepare(`${opts.select}${where.length ? ' WHERE ' + where.join(' AND ') : ''} ORDER BY ${opts.alias}.rid LIMIT @n`);
      cache.set(key, stmt);
    }
    const params: Record<string, unknown> = { n, locale };
    for (const k of present) params[k] = filters[k];
    if (useFts) params.fts = filters.fts;
    if (afterId !== null) params.after = afterId;
    return stmt.all(params) as Record<string, unknown>[];
  };
}

/** The i18n key of a record in the requested locale (English has code 0 and no rows, so it falls back). */
export const LOCALE_KEY = (alias: string) => `${alias}.rid * 8 + (CASE @locale WHEN 'nl' THEN 1 WHEN 'de' THEN 2 WHEN 'fr' THEN 3 WHEN 'es' THEN 4 ELSE 0 END)`;
/** LEFT JOIN of a table's translations in the requested locale: one rowid lookup. */
export const i18nJoin = (table: string, alias: string, t = 't') => `LEFT JOIN ${table}_i18n ${t} ON ${t}.k = ${LOCALE_KEY(alias)}`;

/** COALESCE(translation, english) for each translated column: field-by-field fallback to English. */
export const tr = (alias: string, cols: string[], t = 't') => cols.map((c) => `COALESCE(${t}.${c}, ${alias}.${c}) AS ${c}`).join(', ');
