// buildSnapshot(): source folder → validated, derived, checked SQLite file, renamed into place only when complete.
import { createHash } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION, schemaSql, snapshotSchemaVersion } from '../snapshot-format/schema.ts';
import { summaryTemplate } from '../snapshot-format/summary-json.ts';
import { type CheckJob, type CheckResult, PARALLEL_TABLE, runChecks } from './checks.ts';
import { CohortCollector, deriveBeforeIndexes, deriveFromIndexes } from './derive.ts';
import { FullTextBuilder, type FullTextJob } from './fts-worker.ts';
import { type Batch, type Done, ftsBody, type ListingsJob } from './listings-worker.ts';
import { Report, readSource } from './read-source.ts';
import * as S from './source-schema.ts';
import { LISTING_TEXT, TABLES, type TableName, type TableWriter, tableWriter } from './write.ts';

export interface BuildOptions {
  source: string;
  out: string;
  /** Progress and warnings; defaults to stderr. */
  log?: (line: string) => void;
  /** Fixed build time (ISO) for reproducible files in tests; defaults to now. */
  builtAt?: string;
}
export interface BuildResult {
  ok: boolean;
  problems: string[];
  /** How many problems there were (`problems` lists the first 50 and a count of the rest). */
  problemCount?: number;
  warnings: string[];
  snapshotId?: string;
  counts?: Record<string, { read: number; stored: number }>;
  bytes?: number;
  seconds: number;
}

/** The start of the temporary file names of builds of `out` (its folder, then `.NAME.tmp-`), before the pid. */
const tempPrefix = (out: string) => join(dirname(resolve(out)), `.${basename(out)}.tmp-`);
/** The temporary file a build of `out` writes (beside it, so the final rename stays on one file system). */
export const tempPathFor = (out: string, pid = process.pid) => tempPrefix(out) + pid;

/** The full-text worker's file beside a build's temporary file (see fts-worker.ts). */
const fullTextPathFor = (tmp: string) => `${tmp}-fts`;

/** Removes a build's temporary files and their journals (after an interruption or a failure). */
export function removeTemp(tmp: string): void {
  for (const f of [tmp, fullTextPathFor(tmp)])
    for (const g of [f, `${f}-journal`, `${f}-wal`, `${f}-shm`]) {
      try {
        rmSync(g, { force: true });
      } catch {
        /* best effort */
      }
    }
}

/**
 * Removes the temporary files of earlier builds of `out` whose process is gone (killed, or the machine
 * restarted): each can be as large as the snapshot. A build still running keeps its file.
 */
function removeStaleTemps(out: string): void {
  const dir = dirname(resolve(out));
  const prefix = basename(tempPrefix(out));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)(?:-fts)?(?:-journal|-wal|-shm)?$/.exec(name.slice(prefix.length))?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
      continue;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPERM') continue;
    }
    try {
      rmSync(join(dir, name), { force: true });
    } catch {
      /* not ours to remove */
    }
  }
}

/** Why `out` cannot be written or replaced, or null. An existing file must be a snapshot (of any schema version). */
function outProblem(out: string, tmp: string): string | null {
  let parent: ReturnType<typeof statSync>;
  try {
    parent = statSync(dirname(out));
  } catch {
    return 'output folder does not exist';
  }
  if (!parent.isDirectory()) return `${dirname(out)} is not a folder`;
  const reason = (e: unknown) => (e as Error).message.replace(/,.*$/, ''); // "EROFS: read-only file system", without the path
  try {
    accessSync(dirname(out), constants.W_OK);
  } catch (e) {
    return `the folder ${dirname(out)} is not writable (${reason(e)}; the new snapshot is written beside the target, then renamed)`;
  }
  // access() says yes to root whatever the mode, and knows nothing of a read-only mount: create the
  // temporary file itself, so the reason is the system's (SQLite's own error is only "unable to open
  // database file"). Any failure removes it; the build starts it afresh.
  try {
    closeSync(openSync(tmp, 'w'));
  } catch (e) {
    return `cannot create a file in the folder ${dirname(out)} (${reason(e)}; the new snapshot is written beside the target, then renamed)`;
  }
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(out);
  } catch {
    return null;
  }
  if (st.isDirectory()) return 'is a folder; give the path of the snapshot file';
  if (!st.isFile()) return 'exists and is not a regular file';
  if (snapshotSchemaVersion(out) === null)
    return 'exists and is not a snapshot of this service (a key store, or another file?); refusing to replace it: remove it first or choose another --out';
  return null;
}

