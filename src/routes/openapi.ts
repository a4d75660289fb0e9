// The OpenAPI 3.1 document, generated from the same valibot schemas that validate each request.
import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { LOCALES } from '../../snapshot-format/locales.ts';
import { CODES } from '../http/errors.ts';
import { entriesOf, LENGTH } from '../http/params.ts';
import { JsonText } from '../http/respond.ts';
import type { RouteDef } from '../http/route.ts';
import { SERVICE_ID } from './ping.ts';

const ERROR = {
  type: 'object',
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
const META = {
  type: 'object',
  required: ['locale', 'request_id'],
  properties: { locale: { type: 'string', enum: LOCALES }, request_id: { type: 'string' } },
};
const PAGINATION = {
  type: 'object',
  required: ['limit', 'has_more', 'next_cursor'],
  properties: {
    limit: { type: 'integer' },
    has_more: { type: 'boolean' },
    next_cursor: { type: ['string', 'null'], maxLength: 4096 },
  },
};
const err = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function envelope(r: RouteDef): Record<string, unknown> {
  const meta = { $ref: '#/components/schemas/Meta' };
  switch (r.kind) {
    case 'collection':
      return {
        type: 'object',
        required: ['data', 'pagination', 'meta'],
        properties: {
          data: { type: 'array', items: r.item },
          pagination: { $ref: '#/components/schemas/Pagination' },
          meta,
        },
      };
    case 'bounded':
      return {
        type: 'object',
        required: ['data', 'meta'],
        properties: { data: { type: 'array', items: r.item }, meta },
      };
    case 'detail':
      return { type: 'object', required: ['data', 'meta'], properties: { data: r.item, meta } };
    case 'plain':
    case 'raw':
      return r.item;
  }
}

function parameters(r: RouteDef) {
  const out: Record<string, unknown>[] = [];
  for (const name of r.path.match(/:[a-z_]+/g) ?? []) {
    out.push({
      name: name.slice(1),
      in: 'path',
      required: true,
      schema: { type: 'string', minLength: 1, maxLength: 120 },
    });
  }
  for (const [name, schema] of Object.entries(entriesOf(r.query))) {
    const json = toJsonSchema(schema as v.GenericSchema, {
      errorMode: 'ignore',
      // str()'s length rule is a check counting code points: shown as the JSON Schema lengths it implements.
      overrideAction: ({ valibotAction, jsonSchema }) => {
        const len = (valibotAction as { [LENGTH]?: { min: number; max: number } })[LENGTH];
        return len ? { ...jsonSchema, minLength: len.min, maxLength: len.max } : undefined;
      },
    }) as Record<string, unknown>;
    delete json.$schema;
    out.push({ name, in: 'query', required: schema.type !== 'optional', schema: json });
  }
  return out;
}

export function openapiDocument(routes: RouteDef[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes.filter((route) => !route.hidden)) {
    const path = r.path.replace(/:([a-z_]+)/g, '{$1}');
    const responses: Record<string, unknown> = {
      200: { description: 'OK', content: { 'application/json': { schema: envelope(r) } } },
      400: err('Invalid query: unknown or repeated parameter, bad value, out of range, or a bad cursor'),
    };
    if (!r.public) {
      responses[401] = err('Missing, malformed, unknown, expired, disabled or revoked key', {
        'WWW-Authenticate': { schema: { type: 'string' } },
      });
      responses[429] = err('Rate limit exceeded; wait Retry-After seconds', {
        'Retry-After': { schema: { type: 'integer' } },
      });
      responses[503] = err('The data snapshot or key store is unavailable; the request failed closed');
    }
    if (r.path.includes(':')) responses[404] = err('No public record with this id');
    paths[path] = {
      get: {
        operationId: r.path
          .replace(/^\/v1\//, '')
          .replace(/[/:]+/g, '_')
          .replace(/_$/, ''),
        summary: r.summary,
        ...(r.description ? { description: r.description } : {}),
        tags: [r.tag],
        parameters: parameters(r),
        responses,
        ...(r.public ? { security: [] } : {}),
      },
    };
  }
  const doc = {
    openapi: '3.1.0',
    info: {
      title: 'Netherlands rental data API',
      version: '1.0.0',
      description: `Read-only JSON API (${SERVICE_ID}) for Netherlands rental listings and housing resources. Every endpoint except ping and this document needs Authorization: Bearer <key>.`,
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An operator-issued key: <prefix>live_<secret>.' },
      },
      schemas: { Error: ERROR, Meta: META, Pagination: PAGINATION },
    },
    paths,
  };
  const summary = 'This OpenAPI 3.1 document';
  // The document lists itself too; added before it is serialised so that the served copy has it.
  paths['/v1/openapi.json'] = {
    get: {
      operationId: 'openapi',
      summary,
      tags: ['Service'],
      security: [],
      parameters: [],
      responses: {
        200: { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } },
        400: err('Invalid query: this document takes no parameters'),
      },
    },
  };
  const body = new JsonText(JSON.stringify(doc), { reused: true });
  const route: RouteDef = {
    path: '/v1/openapi.json',
    tag: 'Service',
    kind: 'plain',
    public: true,
    query: v.strictObject({}),
    item: { type: 'object' },
    summary,
    handle: () => body, // serialised once: the document never changes while the process runs
  };
  return { doc, route };
}
