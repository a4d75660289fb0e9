// The spec's response shapes and envelopes, as checks: every field's type, no field missing or extra, the error
// envelope without SQL or a stack trace.
import assert from 'node:assert/strict';
import { UNAUTHORIZED_MESSAGE } from '../../src/http/guard.ts';
import { DATA_ROUTES } from './endpoints.ts';
import type { Res } from './server.ts';

// ---------------------------------------------------------------------------------------- shapes

/**
 * A field's expected type. A trailing `?` allows null. `timestamp` is an ISO 8601 date-time, `date` is
 * YYYY-MM-DD, `string[]` an array of strings. Objects and arrays of objects are given as nested shapes.
 */
export type Leaf = 'string' | 'number' | 'integer' | 'boolean' | 'timestamp' | 'date' | 'string[]' | 'object';
export type Spec = Leaf | `${Leaf}?` | { shape: Shape; nullable?: boolean } | { items: Shape; nullable?: boolean };
export type Shape = { [field: string]: Spec };

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function leafOk(t: Leaf, v: unknown): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'integer':
      return Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'timestamp':
      return typeof v === 'string' && TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v));
    case 'date':
      return typeof v === 'string' && DATE.test(v);
    case 'string[]':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
  }
}

/** Every way `value` differs from `shape`: missing or extra keys, wrong types, null where not allowed. */
export function shapeProblems(value: unknown, shape: Shape, where = 'data'): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return [`${where}: expected an object, got ${JSON.stringify(value)}`];
  const out: string[] = [];
  const keys = Object.keys(value).sort();
  const want = Object.keys(shape).sort();
  if (JSON.stringify(keys) !== JSON.stringify(want)) {
    const extra = keys.filter((k) => !want.includes(k));
    const missing = want.filter((k) => !keys.includes(k));
    out.push(`${where}: keys differ (extra: ${extra.join(', ') || '-'}; missing: ${missing.join(', ') || '-'})`);
  }
  for (const [k, spec] of Object.entries(shape)) {
    if (!(k in value)) continue;
    const v = (value as Record<string, unknown>)[k];
    const at = `${where}.${k}`;
    if (typeof spec === 'string') {
      const nullable = spec.endsWith('?');
      const leaf = (nullable ? spec.slice(0, -1) : spec) as Leaf;
      if (v === null ? !nullable : !leafOk(leaf, v)) out.push(`${at}: expected ${spec}, got ${JSON.stringify(v)}`);
    } else if (v === null) {
      if (!spec.nullable) out.push(`${at}: must not be null`);
    } else if ('shape' in spec) {
      out.push(...shapeProblems(v, spec.shape, at));
    } else if (!Array.isArray(v)) {
      out.push(`${at}: expected an array, got ${JSON.stringify(v)}`);
    } else {
      v.forEach((item, i) => {
        out.push(...shapeProblems(item, spec.items, `${at}[${i}]`));
      });
    }
  }
  return out;
}

export function assertShape(value: unknown, shape: Shape, where = 'data') {
  assert.deepEqual(shapeProblems(value, shape, where), []);
}

/** The same shape with null allowed nowhere: for records whose every field is filled in the fixture. */
export function filled(shape: Shape): Shape {
  return Object.fromEntries(
    Object.entries(shape).map(([k, s]) => [
      k,
      typeof s === 'string'
        ? (s.replace(/\?$/, '') as Spec)
        : 'shape' in s
          ? { shape: filled(s.shape) }
          : { items: filled(s.items) },
    ]),
  );
}

