// /v1/glossary: the Dutch rental terms (huurtoeslag, servicekosten, …) with their definitions; search and detail.
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import { Localised, langOf, withoutLang } from '../http/content-language.ts';
import { notFound } from '../http/errors.ts';
import { cursor, limit, locale, qOver } from '../http/params.ts';
import { detail } from '../http/respond.ts';
import { defineRoute } from '../http/route.ts';
import { EXAMPLES } from './support/examples.ts';
import { J } from './support/fields.ts';
import { i18nJoin, tr } from './support/i18n-sql.ts';
import { smallSearch } from './support/small-search.ts';
import { termClause, termIndex, termSearchPage } from './support/term-index.ts';

const SearchQuery = v.strictObject({
  locale,
  q: qOver('the term and its definition', 'borg'),
  limit: limit(100, 20),
  cursor,
});
const DetailQuery = v.strictObject({ locale });

const SELECT = `SELECT g.id, g.slug, ${tr('g', ['term', 'definition'])}, g.updated_at FROM glossary g ${i18nJoin('glossary', 'g')}`;

export function prepare(db: Database) {
  return {
    search: smallSearch(db, { select: SELECT, alias: 'g', clauses: { q: termClause('g') } }),
    byId: db.prepare(`${SELECT} WHERE g.id = @id`),
    // q: the term and its definition in every locale (the snapshot has no full-text table for the glossary).
    words: termIndex(
      db,
      `SELECT rid, term AS text FROM glossary UNION ALL SELECT rid, definition FROM glossary
       UNION ALL SELECT rid, term FROM glossary_i18n UNION ALL SELECT rid, definition FROM glossary_i18n`,
    ),
  };
}

const ENTRY = J.object(
  { id: { type: 'string' }, slug: J.str, term: J.str, definition: J.str, updated_at: J.ts },
  {
    description: 'A Dutch rental term: term is the word as used in the Netherlands, definition explains it.',
    example: EXAMPLES.glossaryEntry,
  },
);

export const routes = () => [
  defineRoute<v.InferOutput<typeof SearchQuery>>({
    path: '/v1/glossary',
    tag: 'Glossary',
    kind: 'collection',
    query: SearchQuery,
    item: ENTRY,
    summary: 'Search the glossary of Dutch rental terms',
    description:
      'Published glossary entries in ascending id order. Term and definition follow the locale, each falling back to English.',
    handle(ctx) {
      const st = ctx.snap.use(prepare);
      return termSearchPage(ctx, st.search, st.words);
    },
  }),
  defineRoute<v.InferOutput<typeof DetailQuery>>({
    path: '/v1/glossary/:id',
    record: 'glossary entry',
    tag: 'Glossary',
    kind: 'detail',
    query: DetailQuery,
    item: ENTRY,
    summary: 'One glossary entry by id',
    description: 'The same fields as in the search.',
    handle(ctx) {
      const r = ctx.snap.use(prepare).byId.get({ id: ctx.params.id, locale: ctx.meta.locale }) as
        | Record<string, unknown>
        | undefined;
      if (!r) throw notFound('glossary entry');
      return new Localised(detail(withoutLang(r), ctx.meta), langOf(r));
    },
  }),
];
