// The OpenAPI document's prose and shared parts: the introduction, the tags, the response headers, and the
// envelope, error schemas and shared responses every operation refers to.
import { LOCALES } from '../../snapshot-format/locales.ts';
import { POLICY, RATE_WINDOW_SECONDS } from '../access/rate-limit.ts';
import type { Dependency } from '../errors.ts';
import {
  CODES,
  INTERNAL_MESSAGE,
  notAllowedMessage,
  TIMEOUT_MESSAGE,
  TOO_LARGE_MESSAGE,
  UNAVAILABLE,
} from '../http/errors.ts';
import { UNAUTHORIZED_MESSAGE } from '../http/guard.ts';
import { MAX_PARAMS, MAX_QUERY_LENGTH } from '../http/query.ts';
import { SERVICE_ID } from '../routes/ping.ts';

/** Each error code with its status, in the order of the statuses ("400 `invalid_request`, 401 …"). */
const CODE_LIST = Object.entries(CODES)
  .sort((a, b) => a[1] - b[1])
  .map(([code, status]) => `${status} \`${code}\``)
  .join(', ');

export const INTRODUCTION = `Read-only JSON API (\`${SERVICE_ID}\`) for Netherlands rental listings and the housing resources around them: owners and agencies, internet providers and plans, insurance, rental platforms, articles, a glossary, locations and market statistics. Prices are asking rents, not signed tenancy prices. Everything is \`GET\` (and \`HEAD\`); there is no write operation.

## Authentication

Every endpoint except \`/v1/ping\` and this document needs the header \`Authorization: Bearer KEY\`, with exactly one space and no quotes. Keys are issued and revoked by the operator. A key is never accepted in the query string. A missing, malformed, unknown, expired, disabled or revoked key is a 401 \`unauthorized\` with \`WWW-Authenticate: Bearer\`, and the message does not say which.

## Responses

- A search answers \`{"data": [...], "pagination": {"limit", "has_more", "next_cursor"}, "meta": {"locale", "request_id"}}\`.
- A bounded list (similar listings, observations, metrics) answers \`{"data": [...], "meta": {...}}\`; a detail or aggregate \`{"data": {...}, "meta": {...}}\`.
- Every documented field is always present. An unknown value is \`null\`: never 0, an empty string or free. Text may be Markdown; its links and images are external content.
- Units are in the field names: \`price_eur\` is euros per month, \`size_m2\` square metres, \`*_cents\` integer cents; \`rooms\` counts all rooms, not bedrooms. Timestamps are RFC 3339; dates are \`YYYY-MM-DD\`.
- Every response carries \`X-Request-Id\`, the same value as \`meta.request_id\` or \`error.request_id\`.

## Paging

Searches are ordered by ascending id (not by date, price or relevance), with \`limit\` items a page (1 to 100, default 20). When \`pagination.has_more\` is true, request the next page with \`cursor\` set to \`pagination.next_cursor\` and every other parameter unchanged: a cursor from another endpoint, filter set, locale or limit is a 400, and so is one older than 24 hours. There are no page numbers or offsets. Paging is not a snapshot: records may appear or vanish between pages. An empty \`data\` is a success.

## Languages

\`locale\` (${LOCALES.join(', ')}; default en) selects translated free text and the display names of places; a field without a translation is served in English, field by field. Ids, slugs, codes, numbers and dates never change with the locale. \`meta.locale\` repeats the requested locale; it does not promise that every field was translated. \`Content-Language\` says which languages the body holds: the locale, \`en\`, or both (\`de, en\` when some fields fell back to English); an answer without translated text (statistics, an empty page) has none.

## Parameters

Each endpoint takes exactly the parameters listed for it. An unknown parameter, a repeated one, a value outside its rule (enums are case-sensitive) or a minimum above its maximum is a 400 \`invalid_request\` whose message names the parameter and its rule. Path ids are ids, 1 to 120 characters, not slugs or URLs.

## Errors and limits

Errors are \`{"error": {"code", "message", "request_id"}}\`: ${CODE_LIST}. Each key may make a number of requests a minute: every keyed answer reports the policy and what is left in \`RateLimit-Policy\` and \`RateLimit\`; beyond it the answer is 429 with \`Retry-After\` (seconds), which a client must obey. Repeated failed authentications from one address are limited the same way. When the data or the key store is unavailable, requests fail closed with 503 and \`Retry-After\`. A query string holds at most ${MAX_QUERY_LENGTH} characters and ${MAX_PARAMS} parameters, each given at most once; beyond that the answer is 400 \`invalid_request\`.

## Caching

Every data answer names the snapshot that answered (\`X-Snapshot-Id\`, \`Last-Modified\`) and carries a weak \`ETag\`. Sending that tag back in \`If-None-Match\` gets a 304 without a body while the data has not changed. Answers are private to the key (\`Cache-Control: private, no-cache\`).

## Versioning

The version is the path prefix \`/v1\`; this document describes version 1.0.0.`;

