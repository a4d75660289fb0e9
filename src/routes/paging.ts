// Keyset paging with signed cursors: one page of ids after a position, in the collection envelope.
import { noteLang, withoutLang } from '../http/content-language.ts';
import { collection, collectionJson } from '../http/respond.ts';
import type { Ctx } from '../http/route.ts';

/**
 * One page of a keyset walk. `fetch(after, n)` returns up to n items after the given position,
 * ascending by id; one extra row tells has_more. The cursor is bound to the endpoint, the filters,
 * the locale and the limit.
 */
export function pageRows<T extends { id: string }>(
  ctx: Ctx<{ limit: number; cursor?: string }>,
  fetch: (afterId: string | null, n: number) => T[],
) {
  const { query, deps, req } = ctx;
  const scope = deps.cursor.scope(req.path, query as Record<string, unknown>);
  const after = query.cursor === undefined ? null : deps.cursor.verify(query.cursor, scope);
  const rows = fetch(after, query.limit + 1);
  const hasMore = rows.length > query.limit;
  if (hasMore) rows.length = query.limit;
  const next = hasMore ? deps.cursor.sign(rows[rows.length - 1].id, scope) : null;
  return { rows, pagination: { limit: query.limit, has_more: hasMore, next_cursor: next } };
}

/**
 * pageRows, with the language bits of the rows on the page (not of the extra row that tells has_more) added to
 * the answer's, for its Content-Language.
 */
function shownRows<T extends Record<string, any>>(
  ctx: Ctx<{ limit: number; cursor?: string }>,
  fetch: (afterId: string | null, n: number) => T[],
) {
  const shown = pageRows(ctx, fetch as (afterId: string | null, n: number) => (T & { id: string })[]);
  for (const r of shown.rows) noteLang(ctx, r);
  return shown;
}

/** One page in the collection envelope, each row mapped to its API object (by default, the row without its language bits). */
export function page<T extends Record<string, any>>(
  ctx: Ctx<{ limit: number; cursor?: string }>,
  fetch: (afterId: string | null, n: number) => T[],
  map: (row: T) => unknown = withoutLang,
) {
  const { rows, pagination } = shownRows(ctx, fetch);
  return collection(rows.map(map), pagination, ctx.meta);
}

/** page() for items that are JSON text (see itemJson in ./fields.ts): the envelope is put around them as text. */
export function pageJson<T extends Record<string, any>>(
  ctx: Ctx<{ limit: number; cursor?: string }>,
  fetch: (afterId: string | null, n: number) => T[],
  toJson: (row: T) => string,
) {
  const { rows, pagination } = shownRows(ctx, fetch);
  return collectionJson(rows.map(toJson), pagination, ctx.meta);
}