// The spec's field lists ("Resources and their fields"); the record id is never null.
export const LISTING_SUMMARY: Shape = {
  id: 'string',
  slug: 'string',
  title: 'string',
  price_eur: 'number?',
  size_m2: 'number?',
  rooms: 'number?',
  furnishing: 'string?',
  property_type: 'string?',
  energy_label: 'string?',
  owner_id: 'string?',
  image_url: 'string?',
  created_at: 'timestamp',
  updated_at: 'timestamp',
  location: {
    shape: {
      city: 'string?',
      street: 'string?',
      number: 'string?',
      postcode: 'string?',
      latitude: 'number?',
      longitude: 'number?',
    },
  },
};
export const LISTING_DETAIL: Shape = {
  ...LISTING_SUMMARY,
  description: 'string?',
  images: 'string[]?',
  attributes: 'object?',
  sources: { items: { url: 'string', type: 'string' }, nullable: true },
};
export const LISTING_STATS: Shape = {
  count: 'integer',
  min_price_eur: 'number?',
  max_price_eur: 'number?',
  average_price_eur: 'number?',
  median_price_eur: 'number?',
};
export const OBSERVATION: Shape = { date: 'date', value: 'number', sample_size: 'integer' };
export const OWNER_SUMMARY: Shape = {
  id: 'string',
  slug: 'string?',
  name: 'string?',
  type: 'string?',
  website_url: 'string?',
  image_url: 'string?',
  phone_numbers: 'string[]?',
  emails: 'string[]?',
  areas_served: 'string[]?',
  certifications: 'string[]?',
  description_short: 'string?',
  updated_at: 'timestamp?',
};
export const OWNER_DETAIL: Shape = { ...OWNER_SUMMARY, description: 'string?' };
export const INTERNET_PROVIDER_SUMMARY: Shape = {
  id: 'string',
  slug: 'string?',
  name: 'string?',
  website_url: 'string?',
  postcode_check_url: 'string?',
  logo_url: 'string?',
  customer_service_url: 'string?',
  support_languages: 'string[]?',
  description: 'string?',
  last_verified_at: 'timestamp?',
  updated_at: 'timestamp?',
};
export const INTERNET_PROVIDER_DETAIL: Shape = {
  ...INTERNET_PROVIDER_SUMMARY,
  support_details: 'string?',
  strengths: 'string[]?',
  considerations: 'string[]?',
};
export const INTERNET_PLAN: Shape = {
  id: 'string',
  provider_id: 'string?',
  name: 'string?',
  connection_type: 'string?',
  download_mbps: 'number?',
  upload_mbps: 'number?',
  minimum_contract_months: 'number?',
  regular_monthly_price_cents: 'integer?',
  intro_monthly_price_cents: 'integer?',
  intro_duration_months: 'integer?',
  activation_fee_cents: 'integer?',
  installation_fee_cents: 'integer?',
  currency: 'string?',
  official_url: 'string?',
  postcode_check_url: 'string?',
  availability_status: 'string?',
  description: 'string?',
  last_verified_at: 'timestamp?',
  updated_at: 'timestamp?',
};
export const INSURANCE_PRODUCT: Shape = {
  id: 'string',
  slug: 'string?',
  provider_id: 'string?',
  name: 'string?',
  official_name: 'string?',
  insurance_type: 'string?',
  product_kind: 'string?',
  availability: 'string?',
  official_url: 'string?',
  quote_url: 'string?',
  headline: 'string?',
  summary: 'string?',
  last_verified_at: 'timestamp?',
  updated_at: 'timestamp?',
};
export const INSURANCE_PROVIDER: Shape = {
  id: 'string',
  slug: 'string?',
  name: 'string?',
  website_url: 'string?',
  logo_url: 'string?',
  customer_service_url: 'string?',
  complaints_url: 'string?',
  last_verified_at: 'timestamp?',
  updated_at: 'timestamp?',
};
export const PLATFORM_SUMMARY: Shape = {
  id: 'string',
  slug: 'string?',
  name: 'string?',
  url: 'string?',
  logo_url: 'string?',
  type: 'string?',
  category: 'string?',
  registration_required: 'boolean?',
  registration_fee_amount: 'number?',
  subscription_fee_from: 'number?',
  fee_currency: 'string?',
  headline: 'string?',
  features: 'string[]?',
  last_verified_at: 'timestamp?',
  updated_at: 'timestamp?',
};
export const PLATFORM_DETAIL: Shape = {
  ...PLATFORM_SUMMARY,
  attributes: 'object?',
  description: 'string?',
  pricing_details: 'string?',
  content: 'string?',
};
export const ARTICLE: Shape = {
  id: 'string',
  slug: 'string?',
  title: 'string?',
  description: 'string?',
  content: 'string?',
  category: 'string?',
  location_id: 'string?',
  created_at: 'timestamp?',
  updated_at: 'timestamp?',
};
// Locations and metric definitions: fields "not shown" in the spec; these are the service's documented shapes.
export const LOCATION: Shape = {
  id: 'string',
  slug: 'string',
  type: 'string',
  name: 'string',
  parent_id: 'string?',
  latitude: 'number?',
  longitude: 'number?',
  postcode_prefixes: 'string[]?',
};
export const LOCATION_DETAIL: Shape = {
  ...LOCATION,
  parents: { items: { id: 'string', slug: 'string', type: 'string', name: 'string' } },
};
export const METRIC: Shape = {
  id: 'string',
  name: 'string',
  description: 'string?',
  unit: 'string',
  min_sample_size: 'integer',
};

