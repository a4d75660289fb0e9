// buildSnapshot(): source folder → validated, derived, checked SQLite file, renamed into place only when complete.
// Phases: preflight → create → load (load.ts) → derive → index → derive from the indexes → check → publish (output.ts).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION, schemaSql } from '../snapshot-format/schema.ts';
import { type ChangeSummary, type Previous, readPrevious, recordChanges } from './changes.ts';
import { PARALLEL_TABLE, runChecks } from './checks.ts';
import { deriveBeforeIndexes, deriveFromIndexes } from './derive.ts';
import { type Build, type Loaded, loadSources } from './load.ts';
import { outProblem, publish, removeStaleTemps, removeTemp, running, tempPathFor } from './output.ts';
import { Report } from './read-source.ts';
import * as S from './source-schema.ts';
import { checkInWorker } from './workers.ts';

export interface BuildOptions {
  source: string;
  out: string;
  /** Progress and warnings; defaults to stderr. */
  log?: (line: string) => void;
  /** Fixed build time (ISO) for reproducible files in tests; defaults to now. */
  builtAt?: string;
  /** The previous snapshot: the change feed records what changed since it and carries its history forward. */
  previous?: string;
  /** Steps of change history kept (default CHANGE_HISTORY_STEPS). */
  historySteps?: number;
}
export interface BuildResult {
  ok: boolean;
  problems: string[];
  /** How many problems there were (`problems` lists the first 50 and a count of the rest). */
  problemCount?: number;
  warnings: string[];
  snapshotId?: string;
  counts?: Record<string, { read: number; stored: number }>;
  /** With `previous`: the history's length and the new step's changes per resource. */
  changes?: ChangeSummary;
  bytes?: number;
  seconds: number;
}

/**
 * The snapshot id: the same source built into the same layout gives the same id (and rows). The layout's version is
 * part of it, so a compiler that answers the same source differently (a new schema version) makes a new id, and
 * with it new ETags: a client's tag from the old answers never gets a 304 for a changed one.
 */
export function snapshotIdOf(sourceDigest: string): string {
  return `snap_${createHash('sha256').update(`schema ${SCHEMA_VERSION}\n${sourceDigest}`).digest('hex').slice(0, 24)}`;
}

export async function buildSnapshot(opts: BuildOptions): Promise<BuildResult> {
  const state = { stopped: false };
  running.add(state);
  try {
    return await run(opts, state);
  } finally {
    running.delete(state);
  }
}

async function run(opts: BuildOptions, state: { stopped: boolean }): Promise<BuildResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const out = resolve(opts.out);
  const b: Build = {
    source: opts.source,
    tmp: tempPathFor(out),
    report: new Report(),
    log,
    // Each phase line carries the process's resident memory (workers included), for operators sizing a build host.
    phase: (name) =>
      log(`[${elapsed().toFixed(1)}s, rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB] ${name}`),
  };
  const fail = async (extra: string[] = []): Promise<BuildResult> => {
    // A check worker still running is left to finish (terminating a worker inside SQLite can abort the
    // process, see fts-worker.ts); its answer is ignored (checkInWorker) and it ends by itself.
    try {
      b.db?.close();
    } catch {
      /* already closed */
    }
    await b.fullText?.discard();
    removeTemp(b.tmp);
    const problems = [...b.report.format(), ...extra];
    return {
      ok: false,
      problems,
      problemCount: b.report.problemCount + extra.length,
      warnings: warningLines(b.report),
      seconds: elapsed(),
    };
  };

  preflight(b, opts.source, out);
  const previous = opts.previous === undefined ? undefined : readPrevious(resolve(opts.previous));
  if (typeof previous === 'string')
    b.report.problem({ file: opts.previous!, line: 0, field: '(previous)', reason: previous });
  if (b.report.failed) return fail();
  removeStaleTemps(out);
  try {
    const db = createFile(b);
    db.exec('BEGIN');
    const loaded = await loadSources(b, db);
    if (b.report.failed) {
      db.exec('ROLLBACK');
      return fail();
    }
    warnMissing(b, loaded);
    const snapshotId = snapshotIdOf(loaded.digest);
    derive(b, db, loaded, snapshotId, opts.builtAt ?? new Date().toISOString());
    db.exec('COMMIT');
    const changes =
      typeof previous === 'object' ? changesSince(b, db, previous, snapshotId, opts.historySteps) : undefined;
    const listingsCheck = createIndexes(b, db);
    await deriveFromTheIndexes(b, db);
    const problems = await runChecks(db, listingsCheck ?? checkInWorker(b.tmp, PARALLEL_TABLE));
    if (problems.length) return fail(problems);
    closeFile(b, db, listingsCheck !== undefined, loaded.listingsSorted);
    if (!(await publish(b.tmp, out, state))) {
      return fail([`${out}:0: (interrupted): stopped by a signal before the snapshot replaced the target`]);
    }
    const bytes = statSync(out).size;
    return {
      ok: true,
      problems: [],
      warnings: warningLines(b.report),
      snapshotId,
      counts: loaded.counts,
      ...(changes ? { changes } : {}),
      bytes,
      seconds: elapsed(),
    };
  } catch (e) {
    // Anything unexpected (an unreadable file, a full disk, a failed rename) is one problem line, and the
    // temporary file goes: the target is untouched either way.
    return fail([`${out}:0: (build): ${buildFailure(e as Error)}`]);
  }
}

