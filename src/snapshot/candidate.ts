// A replacement snapshot file's checks, run once by the owner before any process opens it.
import { fileProblem, SnapshotError, walModeProblem } from './file.ts';
import { quickCheck } from './quick-check.ts';
import { identity, linkServed, type ServedFile, sameFile, unlinkServed } from './served-file.ts';

/**
 * The file at `path` (identity `id` when it was seen) linked beside it and checked: a whole file, not in WAL mode,
 * passing quick_check (off the event loop), and unchanged meanwhile. The inode checked is the inode served,
 * whatever the path names later. `degraded` is told when no link could be kept (the path itself is then served,
 * checked by inode). Throws a SnapshotError (the operator's reason), leaving no link behind.
 */
export async function checkedCandidate(
  path: string,
  id: string,
  nativeBinding: string | undefined,
  degraded: (c: ServedFile & { why?: string }) => void,
): Promise<ServedFile & { why?: string }> {
  const problem = fileProblem(path);
  if (problem !== null) throw new SnapshotError(`cannot open snapshot ${path}: ${problem}`);
  let cand: ServedFile & { why?: string };
  try {
    cand = linkServed(path);
  } catch (e) {
    throw new SnapshotError(`cannot open snapshot ${path}: ${(e as Error).message}`);
  }
  try {
    if (!cand.linked) degraded(cand);
    if (!sameFile(identity(cand.file), id)) throw new SnapshotError(`${path} changed while it was checked`);
    const wal = walModeProblem(cand.file, path);
    if (wal !== null) throw new SnapshotError(wal);
    const damage = await quickCheck(cand.file, nativeBinding);
    if (damage !== null) throw new SnapshotError(`${path} fails quick_check: ${damage}`);
    if (identity(cand.file) !== id) throw new SnapshotError(`${path} changed while it was checked`);
    return cand;
  } catch (e) {
    unlinkServed(cand);
    throw e;
  }
}
