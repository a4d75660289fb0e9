// /v1/articles/{id}: one article.
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import { notFound } from '../http/errors.ts';
import { locale } from '../http/params.ts';
import { detail } from '../http/respond.ts';
import { type AppDeps, defineRoute } from '../http/route.ts';
import { J } from './fields.ts';
import { i18nJoin, tr } from './i18n-sql.ts';

const DetailQuery = v.strictObject({ locale });

export function prepare(db: Database) {
  return {
    byId: db.prepare(`SELECT a.id, a.slug, ${tr('a', ['title', 'description', 'content'])}, a.category, a.location_id, a.created_at, a.updated_at
      FROM articles a ${i18nJoin('articles', 'a')} WHERE a.id = @id`),
  };
}

export const routes = (_deps: AppDeps) => [
  defineRoute<v.InferOutput<typeof DetailQuery>>({
    path: '/v1/articles/:id',
    tag: 'Articles',
    kind: 'detail',
    query: DetailQuery,
    item: J.object({
      id: { type: 'string' },
      slug: J.str,
      title: J.str,
      description: J.str,
      content: J.str,
      category: J.str,
      location_id: J.str,
      created_at: J.ts,
      updated_at: J.ts,
    }),
    summary: 'One article by id',
    handle(ctx) {
      const r = ctx.snap.use(prepare).byId.get({ id: ctx.params.id, locale: ctx.meta.locale });
      if (!r) throw notFound('article');
      return detail(r, ctx.meta);
    },
  }),
];
