// deploy/nginx.conf run for real on loopback (test/sea.test.ts): its ports and certificate paths replaced by
// free ports and a self-signed certificate for api.example.com, everything else as shipped.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './files.ts';

const NAME = 'api.example.com';

/** A TCP port nothing listens on at the moment. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

const replace = (text: string, from: string | RegExp, to: string) => {
  const out = text.replace(from, to);
  assert.notEqual(out, text, `deploy/nginx.conf no longer has ${from}`);
  return out;
};

export interface Nginx {
  https: number;
  http: number;
  cert: string;
  stop(): Promise<void>;
}

/** Starts nginx with `conf` (a http{} include) proxying to 127.0.0.1:`api`; resolves once it accepts connections. */
export async function startNginx(conf: string, ports: { api: string; http: number; https: number }): Promise<Nginx> {
  const dir = tempDir('nginx-test-');
  const gen = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'].concat(
      ['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', `/CN=${NAME}`],
      ['-addext', `subjectAltName=DNS:${NAME}`],
    ),
    { encoding: 'utf8' },
  );
  assert.equal(gen.status, 0, gen.stderr);
  let site = readFileSync(conf, 'utf8');
  site = replace(site, 'server 127.0.0.1:8080;', `server 127.0.0.1:${ports.api};`);
  site = replace(site, /^\s*listen \[::\]:.*\n/gm, ''); // IPv6 may be off on a test machine
  site = replace(site, 'listen 80;', `listen 127.0.0.1:${ports.http};`);
  site = replace(site, 'listen 443 ssl', `listen 127.0.0.1:${ports.https} ssl`);
  site = replace(site, /ssl_certificate .*;/, `ssl_certificate ${join(dir, 'cert.pem')};`);
  site = replace(site, /ssl_certificate_key .*;/, `ssl_certificate_key ${join(dir, 'key.pem')};`);
  writeFileSync(join(dir, 'site.conf'), site);
  const { stop } = await runNginx(dir, `include ${dir}/site.conf;`, ports.https);
  return {
    ...ports,
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    stop,
  };
}

/**
 * nginx with its files in `dir` and `http` inside its http{} block (after the access log and temporary paths there);
 * resolves once `port` on 127.0.0.1 accepts connections. `stop` ends it and resolves when it has exited.
 */
export async function runNginx(dir: string, http: string, port: number): Promise<{ stop(): Promise<void> }> {
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`);
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      // As root, workers would run as nobody, who cannot enter this private folder.
      process.getuid?.() === 0 ? 'user root;' : '',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log;`,
      'events { worker_connections 64; }',
      `http { access_log ${dir}/access.log; ${temp.join(' ')} ${http} }`,
    ].join('\n'),
  );
  const child = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const deadline = Date.now() + 5000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const c = createConnection(port, '127.0.0.1', () => resolve(c.end() && true));
      c.on('error', () => resolve(false));
    });
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`nginx did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** GET over HTTPS to nginx as api.example.com, trusting only the test certificate. */
export function httpsGet(
  nginx: Nginx,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: nginx.https,
        path,
        servername: NAME,
        ca: nginx.cert,
        headers: { Host: NAME, ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
