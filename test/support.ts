// Shared test pieces for the read-API suites: response-shape checks, the error envelope, cursor walks,
// a larger generated fixture, and a model of the source data to compute expected answers from.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESOURCES } from '../snapshot-format/resources.ts';
import { copyFixture, type TestServer, tempDir } from './helpers.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export type Res = Awaited<ReturnType<TestServer['get']>>;

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

/** A paginated collection: exactly data, pagination, meta; next_cursor is null exactly when has_more is false. */
export function assertCollection(res: Res, item: Shape, opts: { locale?: string; limit?: number } = {}) {
  assertOk(res);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'meta', 'pagination']);
  assert.ok(Array.isArray(res.body.data), 'data is an array');
  assertShape(res.body.pagination, { limit: 'integer', has_more: 'boolean', next_cursor: 'string?' }, 'pagination');
  const p = res.body.pagination;
  assert.equal(p.limit, opts.limit ?? 20, 'pagination.limit is the requested (or default) limit');
  assert.equal(p.next_cursor === null, !p.has_more, 'next_cursor is null exactly when has_more is false');
  assert.ok(res.body.data.length <= p.limit, 'no more items than the limit');
  res.body.data.forEach((x: unknown, i: number) => {
    assertShape(x, item, `data[${i}]`);
  });
  assertMeta(res, opts.locale ?? 'en');
}

/** A bounded collection: exactly data (array) and meta, no pagination. */
export function assertBounded(res: Res, item: Shape, opts: { locale?: string } = {}) {
  assertOk(res);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'meta']);
  assert.ok(Array.isArray(res.body.data), 'data is an array');
  res.body.data.forEach((x: unknown, i: number) => {
    assertShape(x, item, `data[${i}]`);
  });
  assertMeta(res, opts.locale ?? 'en');
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

// ---------------------------------------------------------------------------------------- walks

export const withParams = (path: string, params: Record<string, string | number>) => {
  const qs = Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return qs ? path + (path.includes('?') ? '&' : '?') + qs : path;
};

/**
 * Follows next_cursor from the first page to the last, checking every page's pagination: full pages while
 * has_more, next_cursor null exactly on the last page. Returns every item in the order served.
 */
export async function walk(
  server: TestServer,
  path: string,
  limit: number,
  maxPages = 2000,
): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let pages = 1; pages <= maxPages; pages++) {
    const res = await server.get(withParams(path, cursor === null ? { limit } : { limit, cursor }));
    assert.equal(res.status, 200, `page ${pages} of ${path}: ${res.text.slice(0, 300)}`);
    const p = res.body.pagination;
    assert.equal(p.limit, limit);
    assert.equal(
      p.next_cursor === null,
      !p.has_more,
      `page ${pages}: next_cursor is null exactly when has_more is false`,
    );
    if (p.has_more) assert.equal(res.body.data.length, limit, `page ${pages}: a page with more to come is full`);
    items.push(...res.body.data);
    if (!p.has_more) return { items, pages };
    assert.equal(typeof p.next_cursor, 'string');
    cursor = p.next_cursor;
  }
  assert.fail(`${path}: more than ${maxPages} pages`);
}

/** Ids strictly ascending (so also no duplicates). */
export function assertAscendingIds(items: { id: string }[]) {
  const ids = items.map((x) => x.id);
  for (let i = 1; i < ids.length; i++)
    assert.ok(ids[i - 1] < ids[i], `ids ascend without duplicates: ${ids[i - 1]} then ${ids[i]}`);
  assert.equal(new Set(ids).size, ids.length, 'no duplicate ids');
}

// ---------------------------------------------------------------------------------------- source model

export type Rec = Record<string, any>;
export interface SourceModel {
  dir: string;
  all: Record<string, Rec[]>;
  locations: Map<string, Rec>;
  /** Listings a search returns: rent, active, published; ascending id. */
  listings: Rec[];
  listingById: Map<string, Rec>;
  /** The location itself and all its ancestors. */
  ancestorsOf(locationId: string): string[];
  cityOf(locationId: string): string;
}

