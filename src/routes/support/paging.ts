// Keyset paging with signed cursors: one page of ids after a position, in the collection envelope.
import { Localised, langOfRows, withoutLang } from '../../http/content-language.ts';
import { collection, collectionJson } from '../../http/respond.ts';
import type { Ctx } from '../../http/route.ts';

/**
 * One page of a keyset walk. `fetch(after, n)` returns up to n items after the given position,
 * ascending by id; one extra row tells has_more. The cursor is bound to the endpoint, the filters,
 * the locale and the limit.
 */
export function pageRows<T extends { id: string }>(
  ctx: Ctx<{ limit: number; cursor?: string }>,
  fetch: (afterId: string | null, n: number) => T[],
) {
  const position = keysetPosition(ctx);
  const rows = fetch(position.after, ctx.query.limit + 1);
  const hasMore = rows.length > ctx.query.limit;
  if (hasMore) rows.length = ctx.query.limit;
  return { rows, pagination: position.pagination(hasMore ? rows[rows.length - 1].id : null) };
}

/**
 * The cursor side of a keyset page, for a handler that finds its page by other means than pageRows: the id the
 * page starts after (null on the first page), and the pagination object of the page, given the id of its last
 * item when there are more (null when it is the last page).
 */
export function keysetPosition(ctx: Ctx<{ limit: number; cursor?: string }>) {
  const { query, deps, req } = ctx;
  const scope = deps.cursor.scope(req.path, query as Record<string, unknown>);
  return {
    after: query.cursor === undefined ? null : deps.cursor.verify(query.cursor, scope),
    pagination: (lastIdIfMore: string | null) => ({
      limit: query.limit,
      has_more: lastIdIfMore !== null,
      next_cursor: lastIdIfMore === null ? null : deps.cursor.sign(lastIdIfMore, scope),
    }),
  };
}

/**
 * pageRows, with the language bits of the rows on the page (not of the extra row that tells has_more), for the
 * answer's Content-Language.
 */
function shownRows<T extends Record<string, any>>(
  ctx: Ctx<{ limit: number; cursor?: string }>,
  fetch: (afterId: string | null, n: number) => T[],
) {
  const { rows, pagination } = pageRows(ctx, fetch as (afterId: string | null, n: number) => (T & { id: string })[]);
  return { rows, pagination, lang: langOfRows(rows) };
}

/**
 * One page in the collection envelope with its language bits, each row mapped to its API object (by default, the
 * row without its language bits).
 */
export function page<T extends Record<string, any>>(
  ctx: Ctx<{ limit: number; cursor?: string }>,
  fetch: (afterId: string | null, n: number) => T[],
  map: (row: T) => unknown = withoutLang,
) {
  const { rows, pagination, lang } = shownRows(ctx, fetch);
  return new Localised(collection(rows.map(map), pagination, ctx.meta), lang);
}

/** page() for items that are JSON text (see itemJson in ./fields.ts): the envelope is put around them as text. */
export function pageJson<T extends Record<string, any>>(
  ctx: Ctx<{ limit: number; cursor?: string }>,
  fetch: (afterId: string | null, n: number) => T[],
  toJson: (row: T) => string,
) {
  const { rows, pagination, lang } = shownRows(ctx, fetch);
  return new Localised(collectionJson(rows.map(toJson), pagination, ctx.meta), lang);
}
