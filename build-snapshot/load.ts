// The load phase: every source file in order, validated, checked against what came before, written as rows.
// The listings' part is load-listings.ts; the location tree's checks are location-tree.ts.
import { createHash, type Hash } from 'node:crypto';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { CohortCollector } from './cohorts.ts';
import { FullTextBuilder } from './fts-worker.ts';
import { BuildError, loadListings, rerankListings } from './load-listings.ts';
import { checkLocationTree, depthOf, type LocInfo, locationText } from './location-tree.ts';
import { fullTextPathFor } from './output.ts';
import { type Report, readSource } from './read-source.ts';
import * as S from './source-schema.ts';
import { LISTING_TEXT, TABLES, type TableName } from './tables.ts';
import { startWorker } from './workers.ts';
import { type TableWriter, tableWriter } from './write.ts';

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

/** The load so far, and what later files may reference. */
interface LoadState extends Omit<Loaded, 'digest'> {
  b: Build;
  db: Database.Database;
  hash: Hash;
  locations: Map<string, LocInfo>;
  /** Per table, the ids read (valid or not: a reference to an invalid record is not reported again). */
  ids: Map<string, Set<string>>;
  heldLocations: Record<string, unknown>[];
}

/** One source file being loaded: its table, its writer and how it reports. */
interface FileLoad {
  table: TableName;
  displayName: string;
  path: string;
  writer: TableWriter;
  progress: (lines: number) => void;
  problem: (line: number, field: string, reason: string) => void;
}

type Resource = (typeof S.RESOURCES)[number];

/**
 * Reads every resource in dependency order into the open transaction of `db`. Problems go to the report
 * (the caller stops when it failed); a failure of the build itself (a full disk) throws.
 */
export async function loadSources(b: Build, db: Database.Database): Promise<Loaded> {
  const s: LoadState = {
    b,
    db,
    hash: createHash('sha256'),
    counts: {},
    missing: new Map(),
    cohorts: new CohortCollector(),
    listingsSorted: true,
    locations: new Map(),
    ids: new Map(),
    heldLocations: [],
  };
  for (const r of S.RESOURCES) {
    const f = startFile(s, r);
    // Small resources are held and sorted by id; listings stream in file order and are re-ranked if unsorted.
    const go = f.table === 'listings' ? await loadListingsFile(s, f) : await loadResource(s, r, f);
    if (!go) break;
  }
  const { hash, counts, cohorts, listingsSorted, missing } = s;
  return { digest: hash.digest('hex'), counts, cohorts, listingsSorted, missing };
}

/** Records each translation a record of `table` lacks. */
function noteMissing(s: LoadState, table: string) {
  return (locale: string) => {
    const m = s.missing.get(table) ?? new Map<string, number>();
    s.missing.set(table, m.set(locale, (m.get(locale) ?? 0) + 1));
  };
}

function startFile(s: LoadState, r: Resource): FileLoad {
  const table = r.name as TableName;
  const writer = tableWriter(s.db, TABLES[table], noteMissing(s, table));
  s.ids.set(table, new Set());
  s.b.phase(`reading ${r.file}`);
  s.hash.update(`\u0000${r.file}\u0000`);
  return {
    table,
    displayName: r.file,
    path: join(s.b.source, r.file),
    writer,
    progress: (n: number) => s.b.log(`  ${r.file}: ${n.toLocaleString('en')} lines`),
    problem: (line: number, field: string, reason: string) => s.b.report.problem({ file: r.file, line, field, reason }),
  };
}

