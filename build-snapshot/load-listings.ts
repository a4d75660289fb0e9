// The listings' part of the load: listings.ndjson through the listings worker (parse, validate, references,
// cohorts) while this thread writes the rows and feeds the full-text worker; re-ranking when ids came unsorted.
import type Database from 'better-sqlite3';
import { summaryColumns } from '../snapshot-format/summary-json.ts';
import type { FullTextBuilder } from './fts-worker.ts';
import { type Batch, type Done, ftsBody, type ListingsJob } from './listings-worker.ts';
import type { LocInfo } from './location-tree.ts';
import type { Report } from './read-source.ts';
import { LISTING_TABLES } from './tables.ts';
import { startWorker } from './workers.ts';
import type { TableWriter } from './write.ts';

/** What the listings' load reads from what came before it, and where it writes. */
export interface ListingsLoad {
  /** One writer per table a listing is a row in (listings, listing_summary and listing_text, see schema.sql). */
  writers: TableWriter[];
  fullText: FullTextBuilder;
  file: string;
  displayName: string;
  ownerIds: string[];
  locations: Map<string, LocInfo>;
  /** Ids of location lines that had problems of their own. */
  brokenLocations: string[];
  /** Each location's names and its ancestors' (locationText). */
  text: [string, string][];
  report: Report;
  progress: (lines: number) => void;
  note: (line: string) => void;
}

/** A failure of the build itself during the listings load (not of reading the source file). */
export class BuildError extends Error {
  constructor(cause: unknown) {
    super((cause as Error)?.message ?? String(cause), { cause });
  }
}

/** This thread's side of the load: progress reported so far, and where its time went. */
interface Writing {
  lastProgress: number;
  // Where the main thread's time goes (rows, full-text bodies); the rest of the phase it waits for the workers.
  rowsNs: bigint;
  ftsNs: bigint;
  started: bigint;
  locationText: Map<string, string>;
}

/**
 * Reports a batch's problems and, while nothing failed, writes its rows and sends its full-text bodies; `ack`
 * asks the worker for the next batch. Throws a failed insert (a full disk) or the full-text worker's error.
 */
function writeBatch(p: ListingsLoad, w: Writing, m: Batch, ack: () => void) {
  const { report, fullText } = p;
  for (const problem of m.problems) report.problem(problem);
  if (m.lines - w.lastProgress >= 100_000) {
    p.progress(m.lines);
    w.lastProgress = m.lines;
  }
  if (fullText.error) throw fullText.error;
  if (report.failed) {
    ack();
    return;
  }
  const t0 = process.hrtime.bigint();
  m.recs.forEach((rec, j) => {
    Object.assign(rec, summaryColumns(rec));
    for (const writer of p.writers) writer.insert(m.first + j, rec);
  });
  const t1 = process.hrtime.bigint();
  const bodies = m.recs.map((rec) => ftsBody(rec, w.locationText.get(rec.location_id) ?? ''));
  w.rowsNs += t1 - t0;
  w.ftsNs += process.hrtime.bigint() - t1;
  // The parser's next batch waits while the full-text worker is behind (memory stays bounded).
  fullText.send(m.first, bodies, ack);
}

/** The phase's time on this thread: rows, full-text bodies, and waiting. */
function timing(w: Writing) {
  const s = (ns: bigint) => (Number(ns) / 1e9).toFixed(1);
  const waiting = process.hrtime.bigint() - w.started - w.rowsNs - w.ftsNs;
  return `  listings: this thread spent ${s(w.rowsNs)} s on rows, ${s(w.ftsNs)} s on full-text bodies, ${s(waiting)} s waiting for the workers`;
}

/**
 * Runs listings.ndjson through the listings worker while this thread turns the records it sends into rows,
 * summaries and full-text bodies and writes them; one acknowledgement per batch keeps at most a few batches
 * in memory. A failure of the build itself rejects with a BuildError; anything else is reading the file.
 */
export function loadListings(p: ListingsLoad): Promise<Done> {
  const job: ListingsJob = {
    file: p.file,
    displayName: p.displayName,
    ownerIds: p.ownerIds,
    locations: [...p.locations].map(([id, l]) => [id, l.type, l.parent]),
    brokenLocations: p.brokenLocations,
    failed: p.report.failed,
  };
  const worker = startWorker({ kind: 'listings', job });
  const w: Writing = {
    lastProgress: 0,
    rowsNs: 0n,
    ftsNs: 0n,
    started: process.hrtime.bigint(),
    locationText: new Map(p.text),
  };
  return new Promise<Done>((resolve, reject) => {
    worker.on('message', (m: Batch | Done) => {
      try {
        if (m.type === 'batch') {
          writeBatch(p, w, m, () => worker.postMessage('ack'));
          return;
        }
        p.note(timing(w));
        resolve(m);
        void worker.terminate();
      } catch (e) {
        // A failed insert (a full disk): a problem line and a clean failure, not an uncaught exception.
        reject(new BuildError(e));
        void worker.terminate();
      }
    });
    worker.on('error', reject);
    worker.on('exit', (code) => {
      if (code !== 0) reject(new Error(`listings worker exited with code ${code}`));
    });
  });
}

/** Listings arrived out of id order: renumber rid so that rid order is id order again. */
export function rerankListings(db: Database.Database) {
  db.exec(`
    CREATE TEMP TABLE rid_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
    INSERT INTO rid_map SELECT rid, ROW_NUMBER() OVER (ORDER BY id) FROM listings;
    ${LISTING_TABLES.map(
      (t) => `UPDATE ${t} SET rid = -rid;
    UPDATE ${t} SET rid = (SELECT new FROM rid_map WHERE old = -${t}.rid);`,
    ).join('\n    ')}
    UPDATE listings_i18n SET k = -k, rid = -rid;
    UPDATE listings_i18n SET rid = (SELECT new FROM rid_map WHERE old = -listings_i18n.rid);
    UPDATE listings_i18n SET k = rid * 8 + (-k - (-k / 8) * 8);
    DROP TABLE rid_map;
  `);
}