export function readNdjson(file: string): Rec[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

export function loadSource(dir: string): SourceModel {
  const names = RESOURCES;
  const all = Object.fromEntries(names.map((n) => [n, readNdjson(join(dir, `${n}.ndjson`))]));
  const locations = new Map(all.locations.map((l) => [l.id as string, l]));
  const ancestorsOf = (id: string) => {
    const out: string[] = [];
    for (let cur: string | null = id; cur; cur = locations.get(cur)?.parent_id ?? null) out.push(cur);
    return out;
  };
  const cityOf = (id: string) => ancestorsOf(id).find((x) => locations.get(x)!.type === 'city')!;
  const listings = all.listings
    .filter((l) => l.offer_type === 'rent' && l.active && l.published)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  return { dir, all, locations, listings, listingById: new Map(listings.map((l) => [l.id, l])), ancestorsOf, cityOf };
}

/** The tokens the full-text index sees in a text: accents removed, lower case, runs of letters and digits. */
export const tokens = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

/** Everything a listing's q search covers: title and description in every locale, street, postcode, location names. */
export function listingText(m: SourceModel, l: Rec): Set<string> {
  const parts: string[] = [
    ...Object.values(l.title as Record<string, string>),
    ...Object.values((l.description ?? {}) as Record<string, string>),
    l.street ?? '',
    l.postcode ?? '',
  ];
  for (const id of m.ancestorsOf(l.location_id))
    parts.push(...Object.values(m.locations.get(id)!.name as Record<string, string>));
  return new Set(parts.flatMap(tokens));
}

/** [min, max, average rounded to cents, median (mean of the middle two for an even count)] of prices, or nulls. */
export function expectedStats(prices: number[]) {
  if (prices.length === 0)
    return { min_price_eur: null, max_price_eur: null, average_price_eur: null, median_price_eur: null };
  const a = [...prices].sort((x, y) => x - y);
  const mid = Math.floor(a.length / 2);
  return {
    min_price_eur: a[0],
    max_price_eur: a[a.length - 1],
    average_price_eur: Math.round((a.reduce((s, x) => s + x, 0) / a.length) * 100) / 100,
    median_price_eur: a.length % 2 ? a[mid] : (a[mid - 1] + a[mid]) / 2,
  };
}

// ---------------------------------------------------------------------------------------- a larger fixture

const require = createRequire(import.meta.url);

/**
 * Source data with many listings. Uses the project's generator (generate/main.ts) when it is present
 * and works; otherwise (or with TEST_SYNTHETIC_FIXTURE=1) the basic fixture plus deterministic synthetic listings.
 */
export function generatedSource(listings = 400, seed = 7): { dir: string; by: 'generate.ts' | 'fallback' } {
  const script = join(ROOT, 'generate/main.ts');
  if (existsSync(script) && process.env.TEST_SYNTHETIC_FIXTURE !== '1') {
    const dir = join(tempDir(), 'generated');
    const r = spawnSync(
      process.execPath,
      [require.resolve('tsx/cli'), script, '--listings', String(listings), '--out', dir, '--seed', String(seed)],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    if (r.status === 0 && existsSync(join(dir, 'listings.ndjson'))) return { dir, by: 'generate.ts' };
  }
  return { dir: syntheticSource(listings, seed), by: 'fallback' };
}

/** The basic fixture plus `n` synthetic listings spread over its locations, owners and value ranges. */
export function syntheticSource(n: number, seed: number): string {
  const dir = copyFixture();
  let s = seed >>> 0;
  const rnd = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) {
    const id = `syn-${String(i).padStart(5, '0')}`;
    const type = pick(['apartment', 'house', 'studio', 'room'] as const);
    const word = pick(['garden', 'spacious', 'canal', 'quiet', 'bright'] as const);
    lines.push(
      JSON.stringify({
        id,
        slug: id,
        offer_type: rnd() < 0.9 ? 'rent' : 'sale',
        active: rnd() < 0.9,
        published: rnd() < 0.95,
        title: {
          en: `${word} ${type} ${i}`,
          ...Object.fromEntries(
            ['nl', 'de', 'fr', 'es'].filter(() => rnd() < 0.3).map((l) => [l, `${type} ${i} (${l})`]),
          ),
        },
        description: rnd() < 0.8 ? { en: `Synthetic listing ${i}` } : null,
        price_eur: rnd() < 0.05 ? null : 400 + Math.round(rnd() * 60) * 50,
        size_m2: rnd() < 0.03 ? null : 15 + Math.round(rnd() * 120),
        rooms: 1 + Math.floor(rnd() * 6),
        furnishing: pick(['SHELL', 'FURNISHED', 'UPHOLSTERED', null] as const),
        property_type: type,
        energy_label: pick(['A', 'B', 'C']),
        owner_id: pick(['own-1', 'own-2', 'own-3', null] as const),
        location_id: pick(['loc-ams', 'loc-ams-pijp', 'loc-ams-jordaan', 'loc-dh', 'loc-rdam'] as const),
        first_seen_at: '2026-03-01T00:00:00Z',
        created_at: '2026-03-01T00:00:00Z',
        updated_at: '2026-03-02T00:00:00Z',
      }),
    );
  }
  appendFileSync(join(dir, 'listings.ndjson'), `${lines.join('\n')}\n`);
  return dir;
}
