// The route table (src/http/router.ts) must find exactly what a plain scan finds: every route's pattern tested in
// order, the first match wins, its params percent-decoded; for every route of the service and for paths that match
// none or hold a parameter that does not decode.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRouter, patternOf, routeKey, splitTarget } from '../src/http/router.ts';
import { routes as docsRoutes } from '../src/openapi/docs.ts';
import { ROUTE_MODULES } from '../src/routes/index.ts';

const routes = [
  ...ROUTE_MODULES.flatMap((m) => m.routes({} as never)),
  ...docsRoutes(),
  { path: '/v1/openapi.json' },
].map((r) => ({ path: r.path }));

/** The reference: every pattern in order, no index; decodeURIComponent on each param, kept raw when it fails. */
function scan(path: string) {
  for (const route of routes) {
    const m = patternOf(route.path).exec(path);
    if (m === null) continue;
    const params: Record<string, string> = {};
    let undecodable: string | null = null;
    for (const [k, raw] of Object.entries(m.groups ?? {})) {
      try {
        params[k] = decodeURIComponent(raw);
      } catch {
        params[k] = raw;
        undecodable ??= k;
      }
    }
    return { route, params, undecodable };
  }
  return null;
}

describe('route table', () => {
  const find = createRouter(routes);
  const paths = new Set([
    '',
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
      const p = r.path.replaceAll(/:[a-z_]+/g, id);
      for (const q of [p, `${p}/`, `${p}//`, `${p}/extra`, p.toUpperCase(), p.slice(0, -1), `/x${p}`]) paths.add(q);
    }
  }

  it('finds the same route and params as a plain scan of every pattern, for every path', () => {
    let matched = 0;
    for (const path of paths) {
      const want = scan(path);
      const got = find(path);
      assert.deepEqual(got && { ...got, route: got.route.path }, want && { ...want, route: want.route.path }, path);
      if (want) matched++;
    }
    assert.ok(matched > 100, `${matched} matches compared`);
  });

  it('is exact and case-sensitive, with one optional trailing slash', () => {
    assert.equal(find('/v1/listings')?.route.path, '/v1/listings');
    assert.equal(find('/v1/listings/')?.route.path, '/v1/listings');
    assert.equal(find('/v1/listings//'), null);
    assert.equal(find('/V1/listings'), null);
    assert.equal(find('/v1/openapiXjson'), null, 'the dot is literal');
  });

  it('decodes params, and names the first that is not percent-encoded UTF-8', () => {
    assert.deepEqual(find('/v1/listings/caf%C3%A9')?.params, { id: 'café' });
    const bad = find('/v1/listings/%E0%A4%A');
    assert.equal(bad?.undecodable, 'id');
    assert.equal(bad?.params.id, '%E0%A4%A');
  });

  it('keys a path by its first two segments, without a trailing slash', () => {
    assert.equal(routeKey('/v1/listings/lst-1/similar'), '/v1/listings');
    assert.equal(routeKey('/v1/listings/'), '/v1/listings');
    assert.equal(routeKey('/docs/'), '/docs');
    assert.equal(routeKey('/'), '/');
  });

  it('tests a route whose key holds a parameter under every key', () => {
    const f = createRouter([{ path: '/v1/things' }, { path: '/:any/x' }]);
    assert.equal(f('/v1/x')?.route.path, '/:any/x');
    assert.equal(f('/zz/x')?.route.path, '/:any/x');
    assert.equal(f('/v1/things')?.route.path, '/v1/things');
  });

  it('splits a target into its path and its query, dropping a fragment', () => {
    assert.deepEqual(splitTarget('/v1/listings?limit=1'), { path: '/v1/listings', search: '?limit=1' });
    assert.deepEqual(splitTarget('/v1/listings'), { path: '/v1/listings', search: '' });
    assert.deepEqual(splitTarget('/v1/listings#x?y'), { path: '/v1/listings', search: '' });
    assert.deepEqual(splitTarget('/?a=1'), { path: '/', search: '?a=1' });
  });
});
