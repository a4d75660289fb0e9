// Search over a small table: a fixed clause per filter, q through the table's full-text index, keyset paging by id.
import type { Database, Statement } from 'better-sqlite3';
import type { Ctx } from '../http/route.ts';
import { ftsQuery } from './full-text.ts';
import { page } from './paging.ts';

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
  const filters = {
    ...(ctx.query as Record<string, unknown>),
    fts: ctx.query.q === undefined ? undefined : ftsQuery(ctx.query.q).expr,
  };
  return page(ctx, (after, n) => search(filters, after, n, ctx.meta.locale), map);
}

/**
 * Search over a small table: each filter one fixed clause, q through the table's FTS index, keyset
 * on id. One statement per present-filter set, prepared on first use and cached per snapshot.
 * `where` is a condition that always applies (the select itself must not have a WHERE clause).
 */
export function smallSearch(
  db: Database,
  opts: { select: string; alias: string; fts?: string; clauses: Record<string, string>; where?: string },
) {
  const cache = new Map<string, Statement>();
  return (
    filters: Record<string, unknown>,
    afterId: string | null,
    n: number,
    locale: string,
  ): Record<string, unknown>[] => {
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
      stmt = db.prepare(
        `${opts.select}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${opts.alias}.rid LIMIT @n`,
      );
      cache.set(key, stmt);
    }
    const params: Record<string, unknown> = { n, locale };
    for (const k of present) params[k] = filters[k];
    if (useFts) params.fts = filters.fts;
    if (afterId !== null) params.after = afterId;
    return stmt.all(params) as Record<string, unknown>[];
  };
}
