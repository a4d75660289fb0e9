// /v1/articles: search (without the long content) and one article by id.
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import { Localised, langOf, withoutLang } from '../http/content-language.ts';
import { notFound } from '../http/errors.ts';
import { cursor, documented, id120, limit, locale, qOver, str } from '../http/params.ts';
import { detail } from '../http/respond.ts';
import { defineRoute } from '../http/route.ts';
import { EXAMPLES } from './support/examples.ts';
import { J } from './support/fields.ts';
import { i18nJoin, tr } from './support/i18n-sql.ts';
import { smallSearch } from './support/small-search.ts';
import { termClause, termIndex, termSearchPage } from './support/term-index.ts';

const SearchQuery = v.strictObject({
  locale,
  q: qOver('the title and the description (not the content)', 'huurtoeslag'),
  limit: limit(100, 20),
  cursor,
  category: documented(v.optional(str(1, 120)), 'Only articles of this category (exact match).', 'city_guide'),
  location_id: documented(
    v.optional(id120),
    'Only articles about this location or a place inside it (an id from /v1/locations: a province covers the guides of its cities).',
    'loc_0013',
  ),
});
const DetailQuery = v.strictObject({ locale });

const SUMMARY_SELECT = `SELECT a.id, a.slug, ${tr('a', ['title', 'description'])}, a.category, a.location_id, a.created_at, a.updated_at
  FROM articles a ${i18nJoin('articles', 'a')}`;

export function prepare(db: Database) {
  return {
    search: smallSearch(db, {
      select: SUMMARY_SELECT,
      alias: 'a',
      clauses: {
        q: termClause('a'),
        category: 'a.category = @category',
        // As in listing searches, a location covers everything inside it: a province finds its cities' guides.
        location_id: 'a.location_id IN (SELECT descendant_id FROM location_closure WHERE ancestor_id = @location_id)',
      },
    }),
    byId: db.prepare(`SELECT a.id, a.slug, ${tr('a', ['title', 'description', 'content'])}, a.category, a.location_id, a.created_at, a.updated_at
      FROM articles a ${i18nJoin('articles', 'a')} WHERE a.id = @id`),
    // q: title and description in every locale, as the full-text tables of the other resources cover their
    // short texts; not the content, whose size would make the index slow to build (the snapshot has no
    // full-text table for articles).
    words: termIndex(
      db,
      ['title', 'description']
        .flatMap((c) => [`SELECT rid, ${c} AS text FROM articles`, `SELECT rid, ${c} FROM articles_i18n`])
        .join(' UNION ALL '),
    ),
  };
}

const TEXT = { id: { type: 'string' }, slug: J.str, title: J.str, description: J.str };
const PLACE = { category: J.str, location_id: J.str, created_at: J.ts, updated_at: J.ts };

export const routes = () => [
  defineRoute<v.InferOutput<typeof SearchQuery>>({
    path: '/v1/articles',
    tag: 'Articles',
    kind: 'collection',
    query: SearchQuery,
    item: J.object({ ...TEXT, ...PLACE }, { example: EXAMPLES.articleSummary }),
    summary: 'Search articles',
    description:
      'Published articles in ascending id order, without their content (GET /v1/articles/{id} has it). Title and description follow the locale.',
    handle(ctx) {
      const st = ctx.snap.use(prepare);
      return termSearchPage(ctx, st.search, st.words);
    },
  }),
  defineRoute<v.InferOutput<typeof DetailQuery>>({
    path: '/v1/articles/:id',
    record: 'article',
    tag: 'Articles',
    kind: 'detail',
    query: DetailQuery,
    item: J.object({ ...TEXT, content: J.str, ...PLACE }, { example: EXAMPLES.articleDetail }),
    summary: 'One article by id',
    description: 'The article with its content (Markdown), in the requested locale where translated.',
    handle(ctx) {
      const r = ctx.snap.use(prepare).byId.get({ id: ctx.params.id, locale: ctx.meta.locale }) as
        | Record<string, unknown>
        | undefined;
      if (!r) throw notFound('article');
      return new Localised(detail(withoutLang(r), ctx.meta), langOf(r));
    },
  }),
];
