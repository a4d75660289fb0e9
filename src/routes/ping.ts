// GET /v1/ping: public availability check, no envelope.
import * as v from 'valibot';
import { definePublicRoute } from '../http/route.ts';
import { J } from './support/fields.ts';

export const SERVICE_ID = 'nl-rental-data-api';

export const routes = () => [
  definePublicRoute({
    path: '/v1/ping',
    tag: 'Service',
    kind: 'plain',
    public: true,
    query: v.strictObject({}),
    item: J.object(
      { service: { type: 'string', const: SERVICE_ID }, status: { type: 'string', const: 'ok' } },
      { example: { service: SERVICE_ID, status: 'ok' } },
    ),
    summary: 'Availability check (no key needed)',
    description:
      'Answers while the process runs, without the envelope and without a key; it does not check the data (data requests may still fail closed with 503).',
    handle: () => ({ service: SERVICE_ID, status: 'ok' }),
  }),
];