/** Builds in progress, each with its stop flag (set by stopBuilds). */
const running = new Set<{ stopped: boolean }>();
/** Targets this process has replaced (resolved paths). */
const replaced = new Set<string>();

/**
 * Called first by a signal handler: every running build ends without replacing its target. A signal
 * that arrives during a synchronous stretch of a build (the indexes, ANALYZE, this thread's checks: up to
 * ~10 s each at 1M listings) is only handled when that stretch ends; the build looks at this flag right
 * before the rename, so an interrupted build never replaces its target afterwards.
 */
export function stopBuilds(): void {
  for (const b of running) b.stopped = true;
}
/** Whether this process has already replaced `out` (the interrupted build had finished). */
export const hasReplaced = (out: string): boolean => replaced.has(resolve(out));

export async function buildSnapshot(opts: BuildOptions): Promise<BuildResult> {
  const state = { stopped: false };
  running.add(state);
  try {
    return await build1(opts, state);
  } finally {
    running.delete(state);
  }
}

async function build1(opts: BuildOptions, state: { stopped: boolean }): Promise<BuildResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  // Each phase line carries the process's current resident memory (worker included), for operators sizing a build host.
  const phase = (name: string) =>
    log(`[${elapsed().toFixed(1)}s, rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB] ${name}`);
  const report = new Report();
  const out = resolve(opts.out);
  const tmp = tempPathFor(out);
  const fail = async (extra: string[] = []): Promise<BuildResult> => {
    // A check worker still running is left to finish (terminating a worker inside SQLite can abort the
    // process, see fts-worker.ts); its answer is ignored (checkInWorker) and it ends by itself.
    try {
      db?.close();
    } catch {
      /* already closed */
    }
    await fullText?.discard();
    removeTemp(tmp);
    return {
      ok: false,
      problems: [...report.format(), ...extra],
      problemCount: report.problemCount + extra.length,
      warnings: warningLines(report),
      seconds: elapsed(),
    };
  };

  for (const r of S.RESOURCES) {
    const file = join(opts.source, r.file);
    if (!existsSync(file))
      report.problem({ file: r.file, line: 0, field: '(file)', reason: `missing source file in ${opts.source}` });
    else if (statSync(file).isDirectory())
      report.problem({ file: r.file, line: 0, field: '(file)', reason: 'is a folder, not a file' });
  }
  const outBad = outProblem(out, tmp);
  if (outBad) report.problem({ file: out, line: 0, field: '(out)', reason: outBad });
  let db: Database.Database | undefined;
  let fullText: FullTextBuilder | undefined;
  if (report.failed) return fail();

  removeStaleTemps(out);
  try {
    return await build();
  } catch (e) {
    // Anything unexpected (an unreadable file, a full disk, a failed rename) is one problem line, and the
    // temporary file goes: the target is untouched either way.
    return fail([`${out}:0: (build): ${(e as Error).message}`]);
  }

  async function build(): Promise<BuildResult> {
    removeTemp(tmp);
    db = new Database(tmp);
    db.pragma('page_size = 4096');
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -4096'); // 4 MiB while loading: rows are appended in rid order, so a larger cache buys little
    db.pragma('temp_store = FILE');
    const { tables, indexes } = schemaSql();
    db.exec(tables);

    const hash = createHash('sha256');
    const counts: Record<string, { read: number; stored: number }> = {};
    const missing = new Map<string, Map<string, number>>();
    const noteMissing = (table: string) => (locale: string) => {
      const m = missing.get(table) ?? new Map<string, number>();
      missing.set(table, m.set(locale, (m.get(locale) ?? 0) + 1));
    };

    // What later files may reference.
    const locations = new Map<string, { type: string; parent: string | null; line: number }>();
    const ids = new Map<string, Set<string>>();
    const cohorts = new CohortCollector();
    let heldLocations: Record<string, unknown>[] = [];
    let listingsSorted = true;

    db.exec('BEGIN');
    for (const r of S.RESOURCES) {
      const table = r.name as TableName;
      const writer = tableWriter(db, TABLES[table], noteMissing(table));
      const seen = new Map<string, number>();
      ids.set(table, new Set());
      const file = join(opts.source, r.file);
      phase(`reading ${r.file}`);
      hash.update(`\u0000${r.file}\u0000`);
      // Small resources are held and sorted by id; listings stream in file order and are re-ranked if unsorted.
      const held: Record<string, unknown>[] = [];
      let stored = 0;
      const problem = (line: number, field: string, reason: string) =>
        report.problem({ file: r.file, line, field, reason });
      if (table === 'listings') {
        let res: Done;
        // Outside the try below: a failure to start the full-text worker (its file cannot be created) is the
        // build's problem, not the source file's.
        fullText = new FullTextBuilder(fullTextPathFor(tmp), db, startWorker);
        try {
          res = await loadListings(
            [writer, tableWriter(db!, LISTING_TEXT, noteMissing(table))],
            fullText,
            file,
            r.file,
            [...ids.get('owners')!],
            locations,
            locationText(heldLocations),
            report,
            (n) => log(`  ${r.file}: ${n.toLocaleString('en')} lines`),
            log,
          );
        } catch (e) {
          // Reading the file (the parser thread) is the source's problem; anything else (writing the rows, the
          // full-text worker) is the build's, reported as such by the catch around build().
          if (e instanceof BuildError) throw e.cause;
          problem(0, '(file)', `could not be read: ${(e as Error).message}`);
          break;
        }
        hash.update(res.digest);
        // A zero-byte or blank export would replace every served listing with none: refused, never assumed.
        if (res.read === 0 && !report.failed)
          problem(0, '(file)', 'has no records; refusing to build a snapshot without listings');
        counts.listings = { read: res.read, stored: res.stored };
        cohorts.groups = res.cohorts;
        listingsSorted = res.sorted;
        if (!report.failed && res.sorted) fullText.finish(res.stored);
        else {
          // Re-ranked listings get new rids: their full-text rows are derived again from the table.
          await fullText.discard();
          fullText = undefined;
          if (!report.failed) rerankListings(db);
        }
        log(`  ${r.file}: ${res.read.toLocaleString('en')} valid records, ${res.stored.toLocaleString('en')} stored`);
        continue;
      }
      const ref = (line: number, field: string, target: string, id: unknown) => {
        if (id != null && !ids.get(target)!.has(id as string))
          problem(line, field, `unknown ${target.replace(/s$/, '').replace(/_/g, ' ')} "${id}"`);
      };
      let read = 0;
      try {
        read = await readSource(
          file,
          r.file,
          r.schema as never,
          report,
          hash,
          (rec: Record<string, unknown> & { id: string; published: boolean }, line) => {
            const prior = seen.get(rec.id);
            if (prior !== undefined) {
              problem(line, 'id', `duplicate id "${rec.id}" (first at line ${prior})`);
              return;
            }
            seen.set(rec.id, line);
            ids.get(table)!.add(rec.id);
            switch (table) {
              case 'locations': {
                locations.set(rec.id, { type: rec.type as string, parent: rec.parent_id as string | null, line });
                held.push(rec);
                return;
              }
              case 'internet_plans':
                ref(line, 'provider_id', 'internet_providers', rec.provider_id);
                break;
              case 'insurance_products':
                ref(line, 'provider_id', 'insurance_providers', rec.provider_id);
                break;
              case 'articles':
                ref(line, 'location_id', 'locations', rec.location_id);
                break;
            }
            if (rec.published !== false) held.push(rec);
          },
          (n) => log(`  ${r.file}: ${n.toLocaleString('en')} lines`),
          (id) => ids.get(table)!.add(id),
        );
      } catch (e) {
        problem(0, '(file)', `could not be read: ${(e as Error).message}`);
        break;
      }

      if (table === 'locations') checkLocationTree(locations, (line, field, reason) => problem(line, field, reason));
      if (!report.failed) {
        held.sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : 1));
        held.forEach((rec, i) => {
          writer.insert(i + 1, table === 'locations' ? { ...rec, depth: depthOf(rec.type as string) } : rec);
        });
        stored = held.length;
        if (table === 'locations') heldLocations = held;
      }
      counts[table] = { read, stored };
      log(`  ${r.file}: ${read.toLocaleString('en')} valid records, ${stored.toLocaleString('en')} stored`);
    }
    if (report.failed) {
      db.exec('ROLLBACK');
      return fail();
    }
    for (const [table, m] of missing) {
      report.warn(
        `${table}: records lacking some translation (English is served instead): ${[...m].map(([l, n]) => `${l} ${n}`).join(', ')}`,
        0,
      );
    }

    const snapshotId = `snap_${hash.digest('hex').slice(0, 24)}`;
    db.pragma('cache_size = -16384'); // 16 MiB from here on: also the sort memory of index creation
    phase('deriving: location closure, full-text indexes, market cohorts');
    deriveBeforeIndexes(db, cohorts, fullText !== undefined);
    const meta = db.prepare('INSERT INTO snapshot_meta (key, value) VALUES (?, ?)');
    meta.run('schema_version', String(SCHEMA_VERSION));
    meta.run('snapshot_id', snapshotId);
    meta.run('built_at', opts.builtAt ?? new Date().toISOString());
    meta.run('counts', JSON.stringify(Object.fromEntries(Object.entries(counts).map(([k, c]) => [k, c.stored]))));
    db.exec('COMMIT');

    phase('creating indexes');
    db.exec(indexes);
    // The listings and their indexes are final from here: a worker runs their integrity_check (~11 s at 1M,
    // see runChecks) while this thread writes the rest. WAL lets the worker read while this thread writes;
    // the file goes back to a rollback journal after the checks.
    // Where WAL is not available (the folder's file system has no shared memory for it), the check runs
    // after the writes instead, as it would have without this.
    const wal = db.pragma('journal_mode = WAL', { simple: true }) === 'wal';
    const listingsCheck = wal ? checkInWorker(tmp, PARALLEL_TABLE) : undefined;
    // The column store and the listing statistics are read from the indexes just created (derive.ts).
    phase('deriving from the indexes: column store, listing statistics');
    db.exec('BEGIN');
    deriveFromIndexes(db, fullText !== undefined);
    db.exec('COMMIT');
    if (fullText) {
      phase('copying the listings full-text index');
      await fullText.copyInto(db);
      fullText = undefined;
    }
    phase('analyzing');
    db.exec('ANALYZE');
    // Keep sqlite_stat1 (row counts per index) but not sqlite_stat4: with STAT4 samples SQLite re-plans a
    // statement on every execution whose parameters touch an indexed column (measured: a listing detail
    // lookup 26 µs → 108 µs). Plans that depend on the data distribution are chosen by src/listings/planner.ts
    // from the snapshot's own statistics instead.
    db.exec('DELETE FROM sqlite_stat4');
    phase('checking');
    const problems = await runChecks(db, listingsCheck ?? checkInWorker(tmp, PARALLEL_TABLE));
    if (problems.length) return fail(problems);
    if (wal) {
      // The worker's connection is closed: every page goes from the WAL into the file, then the WAL goes.
      const [cp] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      if (cp.busy !== 0) throw new Error('could not checkpoint the write-ahead log');
      db.pragma('journal_mode = OFF');
    }
    // Rows were written in rid order and indexes built after the load, so the file is already compact;
    // VACUUM (a full rewrite) is only worth it when re-ranking unsorted listings left free pages behind.
    if (!listingsSorted) {
      phase('vacuuming');
      db.exec('VACUUM');
    }
    if (db.pragma('journal_mode = DELETE', { simple: true }) !== 'delete') throw new Error('could not leave WAL mode');
    db.close();
    db = undefined;

    const fd = openSync(tmp, 'r');
    fsyncSync(fd);
    closeSync(fd);
    // A signal that came during the synchronous work above has its handler run by the event loop's next
    // poll phase, and that handler stops this build. Two immediates: resumed from an I/O callback (in the
    // poll phase), one immediate alone would run before the next poll.
    for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
    if (state.stopped)
      return fail([`${out}:0: (interrupted): stopped by a signal before the snapshot replaced the target`]);
    renameSync(tmp, out);
    replaced.add(out);
    const bytes = statSync(out).size;
    return { ok: true, problems: [], warnings: warningLines(report), snapshotId, counts, bytes, seconds: elapsed() };
  }
}

