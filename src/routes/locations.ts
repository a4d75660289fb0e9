// /v1/locations: search and detail (with its parent chain), so clients can find a location_id.
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import { Localised, langOf, langOfRows, withoutLang } from '../http/content-language.ts';
import { notFound } from '../http/errors.ts';
import { cursor, documented, id120, limit, locale, oneOf, qOver } from '../http/params.ts';
import { detail } from '../http/respond.ts';
import { defineRoute } from '../http/route.ts';
import { EXAMPLES } from './support/examples.ts';
import { F, type Fields, itemJson, J, parseJson, schemasOf } from './support/fields.ts';
import { i18nJoin, tr } from './support/i18n-sql.ts';
import { searchPageJson, smallSearch } from './support/small-search.ts';

const SearchQuery = v.strictObject({
  locale,
  q: qOver('the name in every language and the slug', 'den haag'),
  limit: limit(100, 20),
  cursor,
  type: documented(
    v.optional(oneOf(['province', 'city', 'neighbourhood'] as const)),
    'Only locations of this level.',
    'city',
  ),
  parent_id: documented(
    v.optional(id120),
    'Only the direct children of this location (the cities of a province, the neighbourhoods of a city).',
    'loc_0008',
  ),
});
const DetailQuery = v.strictObject({ locale });

const SELECT = `SELECT l.id, l.slug, l.type, ${tr('l', ['name'])}, l.parent_id, l.latitude, l.longitude, l.postcode_prefixes
  FROM locations l ${i18nJoin('locations', 'l')}`;

export function prepare(db: Database) {
  return {
    search: smallSearch(db, {
      select: SELECT,
      where: 'l.published = 1',
      alias: 'l',
      fts: 'locations_fts',
      clauses: { type: 'l.type = @type', parent_id: 'l.parent_id = @parent_id' },
      json: (r) => locationJson(r),
    }),
    byId: db.prepare(`${SELECT} WHERE l.id = @id AND l.published = 1`),
    parents: db.prepare(`SELECT l.id, l.slug, l.type, ${tr('l', ['name'])} FROM location_closure c
      JOIN locations l ON l.id = c.ancestor_id ${i18nJoin('locations', 'l')}
      WHERE c.descendant_id = @id AND c.depth > 0 ORDER BY c.depth DESC`),
  };
}
type Row = Record<string, any>;
const LOCATION_FIELDS = {
  id: F.id,
  slug: F.str,
  type: { kind: 'value', schema: { type: 'string', enum: ['province', 'city', 'neighbourhood'] } },
  name: F.str,
  parent_id: F.str,
  latitude: F.num,
  longitude: F.num,
  postcode_prefixes: F.strs,
} as const satisfies Fields;
const locationJson = itemJson(LOCATION_FIELDS);
const location = (r: Row) => ({
  id: r.id,
  slug: r.slug,
  type: r.type,
  name: r.name,
  parent_id: r.parent_id,
  latitude: r.latitude,
  longitude: r.longitude,
  postcode_prefixes: parseJson(r.postcode_prefixes),
});
const LOCATION = schemasOf(LOCATION_FIELDS);
const PARENT = J.object({ id: { type: 'string' }, slug: J.str, type: { type: 'string' }, name: J.str });

export const routes = () => [
  defineRoute<v.InferOutput<typeof SearchQuery>>({
    path: '/v1/locations',
    tag: 'Locations',
    kind: 'collection',
    query: SearchQuery,
    item: J.object(LOCATION, { example: EXAMPLES.location }),
    summary: 'Search provinces, cities and neighbourhoods (the ids that location_id filters take)',
    description:
      'Published locations in ascending id order. Names follow the locale, with English where a place has no name in it.',
    handle(ctx) {
      return searchPageJson(ctx, ctx.snap.use(prepare).search);
    },
  }),
  defineRoute<v.InferOutput<typeof DetailQuery>>({
    path: '/v1/locations/:id',
    record: 'location',
    tag: 'Locations',
    kind: 'detail',
    query: DetailQuery,
    item: J.object(
      {
        ...LOCATION,
        parents: { type: 'array', items: PARENT, description: 'From the province down to the direct parent.' },
      },
      { example: EXAMPLES.locationDetail },
    ),
    summary: 'One location with its parent chain',
    description: 'The location plus parents: its province and city, from the top down to the direct parent.',
    handle(ctx) {
      const st = ctx.snap.use(prepare);
      const r = st.byId.get({ id: ctx.params.id, locale: ctx.meta.locale }) as Row | undefined;
      if (!r) throw notFound('location');
      const parents = st.parents.all({ id: ctx.params.id, locale: ctx.meta.locale }) as Row[];
      const body = detail({ ...location(withoutLang(r)), parents: parents.map(withoutLang) }, ctx.meta);
      return new Localised(body, langOf(r) | langOfRows(parents));
    },
  }),
];
