// The tables the operator's tools read in a snapshot: the resources and their companion tables, a table's columns.
import type Database from 'better-sqlite3';

export { COMPANIONS, RESOURCES } from '../../snapshot-format/resources.ts';

/** The names of a table's columns in `schema` ('main' or an attached name); empty when it has no such table. */
export function columnsOf(db: Database.Database, schema: string, table: string): string[] {
  return db.prepare('SELECT name FROM pragma_table_info(?, ?) ORDER BY cid').pluck().all(table, schema) as string[];
}

/** A quoted SQL identifier. */
export const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