/** The discovery endpoints' shapes (fields the spec leaves open; see docs/api-notes.md). */
const { content: _content, ...articleSummary } = ARTICLE;
export const ARTICLE_SUMMARY: Shape = articleSummary;
export const GLOSSARY_ENTRY: Shape = {
  id: 'string',
  slug: 'string?',
  term: 'string?',
  definition: 'string?',
  updated_at: 'timestamp?',
};

// ---------------------------------------------------------------------------------------- endpoints

export const OBS = '/v1/market/metrics/median_rent/observations';
export const OBS_OK = `${OBS}?location_id=loc-ams&from=2026-01-01&to=2026-12-31`;
/**
 * The spec's item shape of every data endpoint, by route pattern, and how many items the basic fixture gives at
 * least. /v1/changes answers only on a snapshot built with a change history: its shapes are in changes.test.ts.
 */
export const SHAPES: Record<string, { shape: Shape; min?: number }> = {
  '/v1/listings': { shape: LISTING_SUMMARY, min: 9 },
  '/v1/listings/:id': { shape: filled(LISTING_DETAIL) },
  '/v1/listings/:id/similar': { shape: LISTING_SUMMARY, min: 1 },
  '/v1/listings/stats': { shape: filled(LISTING_STATS) },
  '/v1/owners': { shape: OWNER_SUMMARY, min: 2 },
  '/v1/owners/:id': { shape: OWNER_DETAIL },
  '/v1/internet/providers': { shape: INTERNET_PROVIDER_SUMMARY, min: 2 },
  '/v1/internet/providers/:id': { shape: INTERNET_PROVIDER_DETAIL },
  '/v1/internet/plans': { shape: INTERNET_PLAN, min: 3 },
  '/v1/insurance/products': { shape: INSURANCE_PRODUCT, min: 2 },
  '/v1/insurance/providers': { shape: INSURANCE_PROVIDER, min: 1 },
  '/v1/insurance/providers/:id': { shape: INSURANCE_PROVIDER },
  '/v1/platforms': { shape: PLATFORM_SUMMARY, min: 2 },
  '/v1/platforms/:id': { shape: PLATFORM_DETAIL },
  '/v1/articles': { shape: ARTICLE_SUMMARY, min: 1 },
  '/v1/articles/:id': { shape: ARTICLE },
  '/v1/glossary': { shape: GLOSSARY_ENTRY, min: 1 },
  '/v1/glossary/:id': { shape: GLOSSARY_ENTRY },
  '/v1/market/metrics': { shape: METRIC, min: 3 },
  '/v1/market/metrics/:id/observations': { shape: OBSERVATION, min: 1 },
  '/v1/locations': { shape: LOCATION, min: 7 },
  '/v1/locations/:id': { shape: LOCATION_DETAIL },
};
/** Every data endpoint of the route table that answers on the basic fixture, with its envelope and item shape. */
export const ENDPOINTS = DATA_ROUTES.filter((r) => r.path !== '/v1/changes').map((r) => ({
  pattern: r.path,
  kind: r.kind as 'collection' | 'bounded' | 'detail',
  ...SHAPES[r.path],
}));

// ---------------------------------------------------------------------------------------- envelopes

export const META: Shape = { locale: 'string', request_id: 'string' };

function assertJson(res: Res) {
  assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/, 'Content-Type is application/json');
  assert.notEqual(res.body, undefined, `body is JSON: ${res.text.slice(0, 200)}`);
}

function assertMeta(res: Res, locale: string) {
  assertShape(res.body.meta, META, 'meta');
  assert.equal(res.body.meta.locale, locale, 'meta.locale is the requested locale');
  assert.ok(res.body.meta.request_id.length > 0, 'meta.request_id is not empty');
  assert.equal(
    res.body.meta.request_id,
    res.headers.get('x-request-id'),
    'meta.request_id equals the X-Request-Id header',
  );
}