function warningLines(report: Report): string[] {
  return [...report.warnings.keys()].map((k) => `warning: ${k}`);
}

function depthOf(type: string) {
  return type === 'province' ? 0 : type === 'city' ? 1 : 2;
}

type LocInfo = { type: string; parent: string | null; line: number };
const PARENT_TYPE: Record<string, string | null> = { province: null, city: 'province', neighbourhood: 'city' };

/** A province has no parent, a city's parent is a province, a neighbourhood's parent is a city. */
function checkLocationTree(all: Map<string, LocInfo>, problem: (line: number, field: string, reason: string) => void) {
  for (const [id, loc] of all) {
    const want = PARENT_TYPE[loc.type];
    if (want === null) {
      if (loc.parent !== null) problem(loc.line, 'parent_id', `a province has no parent (got "${loc.parent}")`);
      continue;
    }
    if (loc.parent === null) {
      problem(loc.line, 'parent_id', `a ${loc.type} needs a parent ${want}`);
      continue;
    }
    const parent = all.get(loc.parent);
    if (!parent) problem(loc.line, 'parent_id', `unknown location "${loc.parent}"`);
    else if (parent.type !== want)
      problem(
        loc.line,
        'parent_id',
        `the parent of ${loc.type} "${id}" must be a ${want}, "${loc.parent}" is a ${parent.type}`,
      );
  }
}

