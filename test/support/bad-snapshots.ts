// Snapshot files a service must refuse, each made from a good snapshot (read, never changed) into a temp file.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../../snapshot-format/schema.ts';
import { tempDir } from './files.ts';

/** The first `bytes` of a good snapshot (`head -c 4096 snapshot.db > bad.db`): a copy cut short. */
export function truncatedCopy(good: string, bytes = 4096, file = join(tempDir(), 'truncated.db')): string {
  writeFileSync(file, readFileSync(good).subarray(0, bytes));
  return file;
}

/** A copy of a good snapshot with one page in the middle overwritten: it opens, but quick_check fails. */
export function damagedCopy(good: string): string {
  const file = join(tempDir(), 'damaged.db');
  const bytes = Buffer.from(readFileSync(good));
  const db = new Database(good, { readonly: true });
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  // A page of the listings table's b-tree: its root page, so the damage is where quick_check walks.
  const root = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'listings'").pluck().get() as number;
  db.close();
  bytes.fill(0x5a, (root - 1) * pageSize + 8, root * pageSize - 8);
  writeFileSync(file, bytes);
  return file;
}

/** A copy of a good snapshot switched to WAL mode (its header says so), with no -wal or -shm file left. */
export function walCopy(good: string): string {
  const file = join(tempDir(), 'wal.db');
  copyFileSync(good, file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.close();
  assert.ok(!existsSync(`${file}-wal`) && !existsSync(`${file}-shm`));
  return file;
}

/** A copy of a good snapshot whose schema_version is one this server does not read. */
export function wrongVersionCopy(good: string): string {
  const file = join(tempDir(), 'other-version.db');
  copyFileSync(good, file);
  const db = new Database(file);
  db.prepare("UPDATE snapshot_meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION + 1));
  db.close();
  return file;
}

/** An SQLite file that is not a snapshot. */
export function otherSqlite(): string {
  const file = join(tempDir(), 'other.db');
  const db = new Database(file);
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('hello')");
  db.close();
  return file;
}