/** Every tag an operation may use, in the order a reader meets them. */
export const TAGS: { name: string; description: string }[] = [
  { name: 'Service', description: 'Availability check and this description; no key needed.' },
  {
    name: 'Listings',
    description: 'Active, published rental listings: search, detail, similar listings and asking-rent statistics.',
  },
  { name: 'Locations', description: 'Provinces, cities and neighbourhoods: where the location_id values come from.' },
  { name: 'Owners', description: 'Owners and agencies that offer listings (a listing names its owner_id).' },
  { name: 'Internet', description: 'Internet providers and their plans.' },
  { name: 'Insurance', description: 'Insurance providers and the products they offer tenants.' },
  { name: 'Platforms', description: 'Rental platforms: the sites and services where homes are advertised.' },
  { name: 'Articles', description: 'Editorial articles: city guides and advice on renting.' },
  { name: 'Glossary', description: 'Dutch rental terms (huurtoeslag, servicekosten, …) and what they mean.' },
  { name: 'Market', description: 'Market indicators and their monthly observations per city.' },
  {
    name: 'Changes',
    description:
      'What was added, removed or changed since an earlier snapshot, for clients that keep their own copy of the data.',
  },
];

const REQUEST_ID = '3f1c2a9e-7b4d-4e8a-9c6f-2d5b8e1a0c47';
export const HEADERS = {
  'X-Request-Id': {
    description:
      'The id of this request, as in meta.request_id or error.request_id; quote it when reporting a problem.',
    schema: { type: 'string', format: 'uuid' },
    example: REQUEST_ID,
  },
  RateLimit: {
    description:
      "What is left of this key's allowance (IETF RateLimit header fields): r requests remain, and the window resets in t seconds.",
    schema: { type: 'string' },
    example: `"${POLICY}";r=587;t=42`,
  },
  'RateLimit-Policy': {
    description: "This key's allowance: q requests in every window of w seconds.",
    schema: { type: 'string' },
    example: `"${POLICY}";q=600;w=${RATE_WINDOW_SECONDS}`,
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer', minimum: 1 },
    example: 12,
  },
  ETag: {
    description:
      'A weak tag of this answer on this data snapshot; send it in If-None-Match to get a 304 while the data has not changed.',
    schema: { type: 'string' },
    example: 'W/"vMSYFNm2wk7VGZPEbAWUjoD2FW8"',
  },
  'Last-Modified': {
    description: 'When the data snapshot that answered was built.',
    schema: { type: 'string' },
    example: 'Sun, 01 Nov 2026 00:00:00 GMT',
  },
  'Content-Language': {
    description:
      'The languages of the translated text in this answer: the requested locale, en, or both ("de, en": some fields had no German text and are in English). Absent when the answer holds no translated text (statistics, an empty page).',
    schema: { type: 'string' },
    example: 'de, en',
  },
  'X-Snapshot-Id': {
    description: 'The id of the data snapshot that answered; it changes when the operator publishes new data.',
    schema: { type: 'string' },
    example: 'snap_faee38559f690ef8610598f3',
  },
  'WWW-Authenticate': {
    description: 'The authentication scheme this API takes.',
    schema: { type: 'string', const: 'Bearer' },
    example: 'Bearer',
  },
};
export const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

export const ERROR_SCHEMA = {
  type: 'object',
  description: 'Every error. The code is one of a closed set; the message is for people and may change.',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', enum: Object.keys(CODES) },
        message: { type: 'string' },
        request_id: { type: 'string' },
      },
    },
  },
};

/** An error body as the service writes it. */
export const errorBody = (code: keyof typeof CODES, message: string) => ({
  error: { code, message, request_id: REQUEST_ID },
});
export const META_EXAMPLE = { locale: 'en', request_id: REQUEST_ID };

/** What each 503 example shows (its message comes from the table the server answers with). */
const UNAVAILABLE_SUMMARY: Record<Dependency, string> = {
  snapshot: 'The data is unavailable',
  key_store: 'The key store is unavailable',
  rate_limiter: 'The rate limiter is unavailable',
  data_store: 'The data store is busy',
};