/** Every name (all locales) of each location and its ancestors: listings are found by q through them. */
function locationText(held: Record<string, unknown>[]): [string, string][] {
  const byId = new Map(held.map((l) => [l.id as string, l]));
  const out: [string, string][] = [];
  for (const l of held) {
    const names: string[] = [];
    for (let cur: Record<string, unknown> | undefined = l; cur; cur = byId.get(cur.parent_id as string)) {
      names.push(...Object.values(cur.name as Record<string, string>));
    }
    out.push([l.id as string, names.join(' ')]);
  }
  return out;
}

/**
 * Runs listings.ndjson through the listings worker (parse, validate, references, cohorts) while this
 * thread turns the records it sends into rows, summaries and full-text bodies and writes them; one
 * acknowledgement per batch keeps at most a few batches in memory.
 */
function loadListings(
  writers: TableWriter[],
  fullText: FullTextBuilder,
  file: string,
  displayName: string,
  ownerIds: string[],
  locations: Map<string, LocInfo>,
  text: [string, string][],
  report: Report,
  progress: (lines: number) => void,
  progressNote: (line: string) => void,
): Promise<Done> {
  const job: ListingsJob = {
    file,
    displayName,
    ownerIds,
    locations: [...locations].map(([id, l]) => [id, l.type, l.parent]),
    failed: report.failed,
  };
  const locationText = new Map(text);
  const worker = startWorker({ kind: 'listings', job });
  let lastProgress = 0;
  // Where the main thread's time goes (rows, full-text bodies); the rest of the phase it waits for the workers.
  let rowsNs = 0n,
    ftsNs = 0n;
  const started = process.hrtime.bigint();
  return new Promise<Done>((resolve, reject) => {
    worker.on('message', (m: Batch | Done) => {
      try {
        onMessage(m);
      } catch (e) {
        // A failed insert (a full disk): a problem line and a clean failure, not an uncaught exception.
        reject(new BuildError(e));
        void worker.terminate();
      }
    });
    const onMessage = (m: Batch | Done) => {
      if (m.type === 'done') {
        const s = (ns: bigint) => (Number(ns) / 1e9).toFixed(1);
        progressNote(
          `  listings: this thread spent ${s(rowsNs)} s on rows, ${s(ftsNs)} s on full-text bodies, ${s(process.hrtime.bigint() - started - rowsNs - ftsNs)} s waiting for the workers`,
        );
        resolve(m);
        void worker.terminate();
        return;
      }
      for (const p of m.problems) report.problem(p);
      if (m.lines - lastProgress >= 100_000) {
        progress(m.lines);
        lastProgress = m.lines;
      }
      if (fullText.error) {
        reject(new BuildError(fullText.error));
        void worker.terminate();
        return;
      }
      if (report.failed) {
        worker.postMessage('ack');
        return;
      }
      const t0 = process.hrtime.bigint();
      // A listing is a row in each writer's table (listings and listing_text, see schema.sql).
      m.recs.forEach((rec, j) => {
        Object.assign(rec, { summary: summaryTemplate(rec) });
        for (const w of writers) w.insert(m.first + j, rec);
      });
      const t1 = process.hrtime.bigint();
      const bodies = m.recs.map((rec) => ftsBody(rec, locationText.get(rec.location_id) ?? ''));
      rowsNs += t1 - t0;
      ftsNs += process.hrtime.bigint() - t1;
      // The parser's next batch waits while the full-text worker is behind (memory stays bounded).
      fullText.send(m.first, bodies, () => worker.postMessage('ack'));
    };
    worker.on('error', reject);
    worker.on('exit', (code) => {
      if (code !== 0) reject(new Error(`listings worker exited with code ${code}`));
    });
  });
}