function assertOk(res: Res) {
  assert.equal(res.status, 200, `expected 200, got ${res.status}: ${res.text.slice(0, 300)}`);
  assertJson(res);
}

/** A list: exactly the keys `keys`, data an array whose every item has `item`'s shape, meta in `locale`. */
function assertList(res: Res, item: Shape, keys: string[], locale = 'en') {
  assertOk(res);
  assert.deepEqual(Object.keys(res.body).sort(), keys);
  assert.ok(Array.isArray(res.body.data), 'data is an array');
  res.body.data.forEach((x: unknown, i: number) => {
    assertShape(x, item, `data[${i}]`);
  });
  assertMeta(res, locale);
}

/** A paginated collection: exactly data, pagination, meta; next_cursor is null exactly when has_more is false. */
export function assertCollection(res: Res, item: Shape, opts: { locale?: string; limit?: number } = {}) {
  assertList(res, item, ['data', 'meta', 'pagination'], opts.locale);
  assertShape(res.body.pagination, { limit: 'integer', has_more: 'boolean', next_cursor: 'string?' }, 'pagination');
  const p = res.body.pagination;
  assert.equal(p.limit, opts.limit ?? 20, 'pagination.limit is the requested (or default) limit');
  assert.equal(p.next_cursor === null, !p.has_more, 'next_cursor is null exactly when has_more is false');
  assert.ok(res.body.data.length <= p.limit, 'no more items than the limit');
}

/** A bounded collection: exactly data (array) and meta, no pagination. */
export function assertBounded(res: Res, item: Shape, opts: { locale?: string } = {}) {
  assertList(res, item, ['data', 'meta'], opts.locale);
}

/** A detail or aggregate: exactly data (object) and meta. */
export function assertDetail(res: Res, shape: Shape, opts: { locale?: string } = {}) {
  assertOk(res);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'meta']);
  assertShape(res.body.data, shape, 'data');
  assertMeta(res, opts.locale ?? 'en');
}

const SQL_TEXT = [
  /\bSELECT\b/,
  /\bWHERE\b/,
  /\bJOIN\b/,
  /INDEXED BY/,
  /\bsqlite/i,
  /no such (table|column)/i,
  /syntax error/i,
  /\bfts5\b/i,
];
const STACK_TEXT = [/\n\s+at\s/, /\bat\s+\S+\s+\(.*:\d+:\d+\)/, /\.ts:\d+/, /node_modules/, /\bError:/];

/**
 * The spec's error envelope, exactly: {error: {code, message, request_id}}, application/json, request_id equal to
 * X-Request-Id, no stack trace and no SQL in the message. `names` is text the message must contain (a parameter name).
 */
export function assertError(res: Res, status: number, opts: { code?: string; names?: string | RegExp } = {}) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
  assertJson(res);
  assert.deepEqual(Object.keys(res.body), ['error']);
  assertShape(res.body.error, { code: 'string', message: 'string', request_id: 'string' }, 'error');
  const { code, message, request_id } = res.body.error;
  if (opts.code) assert.equal(code, opts.code);
  assert.ok(message.length > 0, 'message is not empty');
  assert.equal(request_id, res.headers.get('x-request-id'), 'error.request_id equals the X-Request-Id header');
  for (const re of [...SQL_TEXT, ...STACK_TEXT]) assert.doesNotMatch(res.text, re, 'no SQL or stack trace in an error');
  if (opts.names !== undefined) {
    if (typeof opts.names === 'string')
      assert.ok(message.includes(opts.names), `message names ${opts.names}: ${message}`);
    else assert.match(message, opts.names);
  }
}

/** 400 invalid_request whose message names the parameter (quoted, as the service writes it). */
export function assert400(res: Res, param: string) {
  assertError(res, 400, { code: 'invalid_request', names: `"${param}"` });
}

/** The one 401 every kind of bad key gets: the Bearer challenge and the envelope with the same message. */
export function assertUnauthorized(r: Pick<Res, 'status' | 'headers' | 'body'>, what: string) {
  assert.equal(r.status, 401, what);
  assert.equal(r.headers.get('www-authenticate'), 'Bearer', what);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'message', 'request_id'], what);
  assert.equal(r.body.error.code, 'unauthorized', what);
  assert.equal(r.body.error.message, UNAUTHORIZED_MESSAGE, what);
}
