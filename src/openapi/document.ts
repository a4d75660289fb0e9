// The OpenAPI 3.1 document, generated from the same valibot schemas that validate each request, with each
// route's summary, description, parameter texts and example; error examples are the service's own messages.
import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { cursorCodec } from '../http/cursor.ts';
import { ApiError, notFound } from '../http/errors.ts';
import { cursor, entriesOf } from '../http/params.ts';
import { parseRawQuery, validateQuery } from '../http/query.ts';
import { JsonText } from '../http/respond.ts';
import type { PublicRoute, RouteDef } from '../http/route.ts';
import { linksOf, operationIdOf } from './links.ts';
import {
  ERROR_SCHEMA,
  errorBody,
  errorResponse,
  HEADERS,
  headerRef,
  INTRODUCTION,
  LIMITS,
  META,
  META_EXAMPLE,
  PAGINATION,
  RESPONSES,
  TAGS,
} from './text.ts';

const CURSOR_EXAMPLE = v.getExamples(cursor)[0];

/** The shared Meta, or Meta with the route's own members added (its required ones with them). */
const metaOf = (r: RouteDef): Record<string, unknown> =>
  r.meta === undefined
    ? { $ref: '#/components/schemas/Meta' }
    : {
        ...META,
        required: [...META.required, ...Object.keys(r.meta.schema)],
        properties: { ...META.properties, ...r.meta.schema },
      };

const envelope = (r: RouteDef): Record<string, unknown> => {
  const meta = metaOf(r);
  const data = r.kind === 'detail' ? r.item : { type: 'array', items: r.item };
  if (r.kind === 'collection')
    return {
      type: 'object',
      required: ['data', 'pagination', 'meta'],
      properties: { data, pagination: { $ref: '#/components/schemas/Pagination' }, meta },
    };
  if (r.kind === 'bounded' || r.kind === 'detail')
    return { type: 'object', required: ['data', 'meta'], properties: { data, meta } };
  return r.item;
};
const exampleOf = (r: RouteDef | undefined): Record<string, any> | undefined =>
  (r?.item.examples as Record<string, any>[] | undefined)?.[0];
function envelopeExample(r: RouteDef): unknown {
  const item = exampleOf(r);
  if (item === undefined) return undefined;
  const items = r.item.examples as unknown[];
  const meta = { ...META_EXAMPLE, ...r.meta?.example };
  if (r.kind === 'collection')
    return { data: items, pagination: { limit: 20, has_more: true, next_cursor: CURSOR_EXAMPLE }, meta };
  if (r.kind === 'bounded') return { data: items, meta: META_EXAMPLE };
  if (r.kind === 'detail') return { data: item, meta: META_EXAMPLE };
  return item;
}

/** A parameter's rule in words, from its JSON schema. */
function ruleText(s: Record<string, any>, name: string, names: string[]): string {
  const out: string[] = [];
  if (s.enum) out.push(`One of ${s.enum.join(', ')} (case-sensitive).`);
  else if ((s.type === 'integer' || s.type === 'number') && s.exclusiveMinimum !== undefined)
    out.push(
      `${s.type === 'integer' ? 'An integer' : 'A number'} greater than ${s.exclusiveMinimum}, at most ${s.maximum}.`,
    );
  else if (s.type === 'integer' || s.type === 'number')
    out.push(`${s.type === 'integer' ? 'An integer' : 'A number'} from ${s.minimum} to ${s.maximum}.`);
  else if (s.format === 'date') out.push('A date, YYYY-MM-DD.');
  else if (s.maxLength !== undefined) out.push(`${s.minLength} to ${s.maxLength} characters.`);
  const max = name.replace(/^min_/, 'max_');
  if (max !== name && names.includes(max)) out.push(`Must not be greater than ${max}.`);
  if (s.default !== undefined) out.push(`Default ${s.default}.`);
  return out.join(' ');
}

