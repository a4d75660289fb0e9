// The snapshot's schema: its version, its SQL (schema.sql beside this file) and reading the version of a file.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getAsset, isSea } from 'node:sea';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

/** The layout version written by the compiler and required by the server; bump it with any change to schema.sql. */
export const SCHEMA_VERSION = 15;

/** The name of schema.sql inside the single executable. */
export const SCHEMA_ASSET = 'schema.sql';

/** schema.sql split at its index marker: tables are created before the load, indexes after it. */
export function schemaSql(): { tables: string; indexes: string } {
  // Beside this module, beside the bundled program that inlined it (scripts/bundle.ts copies the file), or
  // inside the single executable (scripts/sea.ts).
  const sql = isSea()
    ? getAsset(SCHEMA_ASSET, 'utf8')
    : readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'schema.sql'), 'utf8');
  const marker = sql.indexOf('-- ==== INDEXES');
  return { tables: sql.slice(0, marker), indexes: sql.slice(marker) };
}

/**
 * Whether an error of opening or reading a database says something about the file (SQLite's own errors,
 * a folder that does not exist): anything else (the native addon failed to load) is the real error.
 */
export const aboutTheFile = (e: unknown): boolean =>
  String((e as { code?: unknown })?.code ?? '').startsWith('SQLITE_') ||
  /directory does not exist/.test(String((e as Error)?.message));

/** The schema version recorded in a snapshot file, or null when it cannot be read as a snapshot. */
export function snapshotSchemaVersion(path: string): number | null {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const v = db.prepare("SELECT value FROM snapshot_meta WHERE key = 'schema_version'").pluck().get();
    return v === undefined ? null : Number(v);
  } catch (e) {
    if (aboutTheFile(e)) return null;
    throw e;
  } finally {
    db?.close();
  }
}
