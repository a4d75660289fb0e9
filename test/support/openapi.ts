// The served OpenAPI document, for the tests that read it beside the service that serves it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { docPath, fixtureRequest, ROUTES } from './endpoints.ts';
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
 * `PATHS` is every documented route by its document path, with a request that succeeds on that snapshot.
 */
export function useDocument() {
  const server = {} as TestServer;
  const doc: any = {};
  let previousId = '';
  // Every documented route (and the document itself) by its document path, with a request that succeeds on this
  // snapshot, made once the server is up.
  const DOCUMENTED = [...ROUTES.filter((r) => !r.hidden), { path: '/v1/openapi.json', public: true }];
  const examples = new Map<string, string>();
  const PATHS: Record<string, { example: string; public?: boolean }> = {};
  for (const r of DOCUMENTED)
    PATHS[docPath(r.path)] = {
      public: r.public === true || undefined,
      get example() {
        return examples.get(r.path)!;
      },
    };
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
    for (const r of DOCUMENTED) examples.set(r.path, (await fixtureRequest(server, r.path, { since: previousId }))!);
  });
  after(() => server.close?.());
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
