// q over the small tables that have no full-text table in the snapshot (articles, glossary, insurance
// providers): their words in memory, indexed when a snapshot is opened, matched like the FTS tables.
import type { Database } from 'better-sqlite3';
import { indexText } from '../../../snapshot-format/text.ts';
import type { Ctx } from '../../http/route.ts';
import { ftsQuery } from './full-text.ts';
import { page } from './paging.ts';
import type { smallSearch } from './small-search.ts';

/**
 * The words of a stored text as the FTS tables see them: NFKC as the compiler indexes it, then letters
 * and digits without marks, lower-cased, as a query's terms are made (snapshot-format/text.ts; that
 * function keeps only a query's first 16 terms, so it is not reused for whole texts).
 */
const words = (text: string): string[] =>
  indexText(text)
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

export interface TermIndex {
  /** The rids of the records that contain every term as a word, ascending. */
  match(terms: string[]): number[];
}

/**
 * An index of word → rids over the texts `sql` selects as (rid, text) rows: any number of rows per record
 * (one per column and locale), so every locale's text is searched, as in the FTS tables. The rows are read
 * in rid order, so each list is built ascending and a record's repeated words cost one comparison each.
 */
export function termIndex(db: Database, sql: string): TermIndex {
  const lists = new Map<string, number[]>();
  const rows = db.prepare(`SELECT rid, text FROM (${sql}) WHERE text IS NOT NULL ORDER BY rid`).raw();
  for (const [rid, text] of rows.iterate() as Iterable<[number, string]>) {
    for (const w of words(text)) {
      const list = lists.get(w);
      if (list === undefined) lists.set(w, [rid]);
      else if (list[list.length - 1] !== rid) list.push(rid);
    }
  }
  return {
    match(terms) {
      const found = terms.map((t) => lists.get(t) ?? []).sort((a, b) => a.length - b.length);
      let out = found[0] ?? [];
      for (const list of found.slice(1)) {
        const other = new Set(list);
        out = out.filter((rid) => other.has(rid));
      }
      return out;
    },
  };
}

/** The clause of a smallSearch that keeps the records q matched: @q is their rids as a JSON array. */
export const termClause = (alias: string) => `${alias}.rid IN (SELECT value FROM json_each(@q))`;

/**
 * One page of a small-table search whose q goes through a TermIndex: q becomes the JSON list of the rids
 * it matches (a q without letters or digits is a 400, as everywhere), bound to the search's `q` clause.
 */
export function termSearchPage(
  ctx: Ctx<{ limit: number; cursor?: string; q?: string }>,
  search: ReturnType<typeof smallSearch>,
  index: TermIndex,
  map?: (row: Record<string, any>) => unknown,
) {
  const q = ctx.query.q === undefined ? undefined : JSON.stringify(index.match(ftsQuery(ctx.query.q).terms));
  const filters = { ...(ctx.query as Record<string, unknown>), q };
  return page(ctx, (after, n) => search(filters, after, n, ctx.meta.locale), map);
}
