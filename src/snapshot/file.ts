// Opening a snapshot file, the one way the server, the follower and the operator's tools do it: read-only, with a
// one-line reason naming the file when it is not a usable snapshot.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { aboutTheFile } from '../../snapshot-format/schema.ts';

/**
 * A file that is not a usable snapshot: missing, not SQLite, cut short, damaged, of another layout, or changed
 * while it was checked. The message names the file and the reason, in the operator's words.
 */
export class SnapshotError extends Error {}

/**
 * The first `bytes` bytes of the file (of SQLite's 100-byte header), or null when it is shorter. Throws the open's
 * error (ENOENT, EACCES, EISDIR…).
 */
export function readHead(path: string, bytes: number): Buffer | null {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(bytes);
    return readSync(fd, head, 0, bytes, 0) === bytes ? head : null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Why an SQLite file in WAL mode is not a snapshot, or null for any other file (read from its header, before
 * SQLite opens it: opening a WAL file creates -wal and -shm files beside it). The compiler writes the rollback
 * journal's format; a WAL snapshot was switched by hand, and is no longer one file a copy or a rename moves whole.
 * `name` is what the message calls the file (the path an operator knows, when `path` is a link to it).
 */
export function walModeProblem(path: string, name = path): string | null {
  let header: Buffer | null;
  try {
    header = readHead(path, 20);
  } catch {
    return null; // unreadable: SQLite's open names the reason
  }
  if (header === null || header.toString('latin1', 0, 16) !== 'SQLite format 3\u0000') return null;
  if (header[18] !== 2 && header[19] !== 2) return null;
  return `${name} is in WAL mode (switched by hand?): a snapshot is one file in rollback-journal mode; rebuild it, or run sqlite3 ${name} 'PRAGMA journal_mode=DELETE'`;
}

export interface FileMeta {
  file: string;
  snapshot_id: string | null;
  built_at: string | null;
  schema_version: number | null;
  /** The `counts` of snapshot_meta (records stored per resource), or null when absent or not JSON. */
  counts: Record<string, number> | null;
}

/**
 * What makes the file at `path` no snapshot before SQLite opens it, in the operator's words, or null: no file, a
 * folder, a file that cannot be read, or one shorter than its SQLite header says (a copy that did not finish:
 * SQLite would first call it malformed, or read on until a query failed).
 */
export function fileProblem(path: string): string | null {
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory()) return 'it is a folder, not a snapshot file';
    size = st.size;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'there is no file at this path' : (e as Error).message;
  }
  let header: Buffer | null;
  try {
    header = readHead(path, 100);
  } catch (e) {
    return (e as Error).message; // EACCES: permission denied, …
  }
  if (header === null || header.toString('latin1', 0, 16) !== 'SQLite format 3\0') return null; // SQLite names it
  const pageSize = header.readUInt16BE(16) === 1 ? 65536 : header.readUInt16BE(16);
  const expected = pageSize * header.readUInt32BE(28);
  return size < expected ? `it is truncated (${size} of ${expected} bytes)` : null;
}

/** How a snapshot file is opened: what messages call it, and the connection's settings. */
export interface OpenOptions {
  /** What messages call the file (the path an operator knows, when the file opened is a link to it). */
  name?: string;
  /** better-sqlite3's busy timeout (ms). */
  timeout?: number;
  nativeBinding?: string;
  /** Run on the connection before snapshot_meta is read (its pragmas; a check that may throw SnapshotError). */
  setup?: (db: Database.Database) => void;
}

const sizeOf = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return null; // gone meanwhile: SQLite's open names it
  }
};

/** Why the file is no snapshot before SQLite opens it (folder, missing, empty, cut short, WAL mode), or null. */
function beforeOpen(path: string, name: string): string | null {
  const problem = fileProblem(path);
  if (problem !== null) return `cannot open snapshot ${name}: ${problem}`;
  if (sizeOf(path) === 0) return `cannot open snapshot ${name}: it is empty, not a snapshot`;
  return walModeProblem(path, name); // before SQLite opens it (it would add -wal and -shm files)
}

/** snapshot_meta as key → value; SQLite's word on a file that is not one, as the operator's. */
function metaRows(db: Database.Database, name: string): Map<string, string> {
  try {
    const rows = db.prepare('SELECT key, value FROM snapshot_meta').all() as { key: string; value: string }[];
    return new Map(rows.map((r) => [r.key, r.value]));
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'SQLITE_NOTADB') throw new SnapshotError(`${name} is not an SQLite database, not a snapshot`);
    if (code === 'SQLITE_CORRUPT')
      throw new SnapshotError(`${name} is damaged (${(e as Error).message}): not readable as a snapshot`);
    if (!aboutTheFile(e)) throw e;
    throw new SnapshotError(`${name} is not a snapshot (no snapshot_meta table: ${(e as Error).message})`);
  }
}

function fileMeta(m: Map<string, string>, path: string, name: string): FileMeta {
  let counts: Record<string, number> | null = null;
  try {
    const c = JSON.parse(m.get('counts') ?? 'null');
    if (c && typeof c === 'object') counts = c;
  } catch {
    // reported by inspect as a count mismatch
  }
  const version = m.get('schema_version');
  const meta: FileMeta = {
    file: path,
    snapshot_id: m.get('snapshot_id') ?? null,
    built_at: m.get('built_at') ?? null,
    schema_version: version === undefined || !/^\d+$/.test(version) ? null : Number(version),
    counts,
  };
  if (meta.snapshot_id === null || meta.schema_version === null)
    throw new SnapshotError(`${name} is not a snapshot (snapshot_meta lacks snapshot_id or schema_version)`);
  return meta;
}

/**
 * Opens `path` read-only (`query_only` too: nothing that opens a snapshot ever writes it) and reads its
 * snapshot_meta. Throws SnapshotError naming the file and the reason when it is missing or not a snapshot; a
 * failure that is not the file's (a native addon that does not load) is thrown as it is.
 */
export function openSnapshotFile(path: string, opts: OpenOptions = {}): { db: Database.Database; meta: FileMeta } {
  const name = opts.name ?? path;
  const problem = beforeOpen(path, name);
  if (problem !== null) throw new SnapshotError(problem);
  let db: Database.Database;
  try {
    db = new Database(path, {
      readonly: true,
      fileMustExist: true,
      ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
      ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}),
    });
  } catch (e) {
    if (!aboutTheFile(e)) throw e;
    throw new SnapshotError(`cannot open snapshot ${name}: ${(e as Error).message}`);
  }
  try {
    db.pragma('query_only = 1');
    opts.setup?.(db);
    return { db, meta: fileMeta(metaRows(db, name), path, name) };
  } catch (e) {
    db.close();
    throw e;
  }
}
