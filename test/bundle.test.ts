// The esbuild bundle (npm run bundle) is what self-hosters run: it must compile a snapshot and serve it.
// It also holds the single executable, which test/sea.test.ts runs.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SEA_NAME } from '../scripts/sea.ts';
import { BASIC, ROOT, tempDir } from './support/files.ts';
import { run, runScript } from './support/processes.ts';

const versionOf = (name: string) =>
  JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version as string;

describe('bundle', () => {
  it('builds a snapshot and serves /v1/ping and an authenticated request from dist files alone', async () => {
    const dir = tempDir();
    // Inside the project, so the bundle resolves better-sqlite3 from node_modules as a deployment would.
    const out = join(ROOT, `.dist-test-${process.pid}`);
    process.on('exit', () => rmSync(out, { recursive: true, force: true }));
    const b = await runScript('scripts/bundle.ts', [out]);
    assert.equal(b.code, 0, b.stderr);
    const snap = join(dir, 'snapshot.db');
    const keysPath = join(dir, 'keys.db');
    // The bundle's compiler and its key command, at once.
    const [c, k] = await Promise.all([
      run(process.execPath, [join(out, 'build-snapshot.mjs'), '--source', BASIC, '--out', snap]),
      run(process.execPath, [join(out, 'keys.mjs'), 'create', '--name', 'bundle test'], {
        env: { KEYS_PATH: keysPath },
      }),
    ]);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(k.code, 0, k.stderr);
    const key = JSON.parse(k.stdout).key as string;
    const server = spawn(process.execPath, [join(out, 'server.mjs')], {
      cwd: ROOT,
      env: { ...process.env, SNAPSHOT_PATH: snap, KEYS_PATH: keysPath, PORT: '0', DEV_KEY: '0', LOG_REQUESTS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let buf = '';
        server.stdout.on('data', (d) => {
          buf += d;
          const m = /"url":"([^"]+)"/.exec(buf);
          if (m) resolve(m[1]);
        });
        server.on('exit', (code) => reject(new Error(`server exited ${code}`)));
        setTimeout(() => reject(new Error('no listening line in 10 s')), 10_000).unref();
      });
      const ping = await fetch(`${url}/v1/ping`);
      assert.deepEqual(await ping.json(), { service: 'nl-rental-data-api', status: 'ok' });
      const res = await fetch(`${url}/v1/listings/lst-001`, { headers: { Authorization: `Bearer ${key}` } });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).data.id, 'lst-001');
      // The docs page's files come from the swagger-ui-dist package the bundle's package.json names.
      const css = await fetch(`${url}/docs/assets/${versionOf('swagger-ui-dist')}/swagger-ui.css`);
      assert.equal(css.status, 200);
    } finally {
      server.kill();
    }
    // Its package.json names the dependencies left outside, at the versions it was built with.
    const pkg = JSON.parse(readFileSync(join(out, 'package.json'), 'utf8'));
    assert.deepEqual(pkg.dependencies, {
      'better-sqlite3': versionOf('better-sqlite3'),
      'swagger-ui-dist': versionOf('swagger-ui-dist'),
    });
    assert.equal(pkg.type, 'module');
    // And the single executable beside it (test/sea.test.ts runs it).
    assert.ok(statSync(join(out, SEA_NAME)).mode & 0o100, 'dist/nl-rental-api is executable');
    // And the image's root file system (deploy/Containerfile; test/sea.test.ts builds and runs the image).
    if (process.platform === 'linux') {
      const rootfs = join(out, 'rootfs');
      assert.ok(statSync(join(rootfs, 'usr/local/bin', SEA_NAME)).mode & 0o100);
      assert.match(readFileSync(join(rootfs, 'etc/passwd'), 'utf8'), /^nl-rental-api:x:10001:10001:/m);
      assert.ok(existsSync(join(rootfs, 'lib64/ld-linux-x86-64.so.2')) || process.arch !== 'x64', 'the loader');
    }
    // Bundling again replaces the bundle's own files, keeps what npm install made from its package.json,
    // and refuses a folder that holds anything else (or a file given as the folder).
    const again = (to = out) => runScript('scripts/bundle.ts', [to]);
    mkdirSync(join(out, 'node_modules', 'x'), { recursive: true });
    writeFileSync(join(out, 'package-lock.json'), '{}');
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const [over, notFolder] = await Promise.all([again(), again(file)]);
    assert.equal(over.code, 0, 'over a previous bundle');
    assert.ok(
      existsSync(join(out, 'node_modules', 'x')) && existsSync(join(out, 'package-lock.json')),
      'the installed dependency is kept',
    );
    assert.equal(notFolder.code, 1);
    assert.match(notFolder.stderr, /exists and is not a folder/);
    assert.doesNotMatch(notFolder.stderr, /\n\s+at /, 'no stack trace');
    writeFileSync(join(out, 'keys.db'), 'operator data');
    const refused = await again();
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /holds files that are not the bundle's \(keys\.db\)/);
    assert.equal(readFileSync(join(out, 'keys.db'), 'utf8'), 'operator data');
    assert.ok(existsSync(join(out, 'server.mjs')), 'nothing was removed');
  });
});