/** listings.ndjson, through the listings worker (load-listings.ts). False: the load stops here. */
async function loadListingsFile(s: LoadState, f: FileLoad): Promise<boolean> {
  const { b, db } = s;
  const report = b.report;
  // Outside the try below: a failure to start the full-text worker (its file cannot be created) is the
  // build's problem, not the source file's.
  const fullText = new FullTextBuilder(fullTextPathFor(b.tmp), db, startWorker);
  b.fullText = fullText;
  let res: Awaited<ReturnType<typeof loadListings>>;
  try {
    res = await loadListings({
      writers: [f.writer, tableWriter(db, LISTING_TEXT, noteMissing(s, f.table))],
      fullText,
      file: f.path,
      displayName: f.displayName,
      ownerIds: [...(s.ids.get('owners') ?? [])],
      locations: s.locations,
      brokenLocations: [...(s.ids.get('locations') ?? [])].filter((id) => !s.locations.has(id)),
      text: locationText(s.heldLocations),
      report,
      progress: f.progress,
      note: b.log,
    });
  } catch (e) {
    // Reading the file (the parser thread) is the source's problem; anything else (writing the rows, the
    // full-text worker) is the build's, reported as such by the build's own catch.
    if (e instanceof BuildError) throw e.cause;
    f.problem(0, '(file)', `could not be read: ${(e as Error).message}`);
    return false;
  }
  s.hash.update(res.digest);
  // A zero-byte or blank export would replace every served listing with none: refused, never assumed.
  if (res.read === 0 && !report.failed)
    f.problem(0, '(file)', 'has no records; refusing to build a snapshot without listings');
  s.counts.listings = { read: res.read, stored: res.stored };
  s.cohorts.groups = res.cohorts;
  s.listingsSorted = res.sorted;
  if (!report.failed && res.sorted) fullText.finish(res.stored);
  else {
    // Re-ranked listings get new rids: their full-text rows are derived again from the table.
    await fullText.discard();
    b.fullText = undefined;
    if (!report.failed) rerankListings(db);
  }
  b.log(
    `  ${f.displayName}: ${res.read.toLocaleString('en')} valid records, ${res.stored.toLocaleString('en')} stored`,
  );
  return true;
}

/**
 * A small resource: every record checked against what came before, then (when nothing failed) held records
 * sorted by id and written. False: the load stops here.
 */
async function loadResource(s: LoadState, r: Resource, f: FileLoad): Promise<boolean> {
  const { report, log } = s.b;
  const { table, problem } = f;
  const own = s.ids.get(table)!;
  const held: Record<string, unknown>[] = [];
  let read = 0;
  try {
    const onRecord = takeRecord(s, f, own, held);
    read = await readSource(f.path, f.displayName, r.schema as never, report, s.hash, onRecord, f.progress, (id) =>
      own.add(id),
    );
  } catch (e) {
    problem(0, '(file)', `could not be read: ${(e as Error).message}`);
    return false;
  }
  if (read === 0 && !report.failed) {
    // A zero-byte or blank export: without locations no listing has a place (one problem, not one a listing);
    // any other resource is served empty, which the operator should know before deploying it.
    if (table === 'locations') {
      problem(0, '(file)', 'has no records; every listing needs its location');
      return false;
    }
    report.warn(`${f.displayName}: has no records (an empty export?); the snapshot serves none`, 0);
  }
  // A parent that is a location line with problems of its own is already reported there (not again as unknown).
  if (table === 'locations') checkLocationTree(s.locations, own, problem);
  let stored = 0;
  if (!report.failed) {
    held.sort((a, z) => ((a.id as string) < (z.id as string) ? -1 : 1));
    held.forEach((rec, i) => {
      f.writer.insert(i + 1, table === 'locations' ? { ...rec, depth: depthOf(rec.type as string) } : rec);
    });
    stored = held.length;
    if (table === 'locations') s.heldLocations = held;
  }
  s.counts[table] = { read, stored };
  log(`  ${f.displayName}: ${read.toLocaleString('en')} valid records, ${stored.toLocaleString('en')} stored`);
  return true;
}

/** The check of one valid record of a small resource: a duplicate id, an unknown reference; held when published. */
function takeRecord(s: LoadState, f: FileLoad, own: Set<string>, held: Record<string, unknown>[]) {
  const { table, problem } = f;
  const seen = new Map<string, number>();
  const known = (target: string) => s.ids.get(target) ?? new Set<string>();
  const ref = (line: number, field: string, target: string, id: unknown) => {
    if (id != null && !known(target).has(id as string)) {
      problem(line, field, `unknown ${target.replace(/s$/, '').replace(/_/g, ' ')} "${id}"`);
    }
  };
  return (rec: Record<string, unknown> & { id: string; published: boolean }, line: number) => {
    const prior = seen.get(rec.id);
    if (prior !== undefined) {
      problem(line, 'id', `duplicate id "${rec.id}" (first at line ${prior})`);
      return;
    }
    seen.set(rec.id, line);
    own.add(rec.id);
    switch (table) {
      case 'locations': {
        s.locations.set(rec.id, { type: rec.type as string, parent: rec.parent_id as string | null, line });
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
  };
}
