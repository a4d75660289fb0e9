// /v1/internet: providers (search, detail) and plans (search).
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import { Localised, langOf } from '../http/content-language.ts';
import { notFound } from '../http/errors.ts';
import { cursor, documented, id120, int, limit, locale, num, qOver, str } from '../http/params.ts';
import { detailJson } from '../http/respond.ts';
import { defineRoute } from '../http/route.ts';
import { EXAMPLES } from './support/examples.ts';
import { F, type ItemRow, itemJson, itemSelect, J, rowJson, schemasOf } from './support/fields.ts';
import { i18nJoin, tr } from './support/i18n-sql.ts';
import { searchPageJson, smallSearch } from './support/small-search.ts';

const ProviderQuery = v.strictObject({
  locale,
  q: qOver('the name and the description', 'glasvezel'),
  limit: limit(100, 20),
  cursor,
});
const PlanQuery = v.strictObject({
  locale,
  q: qOver("the plan's name, its connection type, its provider's name and the description", 'glasvezel'),
  limit: limit(100, 20),
  cursor,
  provider_id: documented(
    v.optional(id120),
    'Only plans of this provider (an id from /v1/internet/providers).',
    'inet_001',
  ),
  connection_type: documented(v.optional(str(1, 120)), 'Only plans of this connection type (exact match).', 'fiber'),
  min_download_mbps: documented(
    v.optional(num(0, 100_000)),
    'Only plans with at least this download speed in Mbit/s (decimals allowed).',
    500,
  ),
  max_monthly_price_cents: documented(
    v.optional(int(0, 10_000_000)),
    'Only plans whose regular monthly price (after any introductory period) is at most this many cents.',
    5000,
  ),
});
const DetailQuery = v.strictObject({ locale });

const PLAN_SELECT = `SELECT p.id, p.provider_id, p.name, p.connection_type, p.download_mbps, p.upload_mbps, p.minimum_contract_months,
  p.regular_monthly_price_cents, p.intro_monthly_price_cents, p.intro_duration_months, p.activation_fee_cents,
  p.installation_fee_cents, p.currency, p.official_url, p.postcode_check_url, p.availability_status,
  ${tr('p', ['description'])}, p.last_verified_at, p.updated_at
  FROM internet_plans p ${i18nJoin('internet_plans', 'p')}`;

const PROVIDER_FIELDS = {
  id: F.id,
  slug: F.str,
  name: F.str,
  website_url: F.str,
  postcode_check_url: F.str,
  logo_url: F.str,
  customer_service_url: F.str,
  support_languages: F.strs,
  description: F.str,
  last_verified_at: F.ts,
  updated_at: F.ts,
} as const;
const PROVIDER_DETAIL_FIELDS = {
  ...PROVIDER_FIELDS,
  support_details: F.str,
  strengths: F.strs,
  considerations: F.strs,
} as const;

export function prepare(db: Database) {
  return {
    providers: smallSearch(db, {
      // A search reads only what a summary shows; the support details, strengths and considerations are for the detail.
      select: itemSelect(db, 'internet_providers', 'p', PROVIDER_FIELDS, ['description']),
      alias: 'p',
      fts: 'internet_providers_fts',
      clauses: {},
      json: rowJson,
    }),
    provider: db.prepare(
      `${itemSelect(db, 'internet_providers', 'p', PROVIDER_DETAIL_FIELDS, ['description', 'support_details', 'strengths', 'considerations'])} WHERE p.id = @id`,
    ),
    plans: smallSearch(db, {
      select: PLAN_SELECT,
      alias: 'p',
      fts: 'internet_plans_fts',
      clauses: {
        provider_id: 'p.provider_id = @provider_id',
        connection_type: 'p.connection_type = @connection_type',
        min_download_mbps: 'p.download_mbps >= @min_download_mbps',
        // The regular price is what a plan costs after any introductory period.
        max_monthly_price_cents: 'p.regular_monthly_price_cents <= @max_monthly_price_cents',
      },
      json: (r) => planJson(r),
    }),
  };
}
const PLAN_FIELDS = {
  id: F.id,
  provider_id: F.str,
  name: F.str,
  connection_type: F.str,
  download_mbps: F.num,
  upload_mbps: F.num,
  minimum_contract_months: F.num,
  regular_monthly_price_cents: F.int,
  intro_monthly_price_cents: F.int,
  intro_duration_months: F.int,
  activation_fee_cents: F.int,
  installation_fee_cents: F.int,
  currency: F.str,
  official_url: F.str,
  postcode_check_url: F.str,
  availability_status: F.str,
  description: F.str,
  last_verified_at: F.ts,
  updated_at: F.ts,
};
const planJson = itemJson(PLAN_FIELDS);
const PLAN = J.object(schemasOf(PLAN_FIELDS), { example: EXAMPLES.internetPlan });

export const routes = () => [
  defineRoute<v.InferOutput<typeof ProviderQuery>>({
    path: '/v1/internet/providers',
    tag: 'Internet',
    kind: 'collection',
    query: ProviderQuery,
    item: J.object(schemasOf(PROVIDER_FIELDS), { example: EXAMPLES.internetProviderSummary }),
    summary: 'Search internet providers',
    description: 'Home internet providers in ascending id order; their plans are at /v1/internet/plans?provider_id=….',
    handle(ctx) {
      return searchPageJson(ctx, ctx.snap.use(prepare).providers);
    },
  }),
  defineRoute<v.InferOutput<typeof DetailQuery>>({
    path: '/v1/internet/providers/:id',
    record: 'internet provider',
    tag: 'Internet',
    kind: 'detail',
    query: DetailQuery,
    item: J.object(schemasOf(PROVIDER_DETAIL_FIELDS), { example: EXAMPLES.internetProviderDetail }),
    summary: 'One internet provider by id',
    description:
      'The search fields plus support details, strengths and considerations, in the requested locale where translated.',
    handle(ctx) {
      const row = ctx.snap.use(prepare).provider.get({ id: ctx.params.id, locale: ctx.meta.locale }) as
        | ItemRow
        | undefined;
      if (!row) throw notFound('internet provider');
      return new Localised(detailJson(rowJson(row), ctx.meta), langOf(row));
    },
  }),
  defineRoute<v.InferOutput<typeof PlanQuery>>({
    path: '/v1/internet/plans',
    tag: 'Internet',
    kind: 'collection',
    query: PlanQuery,
    item: PLAN,
    summary: 'Search internet plans',
    description:
      'Internet subscriptions in ascending id order. Prices are integer cents per month in currency; max_monthly_price_cents compares the regular monthly price (after any introductory period).',
    handle(ctx) {
      return searchPageJson(ctx, ctx.snap.use(prepare).plans);
    },
  }),
];