/**
 * An unexpected failure's message. SQLite's "disk I/O error" is a write the system refused for a reason other than
 * a full disk (which SQLite reports as "database or disk is full"): most often a file-size limit.
 */
function buildFailure(e: Error): string {
  if (e.message !== 'disk I/O error') return e.message;
  return 'disk I/O error (a write was refused: a file-size limit such as ulimit -f, or a failing disk or file system)';
}

/** Every source file is there and the target can be written or replaced; problems go to the report. */
function preflight(b: Build, source: string, out: string): void {
  const folder = !existsSync(source)
    ? 'the source folder does not exist'
    : !statSync(source).isDirectory()
      ? 'is not a folder (--source names the folder of the .ndjson files)'
      : null;
  if (folder !== null) b.report.problem({ file: source, line: 0, field: '(source)', reason: folder });
  else {
    for (const r of S.RESOURCES) {
      const file = join(source, r.file);
      if (!existsSync(file)) {
        b.report.problem({ file: r.file, line: 0, field: '(file)', reason: `missing source file in ${source}` });
      } else if (statSync(file).isDirectory()) {
        b.report.problem({ file: r.file, line: 0, field: '(file)', reason: 'is a folder, not a file' });
      }
    }
    // An export under a name the compiler does not read (owner.ndjson for owners.ndjson) would go unseen.
    const known = new Set<string>(S.RESOURCES.map((r) => r.file));
    for (const f of readdirSync(source)
      .filter((f) => f.endsWith('.ndjson') && !known.has(f))
      .sort())
      b.report.warn(`${f}: not a source file of the snapshot, not read (the files are ${[...known].join(', ')})`, 0);
  }
  const outBad = outProblem(out, b.tmp);
  if (outBad) b.report.problem({ file: out, line: 0, field: '(out)', reason: outBad });
}

/** The temporary file with the schema's tables, set up for a fast bulk load (no journal: it is thrown away on failure). */
function createFile(b: Build): Database.Database {
  removeTemp(b.tmp);
  const db = new Database(b.tmp);
  b.db = db;
  db.pragma('page_size = 4096');
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -4096'); // 4 MiB while loading: rows are appended in rid order, so a larger cache buys little
  db.pragma('temp_store = FILE');
  db.exec(schemaSql().tables);
  return db;
}

function warnMissing(b: Build, loaded: Loaded): void {
  for (const [table, m] of loaded.missing) {
    const counts = [...m].map(([l, n]) => `${l} ${n}`).join(', ');
    b.report.warn(`${table}: records lacking some translation (English is served instead): ${counts}`, 0);
  }
}

