// /v1/platforms: search and detail of rental platforms.
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import { Localised, langOf } from '../http/content-language.ts';
import { notFound } from '../http/errors.ts';
import { cursor, documented, limit, locale, qOver, str } from '../http/params.ts';
import { detailJson } from '../http/respond.ts';
import { defineRoute } from '../http/route.ts';
import { EXAMPLES } from './support/examples.ts';
import { type ItemRow, itemSelect, J, rowJson } from './support/fields.ts';
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
  id: 'value',
  slug: 'value',
  name: 'value',
  url: 'value',
  logo_url: 'value',
  type: 'value',
  category: 'value',
  registration_required: 'bool',
  registration_fee_amount: 'value',
  subscription_fee_from: 'value',
  fee_currency: 'value',
  headline: 'value',
  features: 'json',
  last_verified_at: 'value',
  updated_at: 'value',
} as const;
const DETAIL_FIELDS = {
  ...SUMMARY_FIELDS,
  attributes: 'json',
  description: 'value',
  pricing_details: 'value',
  content: 'value',
} as const;

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
const SUMMARY = {
  id: { type: 'string' },
  slug: J.str,
  name: J.str,
  url: J.str,
  logo_url: J.str,
  type: J.str,
  category: J.str,
  registration_required: J.bool,
  registration_fee_amount: J.num,
  subscription_fee_from: J.num,
  fee_currency: J.str,
  headline: J.str,
  features: J.strs,
  last_verified_at: J.ts,
  updated_at: J.ts,
};

export const routes = () => [
  defineRoute<v.InferOutput<typeof SearchQuery>>({
    path: '/v1/platforms',
    tag: 'Platforms',
    kind: 'collection',
    query: SearchQuery,
    item: J.object(SUMMARY, { example: EXAMPLES.platformSummary }),
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
    item: J.object(
      { ...SUMMARY, attributes: J.obj, description: J.str, pricing_details: J.str, content: J.str },
      { example: EXAMPLES.platformDetail },
    ),
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
