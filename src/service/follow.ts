// SNAPSHOT_FOLLOW's settings turned into a Follower for the one owner of the service (a single process, or a
// cluster's primary): the publisher's key read, the folder of SNAPSHOT_PATH checked, the spread delay derived from
// the instance's name, and what the follower installs into (the process's snapshot source, or the primary's owner,
// which tells its workers).
import type { Worker } from 'node:cluster';
import { accessSync, constants, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { Config } from '../config.ts';
import type { Log } from '../log.ts';
import { Follower, type FollowSettings, type FollowState, type FollowTarget, spreadDelay } from '../snapshot/follow.ts';
import { servedMeta } from '../snapshot/follow-install.ts';
import { loadPublicKey } from '../snapshot/follow-verify.ts';
import type { SnapshotOwner } from '../snapshot/owner.ts';
import type { SnapshotSource } from '../snapshot/source.ts';
import type { ToWorker } from './protocol.ts';

/** The publisher's key from SNAPSHOT_FOLLOW_PUBLIC_KEY (a .pub file, or the RW… key itself); throws naming it. */
function publicKey(setting: string) {
  try {
    return loadPublicKey(setting);
  } catch (e) {
    throw new Error(`SNAPSHOT_FOLLOW_PUBLIC_KEY: no minisign public key in ${setting} (${(e as Error).message})`);
  }
}

/** The folder the follower downloads into (beside SNAPSHOT_PATH): it must exist and be writable. */
function writableFolder(path: string): void {
  const folder = dirname(path);
  try {
    if (!statSync(folder).isDirectory()) throw new Error('not a folder');
    accessSync(folder, constants.W_OK);
  } catch (e) {
    throw new Error(
      `SNAPSHOT_PATH: following a publication downloads into ${folder}, which must be a folder this user can write to (${(e as Error).message})`,
    );
  }
}

/** How to follow `config.SNAPSHOT_FOLLOW`, or null when not following; throws, naming the setting, on a bad one. */
export function followSettings(config: Config): FollowSettings | null {
  if (config.SNAPSHOT_FOLLOW === undefined) return null;
  const key = publicKey(config.SNAPSHOT_FOLLOW_PUBLIC_KEY!);
  writableFolder(config.SNAPSHOT_PATH);
  const instance = config.SNAPSHOT_FOLLOW_INSTANCE ?? process.env.HOSTNAME ?? hostname();
  return {
    url: config.SNAPSHOT_FOLLOW,
    key,
    intervalMs: config.SNAPSHOT_FOLLOW_INTERVAL_MS,
    header: config.SNAPSHOT_FOLLOW_HEADER,
    staleMs: config.SNAPSHOT_FOLLOW_STALE_MS,
    delayMs: spreadDelay(instance, config.SNAPSHOT_FOLLOW_SPREAD_MS),
  };
}

function startFollowing(
  settings: FollowSettings,
  target: FollowTarget,
  log: Log,
  changed: (state: FollowState) => void,
): Follower {
  const follower = new Follower(settings, target, { log, changed });
  changed(follower.state);
  follower.start();
  return follower;
}

/** A single process follows into its own snapshot source (null when not following); a bad setting closes it and throws. */
export function followInProcess(config: Config, snapshots: SnapshotSource, log: Log): Follower | null {
  const target: FollowTarget = {
    path: snapshots.path,
    served: () => {
      const s = snapshots.peek();
      const file = snapshots.servedFile;
      return s && file ? { snapshot_id: s.meta.snapshot_id, built_at: s.meta.built_at, file } : null;
    },
    install: () => snapshots.refresh(),
    refusedBecause: () => snapshots.candidate?.reason,
  };
  try {
    const settings = followSettings(config);
    return settings && startFollowing(settings, target, log, (state) => (snapshots.follow = { ...state }));
  } catch (e) {
    snapshots.close();
    throw e;
  }
}

/** A cluster's primary follows into its owner and tells every ready worker the state (for /readyz). */
export function followInPrimary(
  settings: FollowSettings,
  path: string,
  owner: SnapshotOwner,
  log: Log,
  workers: () => Worker[],
) {
  let state: FollowState | null = null;
  const tell = (w: Worker) => {
    try {
      if (state) w.send({ nlr: 'follow-state', state } satisfies ToWorker);
    } catch {
      /* its channel just closed */
    }
  };
  const target: FollowTarget = {
    path,
    served: () => (owner.file.inode === '' ? null : servedMeta(owner.file.file, owner.file.inode)),
    install: () => owner.refresh(),
    refusedBecause: () => owner.candidate?.reason,
  };
  const follower = startFollowing(settings, target, log, (s) => {
    state = { ...s };
    for (const w of workers()) tell(w);
  });
  /** `tell(w)`: a worker that just became ready learns the state too. */
  return { follower, state: () => state, tell };
}
