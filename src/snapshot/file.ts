// Opening a snapshot file for the operator's tools: read-only, with a one-line reason when it is not a snapshot.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { aboutTheFile } from '../../snapshot-format/schema.ts';

/** A file that cannot be read as a snapshot (missing, not SQLite, no snapshot_meta): exit status 1. */
export class SnapshotFileError extends Error {}

export { COMPANIONS, RESOURCES } from '../../snapshot-format/resources.ts';

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

/**
 * Opens `path` read-only (`query_only` too: nothing here ever writes) and reads its snapshot_meta. Throws
 * SnapshotFileError naming the file and the reason when it is missing or not a snapshot.
 */
export function openSnapshotFile(path: string): { db: Database.Database; meta: FileMeta } {
  let size: number;
  try {
    const s = statSync(path);
    if (s.isDirectory()) throw new SnapshotFileError(`${path} is a directory, not a snapshot file`);
    size = s.size;
  } catch (e) {
    if (e instanceof SnapshotFileError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new SnapshotFileError(code === 'ENOENT' ? `${path}: no such file` : `${path}: ${(e as Error).message}`);
  }
  if (size === 0) throw new SnapshotFileError(`${path} is empty, not a snapshot`);
  const problem = fileProblem(path); // a file this process may not read, or a copy cut short: before SQLite's word
  if (problem !== null) throw new SnapshotFileError(`cannot open ${path}: ${problem}`);
  const wal = walModeProblem(path);
  if (wal !== null) throw new SnapshotFileError(wal);
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (e) {
    if (!aboutTheFile(e)) throw e;
    throw new SnapshotFileError(`cannot open ${path}: ${(e as Error).message}`);
  }
  try {
    db.pragma('query_only = 1');
    let rows: { key: string; value: string }[];
    try {
      rows = db.prepare('SELECT key, value FROM snapshot_meta').all() as typeof rows;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'SQLITE_NOTADB') throw new SnapshotFileError(`${path} is not an SQLite database, not a snapshot`);
      if (code === 'SQLITE_CORRUPT')
        throw new SnapshotFileError(`${path} is damaged (${(e as Error).message}): not readable as a snapshot`);
      if (!aboutTheFile(e)) throw e;
      throw new SnapshotFileError(`${path} is not a snapshot (no snapshot_meta table: ${(e as Error).message})`);
    }
    const m = new Map(rows.map((r) => [r.key, r.value]));
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
      throw new SnapshotFileError(`${path} is not a snapshot (snapshot_meta lacks snapshot_id or schema_version)`);
    return { db, meta };
  } catch (e) {
    db.close();
    throw e;
  }
}

/** The names of a table's columns in `schema` ('main' or an attached name); empty when it has no such table. */
export function columnsOf(db: Database.Database, schema: string, table: string): string[] {
  return db.prepare('SELECT name FROM pragma_table_info(?, ?) ORDER BY cid').pluck().all(table, schema) as string[];
}

/** A quoted SQL identifier. */
export const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
