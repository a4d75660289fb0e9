// The single executable (scripts/sea.ts, made by npm run bundle) runs every operator command on its own: copied to
// an empty folder, with no node_modules anywhere near, no NODE_PATH and nothing else on PATH, it builds, inspects
// and diffs snapshots, makes keys and serves, loading better-sqlite3's addon from itself. And the deployment files
// in deploy/: the image (Containerfile) builds offline and serves, the systemd unit passes systemd-analyze, the
// nginx config terminates TLS for it.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { IMAGE_EXE, IMAGE_UID, prepareRootfs } from '../scripts/rootfs.ts';
import { ADDON, buildSea, SEA_NAME } from '../scripts/sea.ts';
import { addonFile } from '../scripts/sea-addon.ts';
import { commandLine } from '../snapshot-format/commands.ts';
import { FIXTURES, tempDir } from './support/files.ts';
import { freePort, httpsGet, startNginx } from './support/nginx.ts';
import { missing, run as runCommand, until } from './support/processes.ts';
import { serveFolder } from './support/publication.ts';
import { issueKey } from './support/server.ts';
import { fixtureSnapshot, snapshotCopy } from './support/snapshots.ts';

const ROOT = join(FIXTURES, '..', '..');
const uid = process.getuid?.() ?? -1;
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

/** Starts the executable with exactly `env` (no NODE_PATH, NODE_OPTIONS or anything else of this process). */
async function startExe(exe: string, env: Record<string, string>) {
  const child = spawn(exe, [], { cwd: join(exe, '..'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d) => {
      buf += d;
      const m = /"msg":"listening","url":"([^"]+)"/.exec(buf);
      if (m) resolve(m[1]);
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
    setTimeout(() => reject(new Error(`no listening line in 10 s: ${stderr}`)), 10_000).unref();
  });
  const stop = async () => {
    child.kill('SIGTERM');
    return { code: await exited, stderr };
  };
  return { child: child as ChildProcess, url, stop };
}

let built: Promise<string> | undefined;
/** The executable, built once per run, alone in its own folder (whose parents have no node_modules either). */
function theExecutable(): Promise<string> {
  built ??= buildSea(tempDir()).then((made) => {
    const exe = join(tempDir(), SEA_NAME);
    copyFileSync(made, exe);
    return exe;
  });
  return built;
}