/** A failure of the build itself during the listings load (not of reading the source file). */
class BuildError extends Error {
  constructor(cause: unknown) {
    super((cause as Error)?.message ?? String(cause), { cause });
  }
}

/** `integrity_check` of one table of the file on a worker thread (see runChecks): its problems. */
export function checkInWorker(file: string, table: string): Promise<string[]> {
  const worker = startWorker({ kind: 'check', file, table });
  const result = new Promise<string[]>((resolve, reject) => {
    worker.once('message', (r: CheckResult) => {
      if ('error' in r) reject(new Error(r.error));
      else resolve(r.problems);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`check worker exited with code ${code}`))); // no-op once settled
  });
  // Collected by runChecks; a build that fails before that ignores the answer (and must not leave it unhandled).
  result.catch(() => {});
  return result;
}

/** Starts a compiler worker (listings-worker.ts: the listings parser, the full-text worker, or a check). */
function startWorker(workerData: { kind: 'listings'; job: ListingsJob } | FullTextJob | CheckJob): Worker {
  // Under tsx (TypeScript sources) the worker needs the same loader; a bundled build runs plain JS.
  const ts = import.meta.url.endsWith('.ts');
  const entry = new URL(ts ? './listings-worker.ts' : './listings-worker.js', import.meta.url).href;
  // The full-text worker holds a few batches of bodies at a time: a small young generation keeps its heap
  // (and the build's peak memory) small.
  const resourceLimits = workerData.kind === 'fts' ? { maxYoungGenerationSizeMb: 4 } : undefined;
  return ts
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`,
        { eval: true, workerData, resourceLimits },
      )
    : new Worker(new URL(entry), { workerData, resourceLimits });
}

/** Listings arrived out of id order: renumber rid so that rid order is id order again. */
function rerankListings(db: Database.Database) {
  db.exec(`
    CREATE TEMP TABLE rid_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
    INSERT INTO rid_map SELECT rid, ROW_NUMBER() OVER (ORDER BY id) FROM listings;
    UPDATE listings SET rid = -rid;
    UPDATE listings SET rid = (SELECT new FROM rid_map WHERE old = -listings.rid);
    UPDATE listing_text SET rid = -rid;
    UPDATE listing_text SET rid = (SELECT new FROM rid_map WHERE old = -listing_text.rid);
    UPDATE listings_i18n SET k = -k, rid = -rid;
    UPDATE listings_i18n SET rid = (SELECT new FROM rid_map WHERE old = -listings_i18n.rid);
    UPDATE listings_i18n SET k = rid * 8 + (-k - (-k / 8) * 8);
    DROP TABLE rid_map;
  `);
}
