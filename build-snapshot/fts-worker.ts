// The listings full-text index, built by a worker thread in a file of its own while the main thread writes
// the listing rows: FTS5's tokenising ran on the main thread after each batch's rows (17.5 of its 42 busy
// seconds at 1M listings). The worker then derives the term tables from it (listing_terms and the term
// bitmaps, ~7 s at 1M) while the main thread derives the rest and creates the indexes, and the main thread
// copies the finished tables into the snapshot (copyFullText).

import { rmSync } from 'node:fs';
import { parentPort, type Worker, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { indexText } from '../snapshot-format/text.ts';
import { deriveTerms } from './text-index.ts';

/** What the worker builds, and the DDL of its tables (taken from the snapshot, so there is one schema). */
export const FULL_TEXT_TABLES = [
  'listings_fts',
  'listings_fts_vocab',
  'listing_terms',
  'listing_term_bitmaps',
] as const;
/** FTS5's own tables behind listings_fts, copied as they are (a SQLite upgrade that adds one fails the build). */
const SHADOW_TABLES = ['listings_fts_config', 'listings_fts_data', 'listings_fts_docsize', 'listings_fts_idx'];
/**
 * FTS5 writes a segment whenever its pending terms exceed this (default 1 MiB): fewer, larger segments to
 * merge (measured on 200k bodies: 1.84 s at 1 MiB, 1.49 s at 16 MiB). 4 MiB keeps the build's peak memory
 * in bounds. Build-time only: not copied into the snapshot.
 */
const HASH_BYTES = 4 << 20;
/** Body batches the main thread may have sent and the worker not yet indexed. */
const MAX_IN_FLIGHT = 4;

export interface FullTextJob {
  kind: 'fts';
  file: string;
  ddl: string[];
  /** Set to 1 by the main thread to stop the worker (see discard). */
  cancel: Int32Array;
}
type ToWorker =
  | { type: 'bodies'; first: number; bodies: string[] }
  | { type: 'finish'; listings: number }
  | { type: 'cancel' };
type FromWorker = 'ack' | 'done';

function run(job: FullTextJob) {
  const port = parentPort!;
  const cancelled = () => Atomics.load(job.cancel, 0) === 1;
  const db = new Database(job.file);
  const stop = () => {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    port.close(); // the thread ends
  };
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -4096'); // 4 MiB: segments are appended, and the build's peak memory is bounded
  for (const sql of job.ddl) db.exec(sql);
  db.prepare("INSERT INTO listings_fts (listings_fts, rank) VALUES ('hashsize', ?)").run(BigInt(HASH_BYTES));
  const insert = db.prepare('INSERT INTO listings_fts (rowid, body) VALUES (?, ?)');
  db.exec('BEGIN');
  port.on('message', (m: ToWorker) => {
    if (cancelled() || m.type === 'cancel') {
      stop();
      return;
    }
    if (m.type === 'bodies') {
      // The same indexText as the query side and the other resources' bodies (snapshot-format/text.ts).
      for (let j = 0; j < m.bodies.length; j++) insert.run(m.first + j, indexText(m.bodies[j]));
      port.postMessage('ack' satisfies FromWorker);
      return;
    }
    db.exec('COMMIT');
    const complete = deriveTerms(db, m.listings, cancelled);
    if (complete) port.postMessage('done' satisfies FromWorker);
    stop();
  });
}

/**
 * The main thread's side: sends bodies in rid order (holding back the caller's next batch while too many
 * are queued), then `finish` starts the term tables; `copyInto` waits for them and copies everything into
 * the snapshot. `discard` stops the worker and removes its file (a failed build, or listings re-ranked).
 *
 * The worker is never terminate()d while it may be inside SQLite: better-sqlite3 then aborts the process
 * (seen as "FATAL ERROR: v8::ToLocalChecked Empty MaybeLocal" when a failed build discarded it). It
 * stops itself between two batches or two terms when asked.
 */
export class FullTextBuilder {
  /** Builders whose worker still runs (stopAll, on an interrupted build). */
  private static readonly running = new Set<FullTextBuilder>();
  private readonly worker: Worker;
  private readonly cancel = new Int32Array(new SharedArrayBuffer(4));
  private inFlight = 0;
  private readonly held: (() => void)[] = [];
  private readonly finished: Promise<void>;
  private readonly exited: Promise<void>;
  private failure: Error | null = null;

  constructor(
    private readonly file: string,
    db: Database.Database,
    start: (data: FullTextJob) => Worker,
  ) {
    const ddl = FULL_TEXT_TABLES.map(
      (name) => db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get(name) as string,
    );
    rmSync(file, { force: true });
    this.worker = start({ kind: 'fts', file, ddl, cancel: this.cancel });
    FullTextBuilder.running.add(this);
    this.exited = new Promise<void>((resolve) =>
      this.worker.once('exit', () => {
        FullTextBuilder.running.delete(this);
        resolve();
      }),
    );
    this.finished = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (m: FromWorker) => {
        if (m === 'done') {
          resolve();
          return;
        }
        this.inFlight--;
        this.held.shift()?.();
      });
      // A failed worker releases the batches held back for it: the load then sees `error` on its next batch
      // instead of waiting for acknowledgements that will never come.
      const release = () => {
        for (const next of this.held.splice(0)) next();
      };
      this.worker.on('error', (e) => {
        this.failure = e;
        reject(e);
        release();
      });
      this.worker.on('exit', (code) => {
        this.failure ??= new Error(
          code === 0 ? 'full-text worker stopped before it finished' : `full-text worker exited with code ${code}`,
        );
        reject(this.failure); // no effect once resolved
        release();
      });
    });
    this.finished.catch(() => {
      /* reported through error / copyInto */
    });
  }

  /** The worker's error, if it failed (the load checks this per batch). */
  get error(): Error | null {
    return this.failure;
  }

  /** Queues the bodies of rids first, first + 1, …; `next` runs once the queue has room again. */
  send(first: number, bodies: string[], next: () => void): void {
    this.worker.postMessage({ type: 'bodies', first, bodies } satisfies ToWorker);
    if (++this.inFlight <= MAX_IN_FLIGHT || this.failure) next();
    else this.held.push(next);
  }

  /** All bodies are sent: commit and derive the term tables (the worker goes on while the caller does). */
  finish(listings: number): void {
    this.worker.postMessage({ type: 'finish', listings } satisfies ToWorker);
  }

  /** Waits for the worker, then copies its tables into `db` (outside a transaction) and removes its file. */
  async copyInto(db: Database.Database): Promise<void> {
    await this.finished;
    await this.exited;
    db.prepare('ATTACH ? AS fulltext').run(this.file);
    try {
      const shadow = db
        .prepare(
          "SELECT name FROM fulltext.sqlite_master WHERE type = 'table' AND name LIKE 'listings\\_fts\\_%' ESCAPE '\\' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name",
        )
        .pluck()
        .all();
      if (shadow.join() !== SHADOW_TABLES.join())
        throw new Error(`unexpected FTS5 tables ${shadow.join(', ')} (expected ${SHADOW_TABLES.join(', ')})`);
      // FTS5's tables are read-only to SQL unless the connection leaves defensive mode (better-sqlite3's
      // unsafeMode), for the copy only. The snapshot's listings_fts is empty and untouched until now.
      db.unsafeMode(true);
      try {
        db.exec('BEGIN');
        for (const t of SHADOW_TABLES) {
          db.exec(
            `DELETE FROM main.${t}; INSERT INTO main.${t} SELECT * FROM fulltext.${t}${t === 'listings_fts_config' ? " WHERE k <> 'hashsize'" : ''}`,
          );
        }
        for (const t of ['listing_terms', 'listing_term_bitmaps'])
          db.exec(`INSERT INTO main.${t} SELECT * FROM fulltext.${t}`);
        db.exec('COMMIT');
      } finally {
        if (db.inTransaction) db.exec('ROLLBACK');
        db.unsafeMode(false);
      }
    } finally {
      db.exec('DETACH fulltext');
      rmSync(this.file, { force: true });
    }
  }

  /** Stops every running worker and removes its file: before the process exits on a signal. */
  static async stopAll(): Promise<void> {
    await Promise.all([...FullTextBuilder.running].map((b) => b.discard()));
  }

  /** Stops the worker (after its current batch, term or statement) and removes its file. */
  async discard(): Promise<void> {
    Atomics.store(this.cancel, 0, 1);
    this.worker.postMessage({ type: 'cancel' } satisfies ToWorker); // wakes a worker waiting for bodies
    await this.exited;
    rmSync(this.file, { force: true });
  }
}

if (parentPort && workerData?.kind === 'fts') run(workerData as FullTextJob);
