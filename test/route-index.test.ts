// The indexed route lookup (src/http/route-index.ts) must find exactly what polka's own router finds: the same
// handlers in the same order and the same params, for every route of the service and for paths and methods that
// match none.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import polka from 'polka';
import { patternOf } from '../src/http/app.ts';
import { indexRoutes, keyOfRoute, type Router, routeKey } from '../src/http/route-index.ts';
import { ROUTE_MODULES } from '../src/routes/index.ts';

const routes = [
  ...ROUTE_MODULES.flatMap((m) => m.routes({} as never)).map((r) => ({ path: r.path, public: r.public === true })),
  { path: '/v1/openapi.json', public: true },
];

/** An app registered as createApp registers it: a GET route per path, then a 405 catch-all per group. */
function app() {
  const a = polka();
  for (const r of routes) a.get(patternOf(r.path), (() => r.path) as never);
  for (const isPublic of [true, false]) {
    const paths = routes.filter((r) => r.public === isPublic).map((r) => patternOf(r.path, false).source);
    a.all(new RegExp(paths.join('|')), (() => `405 ${isPublic}`) as never);
  }
  return a as unknown as Router;
}

describe('indexed route lookup', () => {
  const plain = app();
  const indexed = app();
  indexRoutes(indexed, [...routes.map((r) => keyOfRoute(r.path)), null, null]);

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
    for (const id of ['lst-001', 'x%20y', 'a.b', 'stats', '']) {
      const p = r.path.replaceAll(/:[a-z_]+/g, id);
      for (const q of [p, `${p}/`, `${p}//`, `${p}/extra`, p.toUpperCase(), p.slice(0, -1), `/x${p}`]) paths.add(q);
    }
  }
  it('finds the same handlers and params as polka for every path and method', () => {
    let compared = 0;
    for (const method of ['GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE', 'PUT', 'FOO', 'get'])
      for (const path of paths) {
        const want = plain.find(method, path);
        const got = indexed.find(method, path);
        assert.deepEqual(got.params, want.params, `${method} ${path}`);
        // Each app has its own handlers; a handler names its route.
        const name = (h: unknown) => (h as () => string)();
        assert.deepEqual(got.handlers.map(name), want.handlers.map(name), `${method} ${path}`);
        if (want.handlers.length) compared++;
      }
    assert.ok(compared > 300, `${compared} matches compared`);
  });
  it('keys a path by its first two segments, without a trailing slash', () => {
    assert.equal(routeKey('/v1/listings/lst-1/similar'), '/v1/listings');
    assert.equal(routeKey('/v1/listings/'), '/v1/listings');
    assert.equal(routeKey('/docs/'), '/docs');
    assert.equal(routeKey('/'), '/');
    assert.equal(keyOfRoute('/docs/assets/:version/:file'), '/docs/assets');
    assert.equal(keyOfRoute('/:x/y'), null);
  });
});
