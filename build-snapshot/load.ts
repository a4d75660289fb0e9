// The load phase: every source file in order, validated, checked against what came before, written as rows.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { summaryColumns } from '../snapshot-format/summary-json.ts';
import { CohortCollector } from './derive.ts';
import { FullTextBuilder } from './fts-worker.ts';
import { type Batch, type Done, ftsBody, type ListingsJob } from './listings-worker.ts';
import { fullTextPathFor } from './output.ts';
import { type Report, readSource } from './read-source.ts';
import * as S from './source-schema.ts';
import { startWorker } from './workers.ts';
import { LISTING_TABLES, LISTING_TEXT, TABLES, type TableName, type TableWriter, tableWriter } from './write.ts';

/** One build's state, shared by its phases. */
export interface Build {
  source: string;
  tmp: string;
  report: Report;
  log: (line: string) => void;
  /** Logs the start of a phase with the elapsed time and resident memory. */
  phase: (name: string) => void;
  db?: Database.Database;
  fullText?: FullTextBuilder;
}

/** What the load phase leaves for the rest of the build. */
export interface Loaded {
  /** The digest of every source byte: the snapshot id. */
  digest: string;
  counts: Record<string, { read: number; stored: number }>;
  cohorts: CohortCollector;
  /** Listings came in id order (else they were re-ranked, and the file wants a VACUUM). */
  listingsSorted: boolean;
  /** Per table, per locale: records without that translation. */
  missing: Map<string, Map<string, number>>;
}

type LocInfo = { type: string; parent: string | null; line: number };

/**
 * Reads every resource in dependency order into the open transaction of `db`. Problems go to the report
 * (the caller stops when it failed); a failure of the build itself (a full disk) throws.
 */
export async function loadSources(b: Build, db: Database.Database): Promise<Loaded> {
  const { report, log } = b;
  const hash = createHash('sha256');
  const counts: Record<string, { read: number; stored: number }> = {};
  const missing = new Map<string, Map<string, number>>();
  const noteMissing = (table: string) => (locale: string) => {
    const m = missing.get(table) ?? new Map<string, number>();
    missing.set(table, m.set(locale, (m.get(locale) ?? 0) + 1));
  };

  // What later files may reference.
  const locations = new Map<string, LocInfo>();
  const ids = new Map<string, Set<string>>();
  const cohorts = new CohortCollector();
  let heldLocations: Record<string, unknown>[] = [];
  let listingsSorted = true;

  for (const r of S.RESOURCES) {
    const table = r.name as TableName;
    const writer = tableWriter(db, TABLES[table], noteMissing(table));
    const seen = new Map<string, number>();
    ids.set(table, new Set());
    const file = join(b.source, r.file);
    b.phase(`reading ${r.file}`);
    hash.update(`\u0000${r.file}\u0000`);
    const progress = (n: number) => log(`  ${r.file}: ${n.toLocaleString('en')} lines`);
    // Small resources are held and sorted by id; listings stream in file order and are re-ranked if unsorted.
    const held: Record<string, unknown>[] = [];
    let stored = 0;
    const problem = (line: number, field: string, reason: string) =>
      report.problem({ file: r.file, line, field, reason });
    if (table === 'listings') {
      let res: Done;
      // Outside the try below: a failure to start the full-text worker (its file cannot be created) is the
      // build's problem, not the source file's.
      const fullText = new FullTextBuilder(fullTextPathFor(b.tmp), db, startWorker);
      b.fullText = fullText;
      try {
        const writers = [writer, tableWriter(db, LISTING_TEXT, noteMissing(table))];
        const owners = [...(ids.get('owners') ?? [])];
        const text = locationText(heldLocations);
        const broken = [...(ids.get('locations') ?? [])].filter((id) => !locations.has(id));
        res = await loadListings(
          writers,
          fullText,
          file,
          r.file,
          owners,
          locations,
          broken,
          text,
          report,
          progress,
          log,
        );
      } catch (e) {
        // Reading the file (the parser thread) is the source's problem; anything else (writing the rows, the
        // full-text worker) is the build's, reported as such by the build's own catch.
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
        b.fullText = undefined;
        if (!report.failed) rerankListings(db);
      }
      log(`  ${r.file}: ${res.read.toLocaleString('en')} valid records, ${res.stored.toLocaleString('en')} stored`);
      continue;
    }
    const known = (target: string) => ids.get(target) ?? new Set<string>();
    const ref = (line: number, field: string, target: string, id: unknown) => {
      if (id != null && !known(target).has(id as string)) {
        problem(line, field, `unknown ${target.replace(/s$/, '').replace(/_/g, ' ')} "${id}"`);
      }
    };
    const own = known(table);
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
          own.add(rec.id);
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
        progress,
        (id) => own.add(id),
      );
    } catch (e) {
      problem(0, '(file)', `could not be read: ${(e as Error).message}`);
      break;
    }

    if (read === 0 && !report.failed) {
      // A zero-byte or blank export: without locations no listing has a place (one problem, not one a listing);
      // any other resource is served empty, which the operator should know before deploying it.
      if (table === 'locations') {
        problem(0, '(file)', 'has no records; every listing needs its location');
        break;
      }
      report.warn(`${r.file}: has no records (an empty export?); the snapshot serves none`, 0);
    }
    // A parent that is a location line with problems of its own is already reported there (not again as unknown).
    if (table === 'locations') checkLocationTree(locations, own, problem);
    if (!report.failed) {
      held.sort((a, z) => ((a.id as string) < (z.id as string) ? -1 : 1));
      held.forEach((rec, i) => {
        writer.insert(i + 1, table === 'locations' ? { ...rec, depth: depthOf(rec.type as string) } : rec);
      });
      stored = held.length;
      if (table === 'locations') heldLocations = held;
    }
    counts[table] = { read, stored };
    log(`  ${r.file}: ${read.toLocaleString('en')} valid records, ${stored.toLocaleString('en')} stored`);
  }
  return { digest: hash.digest('hex'), counts, cohorts, listingsSorted, missing };
}

function depthOf(type: string) {
  return type === 'province' ? 0 : type === 'city' ? 1 : 2;
}

const PARENT_TYPE: Record<string, string | null> = { province: null, city: 'province', neighbourhood: 'city' };

/** A province has no parent, a city's parent is a province, a neighbourhood's parent is a city. */
function checkLocationTree(
  all: Map<string, LocInfo>,
  ids: Set<string>,
  problem: (line: number, field: string, reason: string) => void,
) {
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
    if (!parent) {
      if (!ids.has(loc.parent)) problem(loc.line, 'parent_id', `unknown location "${loc.parent}"`);
    } else if (parent.type !== want)
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
  brokenLocations: string[],
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
    brokenLocations,
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
      // A listing is a row in each writer's tables (listings, listing_summary and listing_text, see schema.sql).
      m.recs.forEach((rec, j) => {
        Object.assign(rec, summaryColumns(rec));
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

/** Listings arrived out of id order: renumber rid so that rid order is id order again. */
function rerankListings(db: Database.Database) {
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
