// The image's root file system (npm run bundle → dist/rootfs/, copied by deploy/Containerfile FROM scratch): the
// single executable, the shared libraries it and better-sqlite3's addon link (as ldd lists them), and /etc/passwd
// and /etc/group naming the user it runs as. No shell, no package manager, nothing else.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The user and group the image runs as (deploy/k8s/deployment.yaml's runAsUser and runAsGroup). */
export const IMAGE_UID = 10001;
/** Where the executable is inside the image. */
export const IMAGE_EXE = '/usr/local/bin/nl-rental-api';

/** The absolute paths of the shared objects `file` loads, as `ldd` lists them (the vDSO has no file). */
export function linkedLibraries(file: string): string[] {
  const r = spawnSync('ldd', [file], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`ldd ${file} failed: ${r.error?.message ?? r.stderr.trim()}`);
  const paths: string[] = [];
  for (const line of r.stdout.split('\n')) {
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)", or the loader alone: "/lib64/ld-linux-x86-64.so.2 (0x…)"
    const m = /^\s*(?:\S+ => )?(\/\S+) \(0x[0-9a-f]+\)$/.exec(line);
    if (m) paths.push(m[1]);
    else if (/not found/.test(line)) throw new Error(`ldd ${file}: ${line.trim()}`);
  }
  return paths;
}

/**
 * Writes `dir` (emptied first) as the image's root: `files` (the executable, and the addon whose libraries are
 * needed too, but which the executable carries itself) decide the libraries. Returns the libraries copied.
 */
export function prepareRootfs(dir: string, exe: string, alsoLinked: string[] = []): string[] {
  rmSync(dir, { recursive: true, force: true });
  const put = (path: string) => {
    mkdirSync(join(dir, dirname(path)), { recursive: true, mode: 0o755 });
    return join(dir, path);
  };
  copyFileSync(exe, put(IMAGE_EXE));
  chmodSync(join(dir, IMAGE_EXE), 0o755);
  const libs = [...new Set([exe, ...alsoLinked].flatMap(linkedLibraries))].sort();
  // Each at the path the loader looks for (the symlinks followed: /lib may be a link to /usr/lib here).
  for (const lib of libs) copyFileSync(realpathSync(lib), put(lib));
  const user = 'nl-rental-api';
  writeFileSync(
    put('/etc/passwd'),
    `root:x:0:0:root:/root:/sbin/nologin\n${user}:x:${IMAGE_UID}:${IMAGE_UID}:${user}:/nonexistent:/sbin/nologin\n`,
  );
  writeFileSync(put('/etc/group'), `root:x:0:\n${user}:x:${IMAGE_UID}:\n`);
  // Mount points: the snapshots (read-only) and the key store (the user's, see the Containerfile); and /tmp,
  // where the executable writes its addon at start (an emptyDir in Kubernetes).
  for (const d of ['/srv/snapshots', '/var/lib/nl-rental-api'])
    mkdirSync(join(dir, d), { recursive: true, mode: 0o755 });
  mkdirSync(join(dir, 'tmp'));
  chmodSync(join(dir, 'tmp'), 0o1777);
  return libs;
}
