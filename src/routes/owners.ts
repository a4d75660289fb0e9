// /v1/owners: search and detail of owners and agencies.
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
  q: qOver('the name, the areas served and the short description', 'utrecht'),
  limit: limit(100, 20),
  cursor,
  type: documented(v.optional(str(1, 120)), 'Only owners of this type (exact match).', 'agency'),
});
const DetailQuery = v.strictObject({ locale });

/**
 * areas_served in the requested locale: each area that is a place is named as the locale names it (derived at build
 * time); only those places count towards Content-Language, as a listing's city does (the locale's bits where some
 * was translated, English where the owner has places but the locale none).
 */
const AREAS = {
  col: 'areas_served',
  lang: 'CASE WHEN t.areas_served IS NOT NULL THEN t.areas_lang ELSE (ifnull(o.areas_places, 0) > 0) << 1 END',
};

const SUMMARY_FIELDS = {
  id: F.id,
  slug: F.str,
  name: F.str,
  type: F.str,
  website_url: F.str,
  image_url: F.str,
  phone_numbers: F.strs,
  emails: F.strs,
  areas_served: F.strs,
  certifications: F.strs,
  description_short: F.str,
  updated_at: F.ts,
};
const DETAIL_FIELDS = { ...SUMMARY_FIELDS, description: F.str };

export function prepare(db: Database) {
  return {
    search: smallSearch(db, {
      // A search reads only what a summary shows: the long description is for the detail.
      select: itemSelect(db, 'owners', 'o', SUMMARY_FIELDS, [AREAS, 'description_short']),
      alias: 'o',
      fts: 'owners_fts',
      clauses: { type: 'o.type = @type' },
      json: rowJson,
    }),
    byId: db.prepare(
      `${itemSelect(db, 'owners', 'o', DETAIL_FIELDS, [AREAS, 'description_short', 'description'])} WHERE o.id = @id`,
    ),
  };
}

/** The spec's rule for owners, stated in the schema. */
const NULLABLE = 'Every field but id may be null, including the arrays: null means the source does not say.';

export const routes = () => [
  defineRoute<v.InferOutput<typeof SearchQuery>>({
    path: '/v1/owners',
    tag: 'Owners',
    kind: 'collection',
    query: SearchQuery,
    item: J.object(schemasOf(SUMMARY_FIELDS), { description: NULLABLE, example: EXAMPLES.ownerSummary }),
    summary: 'Search owners and agencies',
    description:
      'Owners and agencies that offer listings, in ascending id order. A listing names its owner by owner_id; the owner of a listing may be missing here when it is not public.',
    handle(ctx) {
      return searchPageJson(ctx, ctx.snap.use(prepare).search);
    },
  }),
  defineRoute<v.InferOutput<typeof DetailQuery>>({
    path: '/v1/owners/:id',
    record: 'owner',
    tag: 'Owners',
    kind: 'detail',
    query: DetailQuery,
    item: J.object(schemasOf(DETAIL_FIELDS), { description: NULLABLE, example: EXAMPLES.ownerDetail }),
    summary: 'One owner or agency by id',
    description: 'The search fields plus the long description, in the requested locale where translated.',
    handle(ctx) {
      const row = ctx.snap.use(prepare).byId.get({ id: ctx.params.id, locale: ctx.meta.locale }) as ItemRow | undefined;
      if (!row) throw notFound('owner');
      return new Localised(detailJson(rowJson(row), ctx.meta), langOf(row));
    },
  }),
];
