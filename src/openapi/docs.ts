// GET /docs: the interactive API reference (Swagger UI over /v1/openapi.json, served from this process, no
// outside request), its files, and GET /: a browser is sent to /docs, any other client gets a JSON index.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getAsset, isSea } from 'node:sea';
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants as zlibConstants } from 'node:zlib';
import swaggerUiPackage from 'swagger-ui-dist/package.json' with { type: 'json' };
import * as v from 'valibot';
import { redactKeys } from '../access/key-format.ts';
import { ApiError } from '../http/errors.ts';
import { type Coding, negotiate, writeHead } from '../http/respond.ts';
import { definePublicRoute } from '../http/route.ts';
import { SERVICE_ID } from '../routes/ping.ts';

/** swagger-ui-dist's files served under /docs/assets/<version>/; a single executable embeds each as `docs/<file>`. */
export const DOCS_ASSET_FILES = [
  'swagger-ui.css',
  'index.css',
  'swagger-ui-bundle.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
] as const;
const VERSION: string = swaggerUiPackage.version;
const ASSETS = `/docs/assets/${VERSION}`;

/**
 * The page's policy: only our own origin. Swagger UI's styles are its stylesheet; its inline `style`
 * attributes are set by React through the DOM (CSSOM), which style-src does not govern, so no 'unsafe-inline'.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Netherlands rental data API: reference</title>
<link rel="stylesheet" href="${ASSETS}/swagger-ui.css">
<link rel="stylesheet" href="${ASSETS}/index.css">
<link rel="icon" type="image/png" href="${ASSETS}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${ASSETS}/favicon-16x16.png" sizes="16x16">
</head>
<body>
<noscript>This page needs JavaScript. The API's description: <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="${ASSETS}/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/**
 * Swagger UI's set-up, a file of its own so that the CSP needs no inline script. BaseLayout: the standalone
 * preset only adds a bar to load other documents. No validator (an outside request), no configuration from
 * the page's query string, and the key is not persisted (Swagger UI would keep it in localStorage).
 */
const INIT = `'use strict';
window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  validatorUrl: null,
  queryConfigEnabled: false,
  persistAuthorization: false,
  displayRequestDuration: true,
});
`;

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  png: 'image/png',
};
const typeOf = (file: string) => TYPES[file.slice(file.lastIndexOf('.') + 1)];
const isAsset = (file: string): file is (typeof DOCS_ASSET_FILES)[number] =>
  (DOCS_ASSET_FILES as readonly string[]).includes(file);

const files = new Map<string, Buffer>();
let packageDir: string | undefined;
/** One asset's bytes, read once: embedded in a single executable, else from the swagger-ui-dist package. */
export function readDocsAsset(file: (typeof DOCS_ASSET_FILES)[number]): Buffer {
  let bytes = files.get(file);
  if (bytes === undefined) {
    if (isSea()) bytes = Buffer.from(getAsset(`docs/${file}`));
    else {
      packageDir ??= dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
      bytes = readFileSync(join(packageDir, file));
    }
    files.set(file, bytes);
  }
  return bytes;
}

const compressors = {
  gzip: promisify(gzip),
  br: (b: Buffer) =>
    promisify(brotliCompress)(b, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 6 } }) as Promise<Buffer>,
};
const encoded = new Map<string, Promise<Buffer>>();
/** A text asset compressed once per coding, off the event loop (the bundle is 1.7 MB; 0.4 MB as br). */
function encodedAsset(file: (typeof DOCS_ASSET_FILES)[number], coding: Coding): Promise<Buffer> {
  const key = `${coding} ${file}`;
  let p = encoded.get(key);
  if (p === undefined) encoded.set(key, (p = compressors[coding](readDocsAsset(file))));
  return p;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** A 200 with its length; node leaves the body out of the answer to a HEAD. */
function send(res: ServerResponse, body: Buffer | string, headers: Record<string, string>): void {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  writeHead(res, 200, { ...headers, 'Content-Length': length });
  res.end(body);
}

/** The weight of the Accept entry that best matches one media type, by RFC 9110's precedence; 0 when none does. */
function weightOf(accept: string, type: string): number {
  let best = -1;
  let weight = 0;
  for (const entry of accept.split(',')) {
    const [range, ...params] = entry.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const w = q === undefined ? 1 : Number(q.slice(2));
    const precision = range === type ? 2 : range === `${type.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (precision > best && Number.isFinite(w)) [best, weight] = [precision, Math.min(Math.max(w, 0), 1)];
  }
  return weight;
}

/** A client that accepts text/html with a weight above JSON's (a browser's navigation) wants the page. */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const html = weightOf(accept, 'text/html');
  return html > 0 && html > weightOf(accept, 'application/json');
}

export const ROOT_INDEX = { service: SERVICE_ID, docs: '/docs', openapi: '/v1/openapi.json', ping: '/v1/ping' };
const ROOT_JSON = JSON.stringify(ROOT_INDEX);

const raw = { kind: 'raw', public: true, hidden: true, tag: 'Docs', query: v.strictObject({}), item: {} } as const;

export const routes = () => [
  definePublicRoute({
    ...raw,
    path: '/',
    summary: 'A browser goes to /docs; any other client gets links to the docs, the OpenAPI document and ping',
    handle: ({ req, res }) => {
      if (prefersHtml(req.headers.accept)) {
        writeHead(res, 302, { Location: '/docs', Vary: 'Accept', 'Cache-Control': 'no-cache', 'Content-Length': 0 });
        res.end();
      } else
        send(res, ROOT_JSON, {
          'Cache-Control': 'no-cache',
          Vary: 'Accept',
          'Content-Type': 'application/json; charset=utf-8',
        });
    },
  }),
  definePublicRoute({
    ...raw,
    path: '/docs',
    summary: 'The interactive API reference',
    handle: ({ res }) =>
      send(res, PAGE, {
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-cache',
        'Content-Security-Policy': DOCS_CSP,
        'Referrer-Policy': 'no-referrer',
      }),
  }),
  definePublicRoute({
    ...raw,
    path: '/docs/init.js',
    summary: "The reference page's set-up script",
    handle: ({ res }) => send(res, INIT, { 'Content-Type': TYPES.js, 'Cache-Control': 'no-cache' }),
  }),
  definePublicRoute({
    ...raw,
    path: '/docs/assets/:version/:file',
    summary: "Swagger UI's files, at the package's version",
    handle: ({ req, res, params }) => {
      const { version, file } = params;
      if (version !== VERSION || !isAsset(file))
        throw new ApiError('not_found', `No documentation file ${redactKeys(req.path)}. The reference is at /docs.`);
      const type = typeOf(file);
      const headers = { 'Content-Type': type, 'Cache-Control': IMMUTABLE, Vary: 'Accept-Encoding' };
      const coding = type.startsWith('text/') ? negotiate(req.headers['accept-encoding']) : null;
      if (coding === null) return send(res, readDocsAsset(file), headers);
      encodedAsset(file, coding).then(
        (body) => send(res, body, { ...headers, 'Content-Encoding': coding }),
        () => send(res, readDocsAsset(file), headers), // compression cannot fail on a Buffer; if it did, as it is
      );
    },
  }),
];