function parameters(r: RouteDef, all: RouteDef[]) {
  const out: Record<string, unknown>[] = [];
  for (const m of r.path.matchAll(/\/:([a-z_]+)/g)) {
    // The id of a record of the collection the path names (/v1/market/metrics/:id/observations: a metric).
    const [name, base] = [m[1], r.path.slice(0, m.index)];
    const example = exampleOf(all.find((x) => x.path === base || x.path === `${base}/:${name}`))?.id;
    out.push({
      name,
      in: 'path',
      required: true,
      description: `An id as the id field of ${base} shows it (not a slug or a URL), 1 to 120 characters. An id that is unknown or no longer public is a 404.`,
      schema: { type: 'string', minLength: 1, maxLength: 120 },
      ...(example === undefined ? {} : { example }),
    });
  }
  const entries = Object.entries(entriesOf(r.query));
  for (const [name, schema] of entries) {
    // The parameter's text and example (valibot's description and examples) go beside its schema, as below.
    const { $schema, description, examples, ...json } = toJsonSchema(schema, { errorMode: 'ignore' });
    const doc = examples === undefined ? undefined : { description, example: examples[0] };
    const rule = ruleText(
      json,
      name,
      entries.map(([n]) => n),
    );
    const required = schema.type !== 'optional';
    const text = [doc?.description, rule].filter(Boolean).join(' ');
    // An optional parameter's example goes in its schema and its text, not in the parameter: Swagger UI fills
    // "Try it out" with parameter examples, and a search sent with every filter (and a made-up cursor) set
    // would answer nothing or a 400. A required parameter's example is a value to start from.
    if (doc === undefined || required)
      out.push({
        name,
        in: 'query',
        required,
        description: text,
        schema: json,
        ...(doc ? { example: doc.example } : {}),
      });
    else
      out.push({
        name,
        in: 'query',
        required,
        description: `${text} Example: ${doc.example}.`,
        schema: { ...json, examples: [doc.example] },
      });
  }
  return out;
}

const EXAMPLE_CURSORS = cursorCodec('only for the examples of the OpenAPI document');
/** The 400s of a route with the messages it really answers: each request is validated as the route would. */
function badRequests(r: RouteDef) {
  const names = Object.keys(entriesOf(r.query));
  const message = (query: string, run: () => unknown = () => validateQuery(r.query, parseRawQuery(query))) => {
    try {
      run();
    } catch (e) {
      if (e instanceof ApiError) return e.message;
      throw e;
    }
    throw new Error(`${r.path}?${query} was expected to be a 400`);
  };
  const cases: Record<string, [string, string]> = {
    unknown_parameter: ['An unknown parameter', message('colour=red')],
    repeated_parameter: ['A repeated parameter', message(`${names[0] ?? 'colour'}=a&${names[0] ?? 'colour'}=b`)],
  };
  if (names.includes('limit')) cases.invalid_value = ['A value outside its rule', message('limit=0')];
  else if (names.includes('locale')) cases.invalid_value = ['A value outside its rule', message('locale=it')];
  if (names.some((n) => entriesOf(r.query)[n].type !== 'optional'))
    cases.missing_parameter = ['A required parameter is missing', message('')];
  if (names.includes('cursor'))
    cases.invalid_cursor = ['A cursor of another request', message('', () => EXAMPLE_CURSORS.verify('x', 'scope'))];
  return Object.fromEntries(
    Object.entries(cases).map(([k, [summary, text]]) => [k, { summary, value: errorBody('invalid_request', text) }]),
  );
}

