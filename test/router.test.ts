// Routing as polka does it with the service's patterns (src/http/route.ts): for every route of the service and for
// paths that match none, the route polka runs is the first whose path matches exactly (case-sensitive, one optional
// trailing slash), its params percent-decoded, and a parameter that does not decode is named for the 400.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import polka, { type Request } from 'polka';
import { patternOf, undecodableParam } from '../src/http/route.ts';
import { routes as docsRoutes } from '../src/openapi/docs.ts';
import { ROUTE_MODULES } from '../src/routes/index.ts';

const routes = [...ROUTE_MODULES.flatMap((m) => m.routes()), ...docsRoutes(), { path: '/v1/openapi.json' }].map(
  (r) => r.path,
);

/** The reference, written apart from polka: the routes' paths compared segment by segment, the first match wins. */
function reference(path: string): { route: string; params: Record<string, string> } | null {
  const segments = (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).split('/');
  for (const route of routes) {
    const parts = route.split('/');
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const ok = parts.every((part, i) => {
      if (!part.startsWith(':')) return part === segments[i];
      if (segments[i] === '') return false;
      try {
        params[part.slice(1)] = decodeURIComponent(segments[i]);
      } catch {
        params[part.slice(1)] = segments[i];
      }
      return true;
    });
    if (ok) return { route, params };
  }
  return null;
}

/** What polka runs for a GET of `path`, with the app's patterns: the route and its params, or null (onNoMatch). */
function polkaRouter() {
  let got: { route: string; params: Record<string, string> } | null = null;
  const app = polka({ onNoMatch: () => void (got = null) });
  for (const route of routes) {
    const names = [...route.matchAll(/:([a-z_]+)/g)].map((m) => m[1]);
    app.get(patternOf(route), (req: Request) => {
      got = { route, params: Object.fromEntries(names.map((k) => [k, req.params[k]])) };
    });
  }
  const handler = app.handler as (req: object, res: ServerResponse) => void;
  return async (path: string) => {
    got = null;
    handler({ method: 'GET', url: path }, { finished: false } as ServerResponse);
    await new Promise((r) => setImmediate(r)); // polka runs its handlers after a microtask
    return got as { route: string; params: Record<string, string> } | null;
  };
}

describe('routing through polka', () => {
  const paths = new Set([
    '/',
    '//',
    '/v1',
    '/v1/',
    '/v1//',
    '/nope',
    '/V1/listings',
    '/v1/Listings',
    '/docs/',
    '/docs//',
  ]);
  for (const r of routes) {
    for (const id of ['lst-001', 'x%20y', 'a.b', 'stats', '', '%E0%A4%A', '%2F', 'caf%C3%A9']) {
      const p = r.replaceAll(/:[a-z_]+/g, id);
      for (const q of [p, `${p}/`, `${p}//`, `${p}/extra`, p.toUpperCase(), p.slice(0, -1), `/x${p}`]) paths.add(q);
    }
  }

  it('runs the route a segment-by-segment comparison finds, with the same params, for every path', async () => {
    const find = polkaRouter();
    let matched = 0;
    for (const path of paths) {
      const want = reference(path);
      assert.deepEqual(await find(path), want, path);
      if (want) matched++;
    }
    assert.ok(matched > 100, `${matched} matches compared`);
  });

  it('is exact and case-sensitive, with one optional trailing slash', async () => {
    const find = polkaRouter();
    assert.equal((await find('/v1/listings'))?.route, '/v1/listings');
    assert.equal((await find('/v1/listings/'))?.route, '/v1/listings');
    assert.equal(await find('/v1/listings//'), null);
    assert.equal(await find('/V1/listings'), null);
    assert.equal(await find('/v1/openapiXjson'), null, 'the dot is literal');
    assert.equal((await find('/v1/listings/stats'))?.route, '/v1/listings/stats', 'a fixed path before a parameter');
  });

  it('names the first parameter whose segment is not percent-encoded UTF-8', () => {
    assert.equal(undecodableParam('/v1/listings/:id', '/v1/listings/caf%C3%A9'), null);
    assert.equal(undecodableParam('/v1/listings/:id', '/v1/listings/%E0%A4%A'), 'id');
    assert.equal(undecodableParam('/v1/listings/:id/similar', '/v1/listings/%E0%A4%A/similar/'), 'id');
    assert.equal(undecodableParam('/docs/assets/:version/:file', '/docs/assets/1/%FF'), 'file');
    assert.equal(undecodableParam('/docs/assets/:version/:file', '/docs/assets/%FF/%FF'), 'version');
    assert.equal(undecodableParam('/v1/listings/:id', '/v1/listings/100%25'), null);
  });
});