describe('single executable', () => {
  let exe: string;
  let env: Record<string, string>;
  let key: string;
  let keyId: string;
  before(async () => {
    exe = await theExecutable();
    const { path: snapshot } = await fixtureSnapshot();
    const keysPath = join(tempDir(), 'keys.db');
    ({ key, id: keyId } = issueKey(keysPath, { name: 'sea test' }));
    env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      TMPDIR: tempDir(), // where the addon is written: observable, and removed with the test's folders
      HOST: '127.0.0.1',
      PORT: '0',
      SNAPSHOT_PATH: snapshot,
      KEYS_PATH: keysPath,
      DEV_KEY: '0',
      LOG_REQUESTS: '0',
      CURSOR_SECRET: 'sea-test-cursor-secret-0123',
    };
  });

  it('serves ping, a keyed search and the docs files from an empty folder, and runs the key command', async () => {
    const dir = join(exe, '..');
    assert.deepEqual(readdirSync(dir), [SEA_NAME]);
    assert.ok(!existsSync(join(dir, '..', 'node_modules')) && !existsSync('/node_modules'));
    const list = spawnSync(exe, ['keys', 'list'], { cwd: dir, env, encoding: 'utf8' });
    assert.equal(list.status, 0, list.stderr);
    assert.equal(JSON.parse(list.stdout).id, keyId);

    // One process (no cluster primary): the process whose memory maps are checked below serves the requests.
    const server = await startExe(exe, { ...env, WORKERS: '1' });
    try {
      const { url } = server;
      assert.deepEqual(await (await fetch(`${url}/v1/ping`)).json(), { service: 'nl-rental-data-api', status: 'ok' });
      const search = await fetch(`${url}/v1/listings?q=balcony&max_price=2500&limit=2`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      assert.equal(search.status, 200);
      const body = await search.json();
      assert.equal(body.data.length, 2);
      assert.ok(body.data.every((l: { id: string }) => l.id.startsWith('lst-')));
      assert.equal((await fetch(`${url}/v1/listings?limit=1`)).status, 401, 'the key is what let the search in');
      // The docs page's files are inside the executable, byte for byte.
      const swagger = join(ROOT, 'node_modules/swagger-ui-dist');
      const version = JSON.parse(readFileSync(join(swagger, 'package.json'), 'utf8')).version;
      const css = await fetch(`${url}/docs/assets/${version}/swagger-ui.css`, { headers: { 'Accept-Encoding': '' } });
      assert.equal(css.status, 200);
      assert.ok(Buffer.from(await css.arrayBuffer()).equals(readFileSync(join(swagger, 'swagger-ui.css'))));

      // The addon the process loaded is the one it wrote to its private folder under TMPDIR.
      const folder = join(env.TMPDIR, `nl-rental-api-${uid}`);
      assert.equal(statSync(folder).mode & 0o777, 0o700);
      const maps = readFileSync(`/proc/${server.child.pid}/maps`, 'utf8');
      const loaded = maps.split('\n').filter((l) => l.includes('better_sqlite3'));
      assert.ok(loaded.length > 0 && loaded.every((l) => l.includes(`${folder}/better_sqlite3-`)), loaded.join('\n'));
      assert.deepEqual(readdirSync(dir), [SEA_NAME], 'nothing was written beside the executable');
    } finally {
      const { code, stderr } = await server.stop();
      assert.equal(code, 0, stderr);
    }
  });

  it('runs every operator command with no node on PATH: builds the sample, inspects and diffs it, makes a key, serves', async () => {
    // PATH holds the executable and nothing else: no node, npm or compiler can be found.
    const bin = join(exe, '..');
    const work = tempDir();
    const bare = { ...env, PATH: bin, KEYS_PATH: join(work, 'keys.db'), DEV_KEY: '1' };
    const found = spawnSync('/bin/sh', ['-c', 'for t in node npm npx tsx cc gcc; do command -v $t; done'], {
      env: bare,
    });
    assert.equal(found.stdout.toString(), '', 'nothing but the executable on PATH');
    // The executable with exactly `bare` for its environment; the independent runs go at once.
    const run = (...args: string[]) => runCommand(SEA_NAME, args, { cwd: work, env: bare, onlyEnv: true });
    const ok = async (...args: string[]) => {
      const r = await run(...args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      return r;
    };

    const [help, version, unknown, sample, basic, badArgs, badData] = await Promise.all([
      ok('help'),
      ok('version'),
      run('frobnicate'),
      // The compiler, its workers included, from the executable: the same snapshot as the repository's compiler.
      ok('build-snapshot', '--source', join(ROOT, 'data'), '--out', 'sample.db'),
      ok('build-snapshot', '--source', join(FIXTURES, 'basic'), '--out', 'basic.db'),
      run('build-snapshot', '--sauce'),
      run('build-snapshot', '--source', join(work, 'nowhere'), '--out', 'x.db'),
    ]);
    assert.match(help.stdout, /^Usage: nl-rental-api \[command\]/);
    assert.match(version.stdout, /^nl-rental-api \d+\.\d+\.\d+ \(node v20\./);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
    assert.match(sample.stderr, /build-snapshot: OK snap_\w+ → sample\.db/);
    const { result } = await fixtureSnapshot();
    assert.match(basic.stderr, new RegExp(`OK ${result.snapshotId} `), 'the id the in-process compiler gives');
    assert.equal(badArgs.code, 2);
    assert.match(badArgs.stderr, /usage: nl-rental-api build-snapshot \[--source DIR/);
    assert.equal(badData.code, 1, badData.stderr);

    // Every message that names a command names this executable's (the key store is made only later).
    const [inspectJson, inspectText, diffJson, missingFile, snapshotUsage, noStore, keysUsage] = await Promise.all([
      ok('snapshot', 'inspect', 'sample.db', '--json'),
      ok('snapshot', 'inspect', 'sample.db'),
      ok('snapshot', 'diff', 'basic.db', 'sample.db', '--json'),
      run('snapshot', 'inspect', 'missing.db'),
      run('snapshot'),
      run('keys', 'list'),
      run('keys', 'disable'),
    ]);
    const inspect = JSON.parse(inspectJson.stdout);
    assert.equal(inspect.ok, true);
    assert.match(inspectText.stdout, /quick_check\s+ok/);
    const diff = JSON.parse(diffJson.stdout);
    assert.ok(
      diff.resources.some((r: { added: { count: number } }) => r.added.count > 0),
      JSON.stringify(diff.resources),
    );
    assert.equal(missingFile.code, 1);
    assert.equal(snapshotUsage.code, 2);
    assert.match(snapshotUsage.stderr, /Usage: nl-rental-api snapshot <command>/);
    assert.equal(noStore.code, 1);
    assert.match(noStore.stderr, /create a key first: nl-rental-api keys create --name NAME\)/);
    assert.equal(keysUsage.code, 2);
    assert.match(keysUsage.stderr, /e\.g\. nl-rental-api keys disable key_X+\n\nUsage: nl-rental-api keys <command>/);
    for (const r of [noStore, keysUsage, snapshotUsage, badArgs]) assert.doesNotMatch(r.stderr, /npm/);

    // Publishing from the executable: a minisign key pair, a signed publication, its check.
    await ok('snapshot', 'keygen', '--out', 'publisher', '--unencrypted');
    const published = await ok('snapshot', 'publish', 'sample.db', '--key', 'publisher.key', '--out', 'published');
    assert.match(published.stdout, new RegExp(`^published ${inspect.snapshot_id} `));
    const signed = join('published', `${inspect.snapshot_id}.db`);
    const verified = await ok('snapshot', 'verify', signed, '--public-key', 'publisher.pub');
    assert.match(verified.stdout, /: signed by key [0-9A-F]{16} \(no expiry\)/);

    // Served with WORKERS=1 and an empty key store: the development key's banner names the executable's command.
    const server = await startExe(exe, { ...bare, SNAPSHOT_PATH: join(work, 'sample.db'), WORKERS: '1' });
    try {
      const made = await ok('keys', 'create', '--name', 'made by the executable');
      const { key: made_key } = JSON.parse(made.stdout);
      const res = await fetch(`${server.url}/v1/listings?limit=1`, {
        headers: { Authorization: `Bearer ${made_key}` },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-snapshot-id'), inspect.snapshot_id);
      assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    } finally {
      const { code, stderr } = await server.stop();
      assert.equal(code, 0, stderr);
      assert.match(stderr, /Manage keys with nl-rental-api keys list \| disable key_\w+ \| revoke key_\w+\./);
      assert.doesNotMatch(stderr, /npm/);
    }
    assert.deepEqual(
      JSON.parse(`[${(await ok('keys', 'list')).stdout.trim().split('\n').join(',')}]`).map(
        (k: { name: string }) => k.name,
      ),
      ['local development key (made by the server at start-up)', 'made by the executable'],
    );
  });

  it('answers over HTTPS behind deploy/nginx.conf, which sets X-Forwarded-Proto and X-Forwarded-For', {
    // Under CI a missing nginx or openssl is a failure (.ci/run installs them), not a skip.
    skip:
      process.env.CI || (has('nginx') && has('openssl')) ? false : 'no nginx or openssl: apt-get install nginx openssl',
  }, async () => {
    for (const tool of ['nginx', 'openssl'])
      assert.ok(has(tool), `CI is set and ${tool} is missing: apt-get install ${tool}`);
    const server = await startExe(exe, { ...env, TRUST_PROXY: '1', AUTH_FAILURES_PER_MINUTE: '2' });
    const [http, https] = [await freePort(), await freePort()];
    const nginx = await startNginx(join(ROOT, 'deploy/nginx.conf'), { api: new URL(server.url).port, http, https });
    try {
      const ping = await httpsGet(nginx, '/v1/ping');
      assert.equal(ping.status, 200, ping.body);
      assert.match(ping.headers['strict-transport-security'] as string, /max-age=/, 'the API saw https');
      const search = await httpsGet(nginx, '/v1/listings?limit=1', { Authorization: `Bearer ${key}` });
      assert.equal(search.status, 200, search.body);
      // The API counts failed keys per the address nginx sets, not per what the client put in the header.
      const bad = (n: number) =>
        httpsGet(nginx, '/v1/listings', { Authorization: 'Bearer nope', 'X-Forwarded-For': `10.0.0.${n}` });
      assert.deepEqual([(await bad(1)).status, (await bad(2)).status, (await bad(3)).status], [401, 401, 429]);
      const plain = await fetch(`http://127.0.0.1:${http}/v1/ping`, { redirect: 'manual' });
      assert.equal(plain.status, 308);
      assert.match(plain.headers.get('location')!, /^https:\/\/127\.0\.0\.1(:\d+)?\/v1\/ping$/);
    } finally {
      await nginx.stop();
      await server.stop();
    }
  });

  it('follows a publication with no node on PATH: keygen and publish by the executable, served by nginx', {
    skip: missing('/usr/sbin/nginx', 'nginx'),
  }, async () => {
    const bin = join(exe, '..');
    const work = tempDir();
    const bare = { ...env, PATH: bin };
    const ok = async (...args: string[]) => {
      const r = await runCommand(SEA_NAME, args, { cwd: work, env: bare, onlyEnv: true });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    await ok('snapshot', 'keygen', '--out', 'publisher', '--unencrypted');
    await ok('snapshot', 'publish', env.SNAPSHOT_PATH, '--key', 'publisher.key', '--out', 'pub', '--valid-for', '7d');
    const nginx = await serveFolder(join(work, 'pub'));
    // Nothing at SNAPSHOT_PATH: the cluster's primary (WORKERS=2) follows, and every worker serves what it took.
    const server = await startExe(exe, {
      ...bare,
      WORKERS: '2',
      SNAPSHOT_PATH: join(tempDir(), 'snapshot.db'),
      SNAPSHOT_FOLLOW: `${nginx.http}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: join(work, 'publisher.pub'),
      SNAPSHOT_FOLLOW_INTERVAL_MS: '200',
      SNAPSHOT_FOLLOW_SPREAD_MS: '0',
    });
    try {
      const { result } = await fixtureSnapshot();
      const ready = await until('the publication served', async () => {
        const r = await fetch(`${server.url}/readyz`);
        const body = (await r.json()) as { snapshot: { id: string }; follow: { served: unknown } };
        return r.status === 200 && body.follow.served !== null && body;
      });
      assert.equal(ready.snapshot.id, result.snapshotId);
      assert.match(JSON.stringify(ready.follow.served), /"expires_at":"20\d\d-/);
      const search = await fetch(`${server.url}/v1/listings?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
      assert.equal(search.status, 200);
    } finally {
      await server.stop();
      await nginx.stop();
    }
  });
});

describe('the image: deploy/Containerfile', () => {
  // Under CI a missing podman or buildah is a failure (.ci/run installs them), not a skip.
  const skip = missing('/usr/bin/podman', 'podman') ?? missing('/usr/bin/buildah', 'buildah');

  it('builds FROM scratch offline from the root file system of the bundle, makes a key and serves it as its user', {
    skip: skip ?? false,
  }, async () => {
    const context = tempDir();
    const libs = prepareRootfs(join(context, 'rootfs'), await theExecutable(), [ADDON]);
    assert.ok(libs.some((l) => /\/libc\.so\.6$/.test(l)) && libs.some((l) => /\/libstdc\+\+\.so\.6$/.test(l)));
    // Storage of this test only (vfs: no kernel overlay needed), removed with its folder.
    const store = tempDir();
    const global = ['--root', join(store, 'root'), '--runroot', join(store, 'run'), '--storage-driver', 'vfs'];
    const tool = (bin: string, args: string[]) => {
      const r = spawnSync(bin, [...global, ...args], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${bin} ${args.join(' ')}: ${r.stderr}`);
      return r.stdout.trim();
    };
    tool('podman', [
      'build',
      '--pull=never',
      '-f',
      join(ROOT, 'deploy/Containerfile'),
      '-t',
      'nl-rental-api:test',
      context,
    ]);
    const container = tool('buildah', ['from', '--pull-never', 'nl-rental-api:test']);
    const snapshots = tempDir();
    await snapshotCopy(undefined, join(snapshots, 'snapshot.db'));
    chmodSync(snapshots, 0o755); // readable by the image's user (10001)
    chmodSync(join(snapshots, 'snapshot.db'), 0o644);
    const keys = tempDir();
    chmodSync(keys, 0o777); // the image's user (10001) writes the key store here
    // `podman run` cannot set its limits in this sandbox; buildah's chroot isolation runs the image's command,
    // user and environment the same way, on the host's network.
    const run = (opts: string[], args: string[]) => [
      ...global,
      'run',
      '--isolation',
      'chroot',
      '-v',
      `${snapshots}:/srv/snapshots:ro`,
      '-v',
      `${keys}:/var/lib/nl-rental-api`,
      ...opts,
      container,
      '--',
      IMAGE_EXE,
      ...args,
    ];
    try {
      const made = spawnSync('buildah', run([], ['keys', 'create', '--name', 'image']), { encoding: 'utf8' });
      assert.equal(made.status, 0, made.stderr);
      const { key } = JSON.parse(made.stdout);
      assert.equal(statSync(join(keys, 'keys.db')).uid, IMAGE_UID, 'the image runs as its own user, not root');

      const port = await freePort();
      const env = ['-e', 'HOST=127.0.0.1', '-e', `PORT=${port}`, '-e', 'WORKERS=1', '-e', 'LOG_REQUESTS=0'];
      const server = spawn('buildah', run(env, ['serve']), { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      server.stdout.on('data', (d) => (out += d));
      server.stderr.on('data', (d) => (err += d));
      const exited = new Promise<number | null>((resolve) => server.on('exit', resolve));
      try {
        const pid = await new Promise<number>((resolve, reject) => {
          server.stdout.on('data', () => {
            const m = /"msg":"listening".*"pid":(\d+)/.exec(out);
            if (m) resolve(Number(m[1]));
          });
          void exited.then((code) => reject(new Error(`exited ${code}: ${err}`)));
          setTimeout(() => reject(new Error(`no listening line in 30 s: ${out}${err}`)), 30_000).unref();
        });
        const url = `http://127.0.0.1:${port}`;
        assert.equal((await fetch(`${url}/readyz`)).status, 200);
        const res = await fetch(`${url}/v1/listings?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
        assert.equal(res.status, 200);
        assert.equal((await fetch(`${url}/v1/listings?limit=1`)).status, 401);
        process.kill(pid, 'SIGTERM'); // the server itself: buildah does not pass signals on
        assert.equal(await exited, 0, err);
      } finally {
        server.kill('SIGKILL');
      }
    } finally {
      spawnSync('buildah', [...global, 'rm', container]);
      spawnSync('podman', [...global, 'rmi', '-f', 'nl-rental-api:test']);
    }
  });
});

describe('deploy/nl-rental-api.service', () => {
  it('passes systemd-analyze verify without a warning', { skip: !has('systemd-analyze') }, () => {
    // verify checks that ExecStart's file exists: this copy names one that does.
    const unit = join(tempDir(), 'nl-rental-api.service');
    const text = readFileSync(join(ROOT, 'deploy/nl-rental-api.service'), 'utf8');
    assert.match(text, /^ExecStart=\/usr\/local\/bin\/nl-rental-api serve$/m);
    writeFileSync(unit, text.replace(/^ExecStart=\/usr\/local\/bin\/nl-rental-api/m, `ExecStart=${process.execPath}`));
    const r = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '', 'systemd-analyze ignores what it cannot parse, with a warning');
    assert.doesNotMatch(text, /^MemoryDenyWriteExecute=yes/m, "V8's JIT writes executable memory");
  });
});

describe('command names', () => {
  it('name the npm script in the repository and the subcommand in the executable', () => {
    assert.equal(commandLine('keys', 'list', { sea: false }), 'npm run keys -- list');
    assert.equal(
      commandLine('keys', 'create --name N', { sea: false, quiet: true }),
      'npm run -s keys -- create --name N',
    );
    assert.equal(commandLine('build-snapshot', '', { sea: false }), 'npm run build-snapshot');
    assert.equal(
      commandLine('keys', 'create --name N', { sea: true, quiet: true }),
      'nl-rental-api keys create --name N',
    );
    assert.equal(commandLine('snapshot', 'inspect FILE', { sea: true }), 'nl-rental-api snapshot inspect FILE');
    assert.equal(commandLine('build-snapshot'), 'npm run build-snapshot', 'tests run in the repository');
  });
});

describe('the addon file', () => {
  const bytes = new TextEncoder().encode('not really an addon');

  it('is written once under its hash and rewritten when the file there differs', () => {
    const base = tempDir();
    const a = addonFile(bytes, base);
    assert.equal(a.cleanup, undefined);
    assert.match(a.path, new RegExp(`/nl-rental-api-${uid}/better_sqlite3-[0-9a-f]{32}\\.node$`));
    const written = statSync(a.path).mtimeMs;
    assert.equal(addonFile(bytes, base).path, a.path);
    assert.equal(statSync(a.path).mtimeMs, written, 'the same content is not written again');
    chmodSync(a.path, 0o600);
    writeFileSync(a.path, 'tampered');
    assert.equal(addonFile(bytes, base).path, a.path);
    assert.deepEqual(new Uint8Array(readFileSync(a.path)), bytes);
    assert.equal(readdirSync(join(a.path, '..')).length, 1, 'no temporary file is left');
  });

  it('goes to a fresh private folder when the shared one is not private', () => {
    const base = tempDir();
    mkdirSync(join(base, `nl-rental-api-${uid}`), { mode: 0o777 });
    chmodSync(join(base, `nl-rental-api-${uid}`), 0o777); // past the umask
    const a = addonFile(bytes, base);
    assert.ok(a.cleanup);
    assert.ok(!a.path.includes(`nl-rental-api-${uid}/`));
    assert.equal(statSync(join(a.path, '..')).mode & 0o777, 0o700);
    assert.deepEqual(new Uint8Array(readFileSync(a.path)), bytes);
    a.cleanup();
    assert.ok(!existsSync(join(a.path, '..')));
  });
});