/** The tables derived from the loaded rows, and the snapshot's identity. */
function derive(b: Build, db: Database.Database, loaded: Loaded, snapshotId: string, builtAt: string): void {
  db.pragma('cache_size = -16384'); // 16 MiB from here on: also the sort memory of index creation
  b.phase('deriving: location closure, full-text indexes, market cohorts');
  deriveBeforeIndexes(db, loaded.cohorts, b.fullText !== undefined);
  const meta = db.prepare('INSERT INTO snapshot_meta (key, value) VALUES (?, ?)');
  meta.run('schema_version', String(SCHEMA_VERSION));
  meta.run('snapshot_id', snapshotId);
  meta.run('built_at', builtAt);
  meta.run('counts', JSON.stringify(Object.fromEntries(Object.entries(loaded.counts).map(([k, c]) => [k, c.stored]))));
  db.pragma(`user_version = ${headerStamp(snapshotId, builtAt)}`);
}

/** The change feed's step from the previous snapshot, and its history carried forward. */
function changesSince(
  b: Build,
  db: Database.Database,
  previous: Previous,
  snapshotId: string,
  steps: number | undefined,
): ChangeSummary {
  b.phase(`comparing with the previous snapshot ${previous.snapshotId}`);
  return recordChanges(db, previous, snapshotId, steps);
}

/**
 * 32 bits of the build's identity for the file header's user_version: the server tells a file written over the
 * one it serves by its size or its first 100 bytes (src/snapshot/source.ts), and two builds can have the same
 * size and otherwise the same header (the same page count and number of write transactions).
 */
export function headerStamp(snapshotId: string, builtAt: string): number {
  return createHash('sha256').update(`${snapshotId}\n${builtAt}`).digest().readInt32BE(0);
}

/**
 * Creates the indexes. The listings and their indexes are final from here: a worker runs their
 * integrity_check (~11 s at 1M, see runChecks) while this thread writes the rest, reading beside the
 * writer through WAL; the file goes back to a rollback journal after the checks. Where WAL is not
 * available (the folder's file system has no shared memory for it), the check runs after the writes.
 */
function createIndexes(b: Build, db: Database.Database): Promise<string[]> | undefined {
  b.phase('creating indexes');
  db.exec(schemaSql().indexes);
  const wal = db.pragma('journal_mode = WAL', { simple: true }) === 'wal';
  return wal ? checkInWorker(b.tmp, PARALLEL_TABLE) : undefined;
}

/** The column store and listing statistics (read from the new indexes), the listings' full text, ANALYZE. */
async function deriveFromTheIndexes(b: Build, db: Database.Database): Promise<void> {
  b.phase('deriving from the indexes: column store, listing statistics');
  db.exec('BEGIN');
  deriveFromIndexes(db, b.fullText !== undefined);
  db.exec('COMMIT');
  if (b.fullText) {
    b.phase('copying the listings full-text index');
    await b.fullText.copyInto(db);
    b.fullText = undefined;
  }
  b.phase('analyzing');
  db.exec('ANALYZE');
  // Keep sqlite_stat1 (row counts per index) but not sqlite_stat4: with STAT4 samples SQLite re-plans a
  // statement on every execution whose parameters touch an indexed column (a listing detail lookup
  // 26 µs → 108 µs). Plans that depend on the data distribution are chosen by the server's planner
  // from the snapshot's own statistics instead.
  db.exec('DELETE FROM sqlite_stat4');
  b.phase('checking');
}

/** Back to one file with a rollback journal (what the server opens read-only), compact, closed. */
function closeFile(b: Build, db: Database.Database, wal: boolean, listingsSorted: boolean): void {
  if (wal) {
    // The worker's connection is closed: every page goes from the WAL into the file, then the WAL goes.
    const [cp] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (cp.busy !== 0) throw new Error('could not checkpoint the write-ahead log');
    db.pragma('journal_mode = OFF');
  }
  // Rows were written in rid order and indexes built after the load, so the file is already compact;
  // VACUUM (a full rewrite) is only worth it when re-ranking unsorted listings left free pages behind.
  if (!listingsSorted) {
    b.phase('vacuuming');
    db.exec('VACUUM');
  }
  if (db.pragma('journal_mode = DELETE', { simple: true }) !== 'delete') throw new Error('could not leave WAL mode');
  db.close();
  b.db = undefined;
}

function warningLines(report: Report): string[] {
  return [...report.warnings.keys()].map((k) => `warning: ${k}`);
}
