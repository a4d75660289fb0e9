// better-sqlite3's native addon inside the single executable. The build (scripts/sea.ts) puts this module in
// place of better-sqlite3's `require('bindings')('better_sqlite3.node')`, which searches node_modules beside
// the script; here the addon is the SEA asset ADDON_ASSET. process.dlopen needs a file: the asset is written
// once to a folder of this user only, under its own hash, so concurrent starts share it and never see half a file.
import { createHash, randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRawAsset } from 'node:sea';

export const ADDON_ASSET = 'better_sqlite3.node';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** `base/nl-rental-api-UID`, made with mode 0700; null when it exists but is not a folder only this user can open. */
function privateFolder(base: string): string | null {
  const uid = process.getuid?.() ?? -1;
  const dir = join(base, `nl-rental-api-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  // Another user may have made the name first in a shared /tmp: then it is not ours to load code from.
  const st = lstatSync(dir);
  return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0 ? dir : null;
}

/**
 * The path of a file holding `bytes`: `nl-rental-api-UID/better_sqlite3-HASH.node` under `base`, written
 * (to a unique name, then renamed) unless a file with the same content is there already. When that folder
 * cannot be trusted, a fresh private folder of this process is used and `cleanup` removes it after loading.
 */
export function addonFile(bytes: Uint8Array, base = tmpdir()): { path: string; cleanup?: () => void } {
  const hash = sha256(bytes);
  const dir = privateFolder(base);
  if (!dir) {
    const own = mkdtempSync(join(base, 'nl-rental-api-')); // mode 0700
    const path = join(own, ADDON_ASSET);
    writeFileSync(path, bytes, { mode: 0o500 });
    return { path, cleanup: () => rmSync(own, { recursive: true, force: true }) };
  }
  const path = join(dir, `better_sqlite3-${hash.slice(0, 32)}.node`);
  try {
    if (sha256(readFileSync(path)) === hash) return { path };
  } catch {
    // not there yet
  }
  const temp = `${path}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, bytes, { mode: 0o500, flag: 'wx' });
  renameSync(temp, path);
  return { path };
}

let addon: unknown;

/** better-sqlite3's default addon, loaded from the executable's asset (once per process). */
export default function loadAddon(): unknown {
  if (addon) return addon;
  const { path, cleanup } = addonFile(new Uint8Array(getRawAsset(ADDON_ASSET) as ArrayBuffer));
  const module = { exports: {} };
  try {
    process.dlopen(module, path);
  } finally {
    cleanup?.(); // a loaded library stays mapped after its file is gone
  }
  addon = module.exports;
  return addon;
}
