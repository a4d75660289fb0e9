// The served OpenAPI document, for the tests that read it beside the service that serves it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { BASIC, copyFixture } from './files.ts';
import { startServer, type TestServer } from './server.ts';
import { fixtureSnapshot } from './snapshots.ts';

/** Follows a local $ref of `doc`. */
export const deref = (doc: any, s: any): any =>
  s?.$ref
    ? s.$ref
        .split('/')
        .slice(1)
        .reduce((o: any, k: string) => o[k], doc)
    : s;

/**
 * For the calling scope: the service on the basic fixture's snapshot, built with a change history since the
 * fixture less one listing (so /v1/changes has an answer), and the document it serves (`doc`, filled in `before`).
 * `PATHS` is every path of the document with a concrete request that succeeds on that snapshot.
 */
export function useDocument() {
  const server = {} as TestServer;
  const doc: any = {};
  let previousId = '';
  // One hook: Node 20 runs a file's top-level before hooks concurrently, and the document needs the server.
  before(async () => {
    const older = copyFixture();
    const listings = join(older, 'listings.ndjson');
    writeFileSync(listings, readFileSync(listings, 'utf8').replace(/^.*"id":"lst-001".*\n/m, ''));
    const previous = await fixtureSnapshot(older);
    previousId = previous.result.snapshotId!;
    const { path } = await fixtureSnapshot(BASIC, { previous: previous.path });
    Object.assign(server, await startServer({ SNAPSHOT_PATH: path }));
    const res = await server.get('/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    Object.assign(doc, JSON.parse(res.text));
  });
  after(() => server.close?.());
  const PATHS: Record<string, { example: string; public?: boolean }> = {
    '/v1/ping': { example: '/v1/ping', public: true },
    '/v1/listings': { example: '/v1/listings' },
    '/v1/listings/{id}': { example: '/v1/listings/lst-001' },
    '/v1/listings/{id}/similar': { example: '/v1/listings/lst-001/similar' },
    '/v1/listings/stats': { example: '/v1/listings/stats' },
    '/v1/owners': { example: '/v1/owners' },
    '/v1/owners/{id}': { example: '/v1/owners/own-1' },
    '/v1/internet/providers': { example: '/v1/internet/providers' },
    '/v1/internet/providers/{id}': { example: '/v1/internet/providers/inet-kpn' },
    '/v1/internet/plans': { example: '/v1/internet/plans' },
    '/v1/insurance/products': { example: '/v1/insurance/products' },
    '/v1/insurance/providers/{id}': { example: '/v1/insurance/providers/ins-centraal' },
    '/v1/platforms': { example: '/v1/platforms' },
    '/v1/platforms/{id}': { example: '/v1/platforms/plat-funda' },
    '/v1/articles': { example: '/v1/articles' },
    '/v1/articles/{id}': { example: '/v1/articles/art-1' },
    '/v1/insurance/providers': { example: '/v1/insurance/providers' },
    '/v1/glossary': { example: '/v1/glossary' },
    '/v1/glossary/{id}': { example: '/v1/glossary/gl-huurtoeslag' },
    '/v1/market/metrics/{id}/observations': {
      example: '/v1/market/metrics/median_rent/observations?location_id=loc-ams&from=2026-01-01&to=2026-12-31',
    },
    '/v1/locations': { example: '/v1/locations' },
    '/v1/locations/{id}': { example: '/v1/locations/loc-ams-pijp' },
    '/v1/market/metrics': { example: '/v1/market/metrics' },
    '/v1/openapi.json': { example: '/v1/openapi.json', public: true },
    '/v1/changes': {
      get example() {
        return `/v1/changes?since=${previousId}`;
      },
    },
  };
  const op = (path: string) => doc.paths[path]?.get;
  return {
    server,
    doc,
    PATHS,
    op,
    queryParams: (path: string) => (op(path).parameters as any[]).filter((p) => p.in === 'query'),
    deref: (s: any) => deref(doc, s),
  };
}
