// /v1/insurance: products (search) and providers (search, detail).
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import { notFound } from '../http/errors.ts';
import { cursor, documented, id120, limit, locale, qOver, str } from '../http/params.ts';
import { detail } from '../http/respond.ts';
import { defineRoute } from '../http/route.ts';
import { EXAMPLES } from './support/examples.ts';
import { F, itemSelect, J, rowJson, schemasOf } from './support/fields.ts';
import { searchPageJson, smallSearch } from './support/small-search.ts';
import { termClause, termIndex, termSearchPage } from './support/term-index.ts';

const ProductQuery = v.strictObject({
  locale,
  q: qOver('the name, the official name, the headline and the summary', 'inboedel'),
  limit: limit(100, 20),
  cursor,
  provider_id: documented(
    v.optional(id120),
    'Only products of this provider (an id from /v1/insurance/providers).',
    'insurer_001',
  ),
  insurance_type: documented(v.optional(str(1, 120)), 'Only products of this type (exact match).', 'contents'),
  availability: documented(v.optional(str(1, 120)), 'Only products with this availability (exact match).', 'available'),
});
const ProviderQuery = v.strictObject({
  locale,
  q: qOver('the name', 'beheer'),
  limit: limit(100, 20),
  cursor,
});
const DetailQuery = v.strictObject({ locale });

const PROVIDER_SELECT = `SELECT p.id, p.slug, p.name, p.website_url, p.logo_url, p.customer_service_url, p.complaints_url,
  p.last_verified_at, p.updated_at FROM insurance_providers p`;

const PRODUCT_FIELDS = {
  id: F.id,
  slug: F.str,
  provider_id: F.str,
  name: F.str,
  official_name: F.str,
  insurance_type: F.str,
  product_kind: F.str,
  availability: F.str,
  official_url: F.str,
  quote_url: F.str,
  headline: F.str,
  summary: F.str,
  last_verified_at: F.ts,
  updated_at: F.ts,
};

export function prepare(db: Database) {
  return {
    products: smallSearch(db, {
      select: itemSelect(db, 'insurance_products', 'p', PRODUCT_FIELDS, ['headline', 'summary']),
      alias: 'p',
      fts: 'insurance_products_fts',
      clauses: {
        provider_id: 'p.provider_id = @provider_id',
        insurance_type: 'p.insurance_type = @insurance_type',
        availability: 'p.availability = @availability',
      },
      json: rowJson,
    }),
    providers: smallSearch(db, { select: PROVIDER_SELECT, alias: 'p', clauses: { q: termClause('p') } }),
    provider: db.prepare(`${PROVIDER_SELECT} WHERE p.id = ?`),
    // q: the provider's name (the snapshot has no full-text table for insurance providers; they have no translated text).
    providerWords: termIndex(db, 'SELECT rid, name AS text FROM insurance_providers'),
  };
}
type Row = Record<string, any>;
const PRODUCT = J.object(schemasOf(PRODUCT_FIELDS), { example: EXAMPLES.insuranceProduct });
const PROVIDER = J.object(
  {
    id: { type: 'string' },
    slug: J.str,
    name: J.str,
    website_url: J.str,
    logo_url: J.str,
    customer_service_url: J.str,
    complaints_url: J.str,
    last_verified_at: J.ts,
    updated_at: J.ts,
  },
  { example: EXAMPLES.insuranceProvider },
);

export const routes = () => [
  defineRoute<v.InferOutput<typeof ProductQuery>>({
    path: '/v1/insurance/products',
    tag: 'Insurance',
    kind: 'collection',
    query: ProductQuery,
    item: PRODUCT,
    summary: 'Search insurance products',
    description: 'Insurance products for tenants (contents, liability, legal aid, …) in ascending id order.',
    handle(ctx) {
      return searchPageJson(ctx, ctx.snap.use(prepare).products);
    },
  }),
  defineRoute<v.InferOutput<typeof ProviderQuery>>({
    path: '/v1/insurance/providers',
    tag: 'Insurance',
    kind: 'collection',
    query: ProviderQuery,
    item: PROVIDER,
    summary: 'Search insurance providers',
    description:
      'The insurers whose products /v1/insurance/products lists, in ascending id order. Their fields have no translations; locale only sets meta.locale.',
    handle(ctx) {
      const st = ctx.snap.use(prepare);
      return termSearchPage(ctx, st.providers, st.providerWords);
    },
  }),
  defineRoute<v.InferOutput<typeof DetailQuery>>({
    path: '/v1/insurance/providers/:id',
    record: 'insurance provider',
    tag: 'Insurance',
    kind: 'detail',
    query: DetailQuery,
    item: PROVIDER,
    summary: 'One insurance provider by id',
    description: 'The same fields as in the search.',
    handle(ctx) {
      const r = ctx.snap.use(prepare).provider.get(ctx.params.id) as Row | undefined;
      if (!r) throw notFound('insurance provider');
      return detail(r, ctx.meta);
    },
  }),
];
