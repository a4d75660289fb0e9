// A publication folder for the following tests: keys made and files signed by the real minisign, latest.json written
// last (by rename), and real nginx serving the folder over HTTP and over HTTPS with a test CA made by openssl.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { tempDir } from './files.ts';
import { freePort, runNginx } from './nginx.ts';
import { run } from './processes.ts';

export interface Keys {
  pub: string;
  sec: string;
  /** The public key line itself (RW…). */
  key: string;
}

/** A minisign key pair without a password (`minisign -G -W`). */
export async function minisignKeys(dir = tempDir('minisign-')): Promise<Keys> {
  const pub = join(dir, 'minisign.pub');
  const sec = join(dir, 'minisign.key');
  const r = await run('minisign', ['-G', '-W', '-f', '-p', pub, '-s', sec]);
  assert.equal(r.code, 0, r.stderr);
  return { pub, sec, key: readFileSync(pub, 'utf8').trim().split('\n')[1] };
}

export interface Published {
  id: string;
  builtAt: string;
  file: string;
  signature: string;
  latest: Record<string, unknown>;
}

/** `snapshot`'s snapshot_meta read (id, build time, schema version). */
export function metaOf(snapshot: string) {
  const db = new Database(snapshot, { readonly: true });
  const m = new Map(
    (db.prepare('SELECT key, value FROM snapshot_meta').all() as { key: string; value: string }[]).map((r) => [
      r.key,
      r.value,
    ]),
  );
  db.close();
  return { id: m.get('snapshot_id')!, builtAt: m.get('built_at')!, schemaVersion: Number(m.get('schema_version')) };
}

/**
 * Publishes `snapshot` into `dir` as `snapshot publish` lays it out: <id>.db, <id>.db.minisig (signed by the real
 * minisign with `keys`, the trusted comment `trusted`), then latest.json. `edit` changes the file after signing,
 * or latest.json before it is written.
 */
export async function publish(
  dir: string,
  snapshot: string,
  keys: Keys,
  opts: { trusted?: string; afterSigning?: (file: string) => void; latest?: (l: Record<string, unknown>) => void } = {},
): Promise<Published> {
  mkdirSync(dir, { recursive: true });
  const meta = metaOf(snapshot);
  const file = join(dir, `${meta.id}.db`);
  copyFileSync(snapshot, file);
  const sig = await run('minisign', ['-S', '-s', keys.sec, '-m', file, '-t', opts.trusted ?? `snapshot:${meta.id}`]);
  assert.equal(sig.code, 0, sig.stderr);
  opts.afterSigning?.(file);
  const latest: Record<string, unknown> = {
    format: 1,
    snapshot_id: meta.id,
    schema_version: meta.schemaVersion,
    built_at: meta.builtAt,
    published_at: new Date().toISOString(),
    file: `${meta.id}.db`,
    signature: `${meta.id}.db.minisig`,
    size: readFileSync(file).length,
    expires_at: null,
  };
  opts.latest?.(latest);
  writeFileSync(join(dir, 'latest.json.tmp'), JSON.stringify(latest));
  renameSync(join(dir, 'latest.json.tmp'), join(dir, 'latest.json'));
  return { id: meta.id, builtAt: meta.builtAt, file, signature: `${file}.minisig`, latest };
}

export interface StaticNginx {
  http: string;
  https: string;
  /** The test CA's certificate (PEM file): what NODE_EXTRA_CA_CERTS names. */
  ca: string;
  log: string;
  stop(): Promise<void>;
}

/** A test CA and a certificate it signed for 127.0.0.1 and localhost (openssl). */
async function testCa(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  const f = (n: string) => join(dir, n);
  const steps = [
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=nlr test CA',
    ],
    ['-keyout', f('ca.key'), '-out', f('ca.pem')],
  ];
  const sh = async (args: string[]) => {
    const r = await run('openssl', args);
    assert.equal(r.code, 0, r.stderr);
  };
  await sh(steps.flat());
  await sh([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    f('key.pem'),
    '-out',
    f('req.csr'),
  ]);
  writeFileSync(f('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  await sh([
    'x509',
    '-req',
    '-in',
    f('req.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    f('ext.cnf'),
    '-out',
    f('cert.pem'),
  ]);
  return { ca: f('ca.pem'), cert: f('cert.pem'), key: f('key.pem') };
}

/** nginx serving `root` (ETag, Last-Modified and ranges as it does by default); `limitRate` slows each response. */
export async function serveFolder(
  root: string,
  opts: { limitRate?: string; extra?: string } = {},
): Promise<StaticNginx> {
  const dir = tempDir('nginx-pub-');
  const { ca, cert, key } = await testCa(dir);
  const [http, https] = [await freePort(), await freePort()];
  const server = `root ${root}; ${opts.limitRate ? `limit_rate ${opts.limitRate};` : ''} ${opts.extra ?? ''}`;
  const { stop } = await runNginx(
    dir,
    [
      'default_type application/octet-stream;',
      `server { listen 127.0.0.1:${http}; ${server} }`,
      `server { listen 127.0.0.1:${https} ssl; ssl_certificate ${cert}; ssl_certificate_key ${key}; ${server} }`,
    ].join('\n'),
    https,
  );
  return {
    http: `http://127.0.0.1:${http}`,
    https: `https://localhost:${https}`,
    ca,
    log: join(dir, 'access.log'),
    stop,
  };
}
