// Plain HTTP at the edge: deploy/nginx.conf and deploy/haproxy.cfg (real nginx and HAProxy on loopback) redirect to
// HTTPS with the query, but answer a query that names a key 400 with the API's envelope, as the API's own redirect
// does (docs/access-control.md), instead of copying the key into Location.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './support/files.ts';
import { freePort, type Nginx, startNginx } from './support/nginx.ts';
import { type Daemon, get, missing, type Reply, replaceIn, startHaproxy } from './support/processes.ts';
import { useServer } from './support/server.ts';

/** Queries and what plain HTTP gets: 308 keeps the query in Location, 400 refuses it. */
const CASES: [string, 308 | 400][] = [
  ['', 308],
  ['?limit=1&locale=nl', 308],
  ['?monkey=1&tokens=2&key_id=3', 308], // names that contain "key" or "token" but are not key parameters
  ['?api_key=nlr_live_secret', 400],
  ['?limit=1&API_KEY=nlr_live_secret', 400],
  ['?apikey=x', 400],
  ['?key=x', 400],
  ['?token', 400], // no value: still the name
  ['?access_token=x&limit=1', 400],
  ['?Token=x', 400],
  ['?api%5Fkey=nlr_live_secret', 400], // an escaped name: the API decodes it
];
/** Stricter than the API: a %-escape in any parameter name is refused at the edge, which cannot decode it. */
const EDGE_ONLY: [string, 400][] = [['?lim%69t=1', 400]];

function expectAnswer(r: Reply, query: string, status: number, host: string) {
  assert.equal(r.status, status, `${query}: ${r.text}`);
  if (status === 308) {
    assert.equal(r.headers.location, `https://${host}/v1/ping${query}`);
    return;
  }
  assert.equal(r.headers.location, undefined, query);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  assert.deepEqual(Object.keys(r.body.error), ['code', 'message', 'request_id'], query);
  assert.equal(r.body.error.code, 'invalid_request');
  assert.match(r.body.error.message, /send the API key only in the header "Authorization: Bearer <key>"/);
  assert.ok(r.body.error.request_id.length > 8);
  assert.equal(r.headers['x-request-id'], r.body.error.request_id);
  assert.ok(!r.text.includes('secret'), 'the key is not echoed');
}

/** What the edge's plain-HTTP port answers each case and each edge-only case. */
async function expectEdge(http: number) {
  for (const [query, status] of [...CASES, ...EDGE_ONLY]) {
    const r = await get(`http://127.0.0.1:${http}/v1/ping${query}`, null, undefined, { Host: 'api.example.com' });
    expectAnswer(r, query, status, 'api.example.com');
  }
}

describe('plain HTTP at the edge refuses a key in the query, as the API does', () => {
  const api = useServer({ TRUST_PROXY: '1' });

  it("the API's own redirect (X-Forwarded-Proto: http) answers each case so", async () => {
    for (const [query, status] of CASES) {
      const r = await get(`${api.url}/v1/ping${query}`, null, undefined, {
        Host: 'api.example.com',
        'X-Forwarded-Proto': 'http',
      });
      expectAnswer(r, query, status, 'api.example.com');
    }
  });

  it('deploy/nginx.conf port 80 answers the same', {
    skip: missing('/usr/sbin/nginx', 'nginx') ?? missing('/usr/bin/openssl', 'openssl'),
  }, async () => {
    let nginx: Nginx | undefined;
    try {
      const [http, https] = [await freePort(), await freePort()];
      nginx = await startNginx(join(ROOT, 'deploy/nginx.conf'), { api: new URL(api.url).port, http, https });
      await expectEdge(http);
    } finally {
      await nginx?.stop();
    }
  });

  it('deploy/haproxy.cfg port 80 answers the same', { skip: missing('/usr/sbin/haproxy', 'haproxy') }, async () => {
    let lb: Daemon | undefined;
    try {
      const http = await freePort();
      let cfg = readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
      cfg = replaceIn(cfg, /bind :443 ssl .*/, `bind 127.0.0.1:${await freePort()}`);
      cfg = replaceIn(cfg, 'bind :80', `bind 127.0.0.1:${http}`);
      cfg = replaceIn(cfg, /(\s+server api\d .*\n)+/, `\n    server api1 ${new URL(api.url).host}\n`);
      lb = await startHaproxy(cfg, http);
      await expectEdge(http);
    } finally {
      await lb?.stop();
    }
  });
});
