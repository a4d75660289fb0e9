// The OpenAPI document as a newcomer meets it: redocly lint (redocly.yaml: the recommended rules plus the
// description rules) finds no error and no warning, without touching the network; and every operation,
// parameter, tag and response carries the texts, headers and examples needed to learn the API from it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ROOT, tempDir } from './support/files.ts';
import { deref } from './support/openapi.ts';
import { useServer } from './support/server.ts';

const server = useServer();
let doc: any;
let docPath: string;
/** Node 20 runs a file's top-level before hooks concurrently: each suite fetches the document once the server is up. */
const fetchDoc = async () => {
  if (doc) return;
  const res = await server.get('/v1/openapi.json');
  assert.equal(res.status, 200);
  doc = JSON.parse(res.text);
  docPath = join(tempDir(), 'openapi.json');
  writeFileSync(docPath, res.text);
};

const dir = tempDir();
/** Loaded before redocly: records (and refuses) every outgoing connection and DNS lookup. */
const GUARD = join(dir, 'no-network.cjs');
writeFileSync(
  GUARD,
  `const fs = require('node:fs'), net = require('node:net'), dns = require('node:dns');
const record = (what) => fs.appendFileSync(process.env.NETWORK_LOG, what + '\\n');
net.Socket.prototype.connect = function (...args) {
  record('connect ' + JSON.stringify(args[0]));
  throw new Error('no network in tests');
};
for (const m of [dns, dns.promises])
  for (const f of ['lookup', 'resolve', 'resolve4', 'resolve6', 'resolveAny'])
    m[f] = (...args) => { record('dns ' + f + ' ' + args[0]); throw new Error('no network in tests'); };
`,
);
/** Runs node with the network guard; what it tried to reach, and its output. */
function guarded(args: string[], env: Record<string, string> = {}) {
  const log = join(dir, `network-${Math.random().toString(36).slice(2)}.log`);
  const r = spawnSync(process.execPath, ['--require', GUARD, ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env, NETWORK_LOG: log },
  });
  return { ...r, network: existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [] };
}
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const QUIET = { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

describe('redocly lint', () => {
  before(fetchDoc);
  it('the network guard sees a connection attempt (so an empty log means none was made)', () => {
    const r = guarded(['-e', "require('node:net').connect(9, '127.0.0.1').on('error', () => {})"]);
    assert.equal(r.network.length, 1, r.stderr);
  });
  it('finds no error and no warning in the served document, and reaches no network', () => {
    const config = join(ROOT, 'redocly.yaml');
    const r = guarded([REDOCLY, 'lint', docPath, '--config', config, '--format', 'json'], QUIET);
    assert.deepEqual(r.network, [], 'redocly tried to reach the network');
    const report = JSON.parse(r.stdout);
    const problems = report.problems.map(
      (p: any) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`,
    );
    assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 }, problems.join('\n'));
    assert.equal(r.status, 0, r.stderr);
  });
});

const operations = () => Object.entries<any>(doc.paths).map(([path, item]) => ({ path, op: item.get }));
const CODE: Record<string, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  429: 'rate_limited',
  503: 'service_unavailable',
};

describe('what the document tells a reader', () => {
  before(fetchDoc);
  it('gives every operation a summary, a description and one tag that the top-level tags define with a description', () => {
    const tags = new Map(doc.tags.map((t: any) => [t.name, t.description]));
    for (const { path, op } of operations()) {
      assert.ok(op.summary?.length > 10 && op.description?.length > 20, path);
      assert.equal(op.tags.length, 1, path);
      assert.ok((tags.get(op.tags[0]) as string)?.length > 10, `${path}: tag ${op.tags[0]}`);
    }
    const used = new Set(operations().map(({ op }) => op.tags[0]));
    assert.deepEqual([...tags.keys()].sort(), [...used].sort(), 'every defined tag is used');
  });
  it('describes every parameter and gives it an example: in the parameter when required, else in its schema and text', () => {
    for (const { path, op } of operations())
      for (const p of op.parameters) {
        assert.ok(p.description?.length > 10, `${path} ${p.name}`);
        if (p.required) assert.notEqual(p.example, undefined, `${path} ${p.name}`);
        else {
          // Swagger UI's "Try it out" fills in parameter examples: an optional one would narrow every search.
          assert.equal(p.example, undefined, `${path} ${p.name}`);
          assert.equal(p.schema.examples?.length, 1, `${path} ${p.name}`);
          assert.ok(p.description.endsWith(`Example: ${p.schema.examples[0]}.`), `${path} ${p.name}`);
        }
      }
  });
  it('states each shared rule in the parameter text: limits, defaults, enums and lengths', () => {
    const param = (path: string, name: string) => doc.paths[path].get.parameters.find((p: any) => p.name === name);
    assert.match(param('/v1/listings', 'limit').description, /from 1 to 100\. Default 20/);
    assert.match(
      param('/v1/listings', 'furnishing').description,
      /One of SHELL, FURNISHED, UPHOLSTERED \(case-sensitive\)/,
    );
    assert.match(param('/v1/listings', 'min_price').description, /not be greater than max_price/);
    assert.match(param('/v1/articles', 'category').description, /1 to 120 characters/);
    assert.match(param('/v1/glossary', 'cursor').description, /next_cursor.*24 hours/);
    assert.match(param('/v1/glossary', 'locale').description, /English/);
  });
  it('answers every operation with an example for 200 and for each error status it can return, with its code', () => {
    for (const { path, op } of operations()) {
      const statuses = Object.keys(op.responses).sort();
      const keyed = op.security === undefined;
      const want = keyed ? ['200', '304', '400', '401', '429', '503', 'default'] : ['200', '400', 'default'];
      if (path.includes('{')) want.push('404');
      assert.deepEqual(statuses, want.sort(), path);
      assert.ok(op.responses['200'].content['application/json'].example, `${path} 200 example`);
      for (const status of Object.keys(CODE).filter((s) => statuses.includes(s))) {
        const examples = Object.values<any>(deref(doc, op.responses[status]).content['application/json'].examples);
        assert.ok(examples.length > 0, `${path} ${status}`);
        for (const e of examples) assert.equal(e.value.error.code, CODE[status], `${path} ${status}`);
      }
    }
  });
  it('documents X-Request-Id on every response, the rate-limit and data headers on keyed answers, Retry-After on 429 and 503', () => {
    for (const { path, op } of operations()) {
      const headers = (status: string) => Object.keys(deref(doc, op.responses[status]).headers ?? {});
      for (const status of Object.keys(op.responses))
        assert.ok(headers(status).includes('X-Request-Id'), `${path} ${status}`);
      if (op.security !== undefined) continue;
      for (const h of ['RateLimit', 'RateLimit-Policy', 'ETag', 'Last-Modified', 'X-Snapshot-Id'])
        assert.ok(headers('200').includes(h), `${path} 200 ${h}`);
      for (const status of ['429', '503']) assert.ok(headers(status).includes('Retry-After'), `${path} ${status}`);
      assert.ok(headers('401').includes('WWW-Authenticate'), path);
    }
  });
  it('gives 200 examples exactly the fields of their schema', () => {
    for (const { path, op } of operations()) {
      const media = op.responses['200'].content['application/json'];
      if (!media.schema.properties?.data) continue;
      const data = media.schema.properties.data;
      const item = data.type === 'array' ? data.items : data;
      const example = Array.isArray(media.example.data) ? media.example.data[0] : media.example.data;
      assert.deepEqual(Object.keys(example).sort(), Object.keys(item.properties).sort(), path);
    }
  });
  it('has a license, a contact without outside links, the bearer scheme, and the paging and locale rules', () => {
    assert.ok(doc.info.license.name && doc.info.license.identifier);
    assert.ok(doc.info.contact.name && /@/.test(doc.info.contact.email));
    assert.doesNotMatch(JSON.stringify([doc.info.license, doc.info.contact]), /https?:/);
    assert.deepEqual(doc.components.securitySchemes.bearer, {
      ...doc.components.securitySchemes.bearer,
      type: 'http',
      scheme: 'bearer',
    });
    assert.deepEqual(doc.security, [{ bearer: [] }]);
    for (const rule of [/next_cursor/, /24 hours/, /ascending id/, /English, field by field/, /Retry-After/])
      assert.match(doc.info.description, rule);
  });
  it('says in the owner schemas that every field but id may be null, arrays included', () => {
    for (const path of ['/v1/owners', '/v1/owners/{id}']) {
      const data = doc.paths[path].get.responses['200'].content['application/json'].schema.properties.data;
      assert.match((data.items ?? data).description, /may be null, including the arrays/);
    }
  });
});
