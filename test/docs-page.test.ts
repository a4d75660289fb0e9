// GET /docs (Swagger UI from our own files, strict CSP) and GET /, over HTTP and in a real Chromium.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { DOCS_ASSET_FILES } from '../src/openapi/docs.ts';
import { ROOT } from './support/files.ts';
import { useServer } from './support/server.ts';
import { assertError } from './support/shapes.ts';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = join(ROOT, '.artifacts/docs-page.png');
const PACKAGE = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const VERSION = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')).version as string;
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

const server = useServer();

describe('GET /docs over HTTP', () => {
  it('serves the page with the exact CSP, no-cache and HTML type', async () => {
    const res = await server.get('/docs', { key: null });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-security-policy'), CSP);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(res.text, /<div id="swagger-ui">/);
    const head = await server.get('/docs', { key: null, method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(res.text)));
  });

  it('links only paths of this server, no inline script or style, and each link is served', async () => {
    const html = (await server.get('/docs', { key: null })).text;
    assert.doesNotMatch(html, /https?:|\/\/[a-z]/i, 'no other origin named');
    assert.doesNotMatch(html, /<script>|<style|style=/, 'no inline script or style');
    const links = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(links.includes(`/docs/assets/${VERSION}/swagger-ui-bundle.js`), 'asset URLs carry the package version');
    for (const link of links.filter((l) => l.startsWith('/docs'))) {
      const res = await server.get(link, { key: null });
      assert.equal(res.status, 200, link);
      const type = link.endsWith('.js') ? 'text/javascript' : link.endsWith('.css') ? 'text/css' : 'image/png';
      assert.ok(res.headers.get('content-type')?.startsWith(type), `${link}: ${res.headers.get('content-type')}`);
    }
    const init = await server.get('/docs/init.js', { key: null });
    assert.equal(init.headers.get('cache-control'), 'no-cache');
    assert.match(init.text, /url: '\/v1\/openapi\.json'/);
    assert.doesNotMatch(init.text, /persistAuthorization: true|https?:/);
  });

  it('serves each allow-listed file as the package has it, cached for a year, compressed on request', async () => {
    for (const file of DOCS_ASSET_FILES) {
      const res = await fetch(`${server.url}/docs/assets/${VERSION}/${file}`, {
        headers: { 'accept-encoding': 'gzip' },
      });
      const body = Buffer.from(await res.arrayBuffer());
      assert.equal(res.status, 200, file);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      const own = readFileSync(join(PACKAGE, file));
      const gz = res.headers.get('content-encoding') === 'gzip';
      assert.equal(gz, !file.endsWith('.png'), `${file}: text is compressed, images are not`);
      assert.ok(body.equals(own), `${file}: the package's bytes`);
    }
  });

  // With the key: a path no route matches needs one like any unknown path (401 without).
  it('answers 404 with the envelope outside the allow-list or at another version', async () => {
    for (const path of [
      `/docs/assets/${VERSION}/package.json`,
      `/docs/assets/${VERSION}/swagger-ui.js`, // in the package, not served
      `/docs/assets/${VERSION}/..%2Fpackage.json`,
      `/docs/assets/${VERSION}/index.html`,
      '/docs/assets/0.0.1/swagger-ui.css',
      '/docs/assets/swagger-ui.css',
      '/docs/swagger-ui.css',
    ])
      assertError(await server.get(path), 404, { code: 'not_found' });
    assertError(await server.get('/docs', { key: null, method: 'POST' }), 405, { code: 'method_not_allowed' });
  });

  it('keeps the docs routes out of the OpenAPI document', async () => {
    const paths = Object.keys((await server.get('/v1/openapi.json', { key: null })).body.paths);
    assert.ok(paths.includes('/v1/listings'));
    assert.deepEqual(
      paths.filter((p) => !p.startsWith('/v1/')),
      [],
    );
  });
});

describe('GET /', () => {
  it('sends a browser to /docs', async () => {
    const res = await fetch(`${server.url}/`, { headers: { accept: BROWSER_ACCEPT }, redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/docs');
    assert.equal(res.headers.get('vary'), 'Accept');
  });

  it('gives any other client the JSON index', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'text/html;q=0.5, application/json']) {
      const headers: Record<string, string> = accept === undefined ? {} : { Accept: accept };
      const res = await server.get('/', { key: null, headers });
      assert.equal(res.status, 200, String(accept));
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(res.body, {
        service: 'nl-rental-data-api',
        docs: '/docs',
        openapi: '/v1/openapi.json',
        ping: '/v1/ping',
      });
    }
  });
});

const skip = existsSync(CHROMIUM) || process.env.CI ? false : `no ${CHROMIUM}: apt-get install chromium`;
describe('the docs page in Chromium', { skip, timeout: 120_000 }, () => {
  it('authorizes with a key, runs a listings search (200 with data), then a bad key (401)', async () => {
    assert.ok(existsSync(CHROMIUM), `CI is set and ${CHROMIUM} is missing: apt-get install chromium`);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const origin = new URL(server.url).origin;
      const outside: string[] = [];
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (new URL(url).origin === origin) return route.continue();
        outside.push(url);
        return route.abort();
      });
      // Init scripts run outside the page's CSP: they record what the policy blocked.
      await context.addInitScript(() => {
        const w = window as unknown as { violations: string[] };
        w.violations = [];
        document.addEventListener('securitypolicyviolation', (e) =>
          w.violations.push(`${e.violatedDirective} ${e.blockedURI}`),
        );
      });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));

      await page.goto(`${server.url}/docs`);
      const op = page.locator('#operations-Listings-listings');
      await op.waitFor();
      const authorize = async (key: string) => {
        await page.locator('.auth-wrapper button.authorize').click();
        const modal = page.locator('.modal-ux');
        const logout = modal.locator('button', { hasText: 'Logout' });
        if (await logout.isVisible()) await logout.click();
        await modal.locator('#auth-bearer-value').fill(key);
        await modal.locator('button[type=submit]', { hasText: 'Authorize' }).click();
        await modal.locator('button', { hasText: 'Close' }).click();
      };
      const status = op.locator('.live-responses-table .response .response-col_status');
      const body = op.locator('.live-responses-table .response .highlight-code');

      await authorize(server.key);
      await op.locator('.opblock-summary').click();
      await op.getByRole('button', { name: 'Try it out' }).click();
      await op.getByRole('button', { name: 'Execute' }).click();
      await status.filter({ hasText: '200' }).waitFor();
      assert.match((await body.textContent()) ?? '', /"id": "lst-001"/);
      mkdirSync(dirname(SCREENSHOT), { recursive: true });
      await op.locator('.live-responses-table').first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: SCREENSHOT }); // the request, its curl line and the 200 with listing data
      const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
      assert.ok(!stored.includes(server.key), 'the key is not stored beyond the page');

      await authorize('nlr_live_not-a-real-key');
      await op.getByRole('button', { name: 'Execute' }).click();
      await status.filter({ hasText: '401' }).waitFor();
      assert.match((await body.textContent()) ?? '', /"code": "unauthorized"/);

      assert.deepEqual(await page.evaluate(() => (window as unknown as { violations: string[] }).violations), []);
      assert.deepEqual(errors, [], 'no script error');
      assert.deepEqual(outside, [], 'no request to another origin');
    } finally {
      await browser.close();
    }
  });
});
