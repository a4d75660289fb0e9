// The settings and deploy files for several replicas: REDIS_URL is validated and never echoed, the shipped
// deploy/haproxy.cfg passes haproxy -c, the Kubernetes Deployment's grace period covers its drain.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, redactUrl } from '../src/config.ts';
import { ROOT, tempDir } from './support/files.ts';
import { freePort } from './support/nginx.ts';
import { listeningOn, missing, replaceIn } from './support/processes.ts';
import { PASSWORD } from './support/redis.ts';

describe('deploy files for replicas', () => {
  /** A self-signed certificate and key in one PEM file, as HAProxy's crt wants it. */
  function certificate(dir: string): string {
    const pem = join(dir, 'api.pem');
    const gen = spawnSync(
      'sh',
      [
        '-c',
        `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=api.example.com -keyout ${pem}.key -out ${pem}.crt && cat ${pem}.crt ${pem}.key > ${pem}`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(gen.status, 0, gen.stderr);
    return pem;
  }

  it('haproxy.cfg is valid as shipped (with a certificate at its path)', {
    skip: missing('/usr/sbin/haproxy', 'haproxy'),
  }, () => {
    const dir = tempDir('haproxy-check-');
    const cfg = join(dir, 'haproxy.cfg');
    const pem = certificate(dir);
    writeFileSync(cfg, replaceIn(readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8'), /crt \S+/, `crt ${pem}`));
    const r = spawnSync('/usr/sbin/haproxy', ['-c', '-f', cfg], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /WARNING/);
  });

  it('haproxy.cfg starts with its maxconn under a file descriptor limit of 16384', {
    skip: missing('/usr/sbin/haproxy', 'haproxy'),
  }, async () => {
    const dir = tempDir('haproxy-start-');
    const [https, http] = [await freePort(), await freePort()];
    let text = readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
    text = replaceIn(text, /bind :443 ssl crt \S+/, `bind 127.0.0.1:${https} ssl crt ${certificate(dir)}`);
    text = replaceIn(text, 'bind :80', `bind 127.0.0.1:${http}`);
    text = replaceIn(text, /server api(\d) \S+/g, 'server api$1 127.0.0.1:9'); // nothing listens: checks fail, fine
    const cfg = join(dir, 'haproxy.cfg');
    writeFileSync(cfg, text);
    // `ulimit -n` lowers the soft and the hard limit: HAProxy cannot raise its own past it.
    const child = spawn('sh', ['-c', `ulimit -n 16384 && exec /usr/sbin/haproxy -db -f ${cfg}`], { cwd: dir });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await Promise.race([
        listeningOn(https, 10_000),
        exited.then((code) => assert.fail(`haproxy exited (${code}): ${output}`)),
      ]);
      await listeningOn(http, 5000);
      assert.doesNotMatch(output, /ALERT|FD limit/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('the Kubernetes Deployment drains within its grace period, probes /readyz and /livez, and follows', () => {
    const text = readFileSync(join(ROOT, 'deploy/k8s/deployment.yaml'), 'utf8');
    const num = (re: RegExp) => Number(re.exec(text)?.[1]);
    const grace = num(/terminationGracePeriodSeconds: (\d+)/);
    const drainMs = num(/name: DRAIN_TIMEOUT_MS\n\s+value: "(\d+)"/);
    const preStop = num(/preStop:\n\s+sleep:\n\s+seconds: (\d+)/);
    assert.ok(
      grace >= preStop + drainMs / 1000 + 5,
      `grace ${grace} s for preStop ${preStop} s + drain ${drainMs} ms + 5 s`,
    );
    assert.match(text, /readinessProbe:\n\s+httpGet:\n\s+path: \/readyz/);
    assert.match(text, /livenessProbe:\n\s+httpGet:\n\s+path: \/livez/);
    // Each pod follows the publication into an emptyDir: nothing shared to mount.
    assert.match(text, /name: SNAPSHOT_FOLLOW\n\s+value: https:\/\/\S+\/latest\.json/);
    assert.match(text, /- name: snapshots\n\s+emptyDir:/);
    for (const secret of ['CURSOR_SECRET', 'REDIS_URL'])
      assert.match(text, new RegExp(`name: ${secret}\\n\\s+valueFrom:\\n\\s+secretKeyRef:`));
    const kubectl = spawnSync('kubectl', ['kustomize', join(ROOT, 'deploy/k8s')], { encoding: 'utf8' });
    if (kubectl.error) return; // no kubectl here: the text checks above still ran
    assert.equal(kubectl.status, 0, kubectl.stderr);
    for (const kind of ['Deployment', 'Service', 'PodDisruptionBudget'])
      assert.match(kubectl.stdout, new RegExp(`^kind: ${kind}$`, 'm'));
  });
});

describe('REDIS_URL and REDIS_PREFIX settings', () => {
  it('refuses a URL that is not redis:// or rediss:// without echoing it; logs see it without its password', () => {
    for (const bad of [`http://:${PASSWORD}@example.com`, `redis://:${PASSWORD}@`, `redis://:${PASSWORD}@h/x`])
      assert.throws(
        () => loadConfig({ REDIS_URL: bad }),
        (e: Error) =>
          e instanceof ConfigError && /^REDIS_URL: must be a URL like/.test(e.message) && !e.message.includes(PASSWORD),
      );
    assert.equal(
      loadConfig({ REDIS_URL: `rediss://:${PASSWORD}@h:6380/2` }).REDIS_URL,
      `rediss://:${PASSWORD}@h:6380/2`,
    );
    assert.equal(redactUrl(`redis://user:${PASSWORD}@h:1/2`), 'redis://***:***@h:1/2');
    assert.throws(() => loadConfig({ REDIS_PREFIX: 'a b' }), /REDIS_PREFIX/);
  });
});

describe('a secret setting', () => {
  it('is never echoed in the start-up error, whatever is wrong with it', () => {
    const secret = 'short-Secret';
    assert.throws(
      () => loadConfig({ CURSOR_SECRET: secret }),
      (e: Error) => e instanceof ConfigError && e.message === 'CURSOR_SECRET: must be at least 16 characters',
    );
  });
});

describe('a setting given as an empty string', () => {
  it('is unset where unset is allowed, and otherwise says it is empty (not a type error)', () => {
    assert.equal(loadConfig({ REDIS_URL: '' }).REDIS_URL, undefined);
    for (const name of ['KEYS_PATH', 'SNAPSHOT_PATH'])
      assert.throws(
        () => loadConfig({ [name]: '' }),
        (e: Error) =>
          e instanceof ConfigError && e.message === `${name}: is set but empty; give it a value or unset it`,
      );
  });
});