function operation(r: RouteDef, all: RouteDef[]) {
  const keyed = !r.public;
  const limits = keyed ? LIMITS : {};
  const example = envelopeExample(r);
  const links = linksOf(r, all);
  const responses: Record<string, unknown> = {
    200: {
      description: keyed
        ? "The answer. RateLimit and RateLimit-Policy report what is left of the key's allowance; ETag, Last-Modified and X-Snapshot-Id identify the data."
        : 'The answer.',
      // A keyed answer has the headers of its 304 (the rate limit and the data's identity).
      headers: keyed
        ? {
            ...RESPONSES.NotModified.headers,
            ...('locale' in entriesOf(r.query) ? { 'Content-Language': headerRef('Content-Language') } : {}),
          }
        : { 'X-Request-Id': headerRef('X-Request-Id') },
      content: { 'application/json': { schema: envelope(r), ...(example === undefined ? {} : { example }) } },
      ...(links === undefined ? {} : { links }),
    },
    400: errorResponse(
      '`invalid_request`: an unknown or repeated parameter, a value outside its rule, or a cursor of another request or older than 24 hours. The message names the parameter and its rule.',
      badRequests(r),
      limits,
    ),
  };
  if (keyed) {
    responses[304] = { $ref: '#/components/responses/NotModified' };
    responses[401] = { $ref: '#/components/responses/Unauthorized' };
  }
  if (r.path.includes(':')) {
    if (r.record === undefined) throw new Error(`${r.path} has a path id but no record name for its 404`);
    responses[404] = errorResponse(
      `\`not_found\`: no public ${r.record} has this id (unknown, or no longer public).`,
      { not_found: { summary: 'Unknown or not public', value: errorBody('not_found', notFound(r.record).message) } },
      keyed ? LIMITS : {},
    );
  }
  if (keyed) {
    responses[429] = { $ref: '#/components/responses/RateLimited' };
    responses[503] = { $ref: '#/components/responses/Unavailable' };
  }
  // Every status not listed (408, 431, 500; 405 for another method): a client generated from the document still
  // has a type for the body.
  responses.default = { $ref: '#/components/responses/OtherError' };
  return {
    operationId: operationIdOf(r.path),
    summary: r.summary,
    ...(r.description ? { description: r.description } : {}),
    tags: [r.tag],
    parameters: parameters(r, all),
    responses,
    ...(r.public ? { security: [] } : {}),
  };
}

export function openapiDocument(routes: RouteDef[]) {
  const body: { current?: JsonText } = {};
  // The document describes itself too, so its own route is part of the list it is built from.
  const route: PublicRoute = {
    path: '/v1/openapi.json',
    tag: 'Service',
    kind: 'plain',
    public: true,
    query: v.strictObject({}),
    item: {
      type: 'object',
      description: 'An OpenAPI 3.1 document.',
      examples: [{ openapi: '3.1.0', info: { title: 'Netherlands rental data API', version: '1.0.0' }, paths: {} }],
    },
    summary: 'This OpenAPI 3.1 document',
    description: 'The description of every endpoint, parameter, response and error of this API. No key needed.',
    // Made and serialised on the first request (a tenth of a start-up's CPU), once: it never changes while the
    // process runs.
    handle: () => (body.current ??= new JsonText(JSON.stringify(build()), { reused: true })),
  };
  return { route };

  function build() {
    const documented = [...routes, route].filter((r) => !r.hidden);
    const paths: Record<string, Record<string, unknown>> = {};
    for (const r of documented) paths[r.path.replace(/:([a-z_]+)/g, '{$1}')] = { get: operation(r, documented) };
    const used = new Set(documented.map((r) => r.tag));
    const doc = {
      openapi: '3.1.0',
      info: {
        title: 'Netherlands rental data API',
        version: '1.0.0',
        description: INTRODUCTION,
        contact: { name: 'API operator', email: 'api@example.com' },
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/', description: 'This server' }],
      security: [{ bearer: [] }],
      tags: [
        ...TAGS.filter((t) => used.has(t.name)),
        ...[...used].filter((t) => !TAGS.some((x) => x.name === t)).map((name) => ({ name })),
      ],
      paths,
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An operator-issued key of the form <prefix>live_<secret>, sent as Authorization: Bearer KEY.',
          },
        },
        schemas: { Error: ERROR_SCHEMA, Meta: META, Pagination: PAGINATION },
        responses: RESPONSES,
        headers: HEADERS,
      },
    };
    return doc;
  }
}