/** Examples of the errors whose text does not depend on the endpoint. */
export const ERROR_EXAMPLES = {
  401: { unauthorized: { summary: 'No valid key', value: errorBody('unauthorized', UNAUTHORIZED_MESSAGE) } },
  429: {
    key_limit: {
      summary: "This key's allowance is used up",
      value: errorBody('rate_limited', 'Rate limit for this key exceeded; retry after 12 s.'),
    },
    failed_authentications: {
      summary: 'Too many failed authentications from this address',
      value: errorBody('rate_limited', 'Too many failed authentications from this address; retry after 12 s.'),
    },
  },
  503: Object.fromEntries(
    Object.entries(UNAVAILABLE).map(([dependency, { message }]) => [
      dependency,
      { summary: UNAVAILABLE_SUMMARY[dependency as Dependency], value: errorBody('service_unavailable', message) },
    ]),
  ),
};

export const META = {
  type: 'object',
  description: 'locale is the requested locale (not a promise that every field was translated).',
  required: ['locale', 'request_id'],
  properties: { locale: { type: 'string', enum: LOCALES }, request_id: { type: 'string' } },
};
export const PAGINATION = {
  type: 'object',
  description: 'next_cursor is null exactly when has_more is false.',
  required: ['limit', 'has_more', 'next_cursor'],
  properties: {
    limit: { type: 'integer' },
    has_more: { type: 'boolean' },
    next_cursor: { type: ['string', 'null'], maxLength: 4096 },
  },
};

/** An error response: the Error schema, the request id header and these examples. */
export const errorResponse = (
  description: string,
  examples: Record<string, unknown>,
  headers: Record<string, unknown>,
) => ({
  description,
  headers: { 'X-Request-Id': headerRef('X-Request-Id'), ...headers },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples } },
});

export const LIMITS = { RateLimit: headerRef('RateLimit'), 'RateLimit-Policy': headerRef('RateLimit-Policy') };
/** The responses of keyed operations whose text does not depend on the endpoint. */
export const RESPONSES = {
  NotModified: {
    description: 'Not modified: If-None-Match named the ETag of this answer and the data has not changed. No body.',
    headers: {
      'X-Request-Id': headerRef('X-Request-Id'),
      ...LIMITS,
      ETag: headerRef('ETag'),
      'Last-Modified': headerRef('Last-Modified'),
      'X-Snapshot-Id': headerRef('X-Snapshot-Id'),
    },
  },
  Unauthorized: errorResponse(
    '`unauthorized`: the key is missing, malformed, unknown, expired, disabled or revoked (one message for all).',
    ERROR_EXAMPLES[401],
    { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
  ),
  RateLimited: errorResponse(
    "`rate_limited`: this key's allowance for the window is used up (RateLimit says r=0), or this address failed authentication too often. Wait Retry-After seconds.",
    ERROR_EXAMPLES[429],
    { 'Retry-After': headerRef('Retry-After'), ...LIMITS },
  ),
  OtherError: errorResponse(
    'Any other error, in the same envelope: `request_timeout` (408: the request was not received in time), `request_too_large` (431: the request line and headers pass 16 KB; the connection closes), `internal_error` (500: a fault of the service; its request id finds it in the log), or `method_not_allowed` (405, with `Allow: GET, HEAD`: another method than GET or HEAD here, once the key is accepted on a keyed path; a CORS preflight from an allowed origin is answered 204).',
    {
      request_timeout: {
        summary: 'The request was not received in time',
        value: errorBody('request_timeout', TIMEOUT_MESSAGE),
      },
      request_too_large: {
        summary: 'Request line and headers over 16 KB',
        value: errorBody('request_too_large', TOO_LARGE_MESSAGE),
      },
      internal_error: { summary: 'A fault of the service', value: errorBody('internal_error', INTERNAL_MESSAGE) },
      method_not_allowed: {
        summary: 'Another method than GET or HEAD',
        value: errorBody('method_not_allowed', notAllowedMessage('POST')),
      },
    },
    {},
  ),
  Unavailable: errorResponse(
    '`service_unavailable`: the data snapshot or the key store cannot be read; the request failed closed. Try again after Retry-After seconds.',
    ERROR_EXAMPLES[503],
    { 'Retry-After': headerRef('Retry-After') },
  ),
};
