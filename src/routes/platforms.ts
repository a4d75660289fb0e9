// /v1/platforms: search and detail of rental platforms.
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import { Localised, langOf } from '../http/content-language.ts';
import { notFound } from '../http/errors.ts';
import { cursor, documented, limit, locale, qOver, str } from '../http/params.ts';
import { detailJson } from '../http/respond.ts';
import { defineRoute } from '../http/route.ts';
import { EXAMPLES } from './support/examples.ts';
import { F, type ItemRow, itemSelect, J, rowJson, schemasOf } from './support/fields.ts';
import { searchPageJson, smallSearch } from './support/small-search.ts';

const SearchQuery = v.strictObject({
  locale,
  q: qOver('the name, the headline and the description', 'social'),
  limit: limit(100, 20),
  cursor,
  type: documented(v.optional(str(1, 120)), 'Only platforms of this type (exact match).', 'listing_site'),
  category: documented(v.optional(str(1, 120)), 'Only platforms of this category (exact match).', 'rent'),
});
const DetailQuery = v.strictObject({ locale });

const SUMMARY_FIELDS = {
  id: F.id,
  slug: F.str,
  name: F.str,
  url: F.str,
  logo_url: F.str,
  type: F.str,
  category: F.str,
  registration_required: F.bool,
  registration_fee_amount: F.num,
  subscription_fee_from: F.num,
  fee_currency: F.str,
  headline: F.str,
  features: F.strs,
  last_verified_at: F.ts,
  updated_at: F.ts,
};
const DETAIL_FIELDS = {
  ...SUMMARY_FIELDS,
  attributes: F.obj,
  description: F.str,
  pricing_details: F.str,
  content: F.str,
};

export function prepare(db: Database) {
  return {
    search: smallSearch(db, {
      // A search reads only what a summary shows: the long texts (the content, often in overflow pages) are for the detail.
      select: itemSelect(db, 'platforms', 'p', SUMMARY_FIELDS, ['headline', 'features']),
      alias: 'p',
      fts: 'platforms_fts',
      clauses: { type: 'p.type = @type', category: 'p.category = @category' },
      json: rowJson,
    }),
    byId: db.prepare(
      `${itemSelect(db, 'platforms', 'p', DETAIL_FIELDS, ['headline', 'features', 'description', 'pricing_details', 'content'])} WHERE p.id = @id`,
    ),
  };
}

export const routes = () => [
  defineRoute<v.InferOutput<typeof SearchQuery>>({
    path: '/v1/platforms',
    tag: 'Platforms',
    kind: 'collection',
    query: SearchQuery,
    item: J.object(schemasOf(SUMMARY_FIELDS), { example: EXAMPLES.platformSummary }),
    summary: 'Search rental platforms',
    description:
      'Sites and services where rental homes are advertised, in ascending id order, with their fees and features. Fees are amounts in fee_currency.',
    handle(ctx) {
      return searchPageJson(ctx, ctx.snap.use(prepare).search);
    },
  }),
  defineRoute<v.InferOutput<typeof DetailQuery>>({
    path: '/v1/platforms/:id',
    record: 'platform',
    tag: 'Platforms',
    kind: 'detail',
    query: DetailQuery,
    item: J.object(schemasOf(DETAIL_FIELDS), { example: EXAMPLES.platformDetail }),
    summary: 'One rental platform by id',
    description:
      'The search fields plus attributes (an object whose structure is not fixed), the description, pricing details and the long content (Markdown).',
    handle(ctx) {
      const row = ctx.snap.use(prepare).byId.get({ id: ctx.params.id, locale: ctx.meta.locale }) as ItemRow | undefined;
      if (!row) throw notFound('platform');
      return new Localised(detailJson(rowJson(row), ctx.meta), langOf(row));
    },
  }),
];
