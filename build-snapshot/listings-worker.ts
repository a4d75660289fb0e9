// Worker thread for listings.ndjson: read, hash, parse, validate, check references, accumulate cohorts, and
// send the records to store. The main thread turns them into rows and writes them, so parsing and SQLite
// run on two cores.
import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import * as v from 'valibot';
import { CohortCollector } from './cohorts.ts';
import { IdIndex } from './id-index.ts';
import {
  ChunkLines,
  describeIssues,
  malformed,
  NOT_UTF8,
  OVERLONG,
  OVERLONG_REASON,
  type Problem,
} from './read-source.ts';
import { ListingSource } from './source-schema.ts';
// One worker entry for every kind of compiler worker (the bundle ships one worker file): this one, kind
// 'listings', the full-text worker, kind 'fts', and the integrity check of one table, kind 'check'.
import './fts-worker.ts';
import './checks.ts';

export interface ListingsJob {
  file: string;
  displayName: string;
  ownerIds: string[];
  /** id → [type, parent id] */
  locations: [string, string, string | null][];
  /** Ids of location lines that had problems of their own: a listing in one is not reported again. */
  brokenLocations: string[];
  /** Earlier files already failed: validate only, build nothing. */
  failed: boolean;
}
/** A stored listing: the validated record plus its location hierarchy (city_id, province_id, neighbourhood_id). */
export type StoredListing = v.InferOutput<typeof ListingSource> & ReturnType<typeof hierarchyOf>;
/** `first`: the rid of recs[0]; the others follow in order. */
export interface Batch {
  type: 'batch';
  first: number;
  recs: StoredListing[];
  problems: Problem[];
  lines: number;
}
export interface Done {
  type: 'done';
  digest: string;
  read: number;
  stored: number;
  sorted: boolean;
  cohorts: CohortCollector['groups'];
}

const BATCH = 500;
const MAX_IN_FLIGHT = 4;

/** One pass over listings.ndjson: what was read so far, the batch being filled, and the main thread's credits. */
interface Run {
  job: ListingsJob;
  port: MessagePort;
  credits: number;
  wake: (() => void) | null;
  owners: Set<string>;
  locations: Map<string, { type: string; parent: string | null }>;
  brokenLocations: Set<string>;
  seen: IdIndex;
  cohorts: CohortCollector;
  hash: Hash;
  failed: boolean;
  read: number;
  stored: number;
  lineNo: number;
  lastId: string;
  sorted: boolean;
  /** The current chunk's complete lines were valid UTF-8. */
  utf8: boolean;
  batch: Batch;
}

function startRun(job: ListingsJob, port: MessagePort): Run {
  const r: Run = {
    job,
    port,
    credits: MAX_IN_FLIGHT,
    wake: null,
    owners: new Set(job.ownerIds),
    locations: new Map(job.locations.map(([id, type, parent]) => [id, { type, parent }])),
    brokenLocations: new Set(job.brokenLocations),
    seen: new IdIndex(),
    cohorts: new CohortCollector(),
    hash: createHash('sha256'),
    failed: job.failed,
    read: 0,
    stored: 0,
    lineNo: 0,
    lastId: '',
    sorted: true,
    utf8: true,
    batch: { type: 'batch', first: 1, recs: [], problems: [], lines: 0 },
  };
  // The main thread acknowledges each batch it has written: one credit back.
  port.on('message', () => {
    r.credits++;
    r.wake?.();
    r.wake = null;
  });
  return r;
}

/** Sends the batch, first waiting while MAX_IN_FLIGHT batches are unacknowledged. */
async function flush(r: Run) {
  r.batch.lines = r.lineNo;
  while (r.credits === 0) await new Promise<void>((resolve) => (r.wake = resolve));
  r.credits--;
  r.port.postMessage(r.batch);
  r.batch = { type: 'batch', first: r.stored + 1, recs: [], problems: [], lines: 0 };
}

function problem(r: Run, field: string, reason: string) {
  r.failed = true;
  r.batch.problems.push({ file: r.job.displayName, line: r.lineNo, field, reason });
}

/** Takes one line; true when the batch is full (awaited only then: an await per line costs ~0.4 µs). */
function take(r: Run, line: { text: string | typeof OVERLONG; utf8: boolean }): boolean {
  r.lineNo++;
  r.utf8 = line.utf8;
  if (line.text === OVERLONG) problem(r, '(record)', OVERLONG_REASON);
  else onLine(r, line.text);
  return r.batch.recs.length >= BATCH || r.batch.problems.length >= BATCH;
}

/** A line's record, validated against the schema; undefined (and a problem) when it is not one. */
function parse(r: Run, text: string): v.InferOutput<typeof ListingSource> | undefined {
  if (!r.utf8 && text.includes('\ufffd')) {
    problem(r, '(record)', NOT_UTF8);
    return;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    problem(r, '(record)', malformed(text, r.lineNo, e));
    return;
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problem(r, '(record)', 'expected a JSON object');
    return;
  }
  const result = v.safeParse(ListingSource, raw);
  if (!result.success) {
    for (const d of describeIssues(result.issues)) problem(r, d.field, d.reason);
    return;
  }
  return result.output;
}

function onLine(r: Run, text: string) {
  if (text.trim() === '') return;
  const rec = parse(r, text);
  if (rec === undefined) return;
  r.read++;
  const prior = r.seen.firstLine(rec.id, r.lineNo);
  if (prior !== undefined) {
    problem(r, 'id', `duplicate id "${rec.id}" (first at line ${prior})`);
    return;
  }
  if (rec.owner_id != null && !r.owners.has(rec.owner_id)) problem(r, 'owner_id', `unknown owner "${rec.owner_id}"`);
  const loc = r.locations.get(rec.location_id);
  if (!loc) {
    if (!r.brokenLocations.has(rec.location_id)) problem(r, 'location_id', `unknown location "${rec.location_id}"`);
    return;
  }
  if (loc.type === 'province') {
    problem(r, 'location_id', `"${rec.location_id}" is a province; a listing lies in a city or neighbourhood`);
    return;
  }
  if (r.failed) return; // keep validating for more problems, but build nothing that will be thrown away
  accept(r, rec);
}

/** A valid listing: counted in its cohort; stored (sent to the main thread) when active, published and for rent. */
function accept(r: Run, rec: v.InferOutput<typeof ListingSource>) {
  const h = hierarchyOf(rec.location_id, r.locations);
  if (rec.offer_type === 'rent' && rec.published)
    r.cohorts.add(h.city_id, rec.first_seen_at, rec.price_eur, rec.size_m2);
  if (!(rec.offer_type === 'rent' && rec.active && rec.published)) return;
  if (rec.id <= r.lastId) r.sorted = false;
  r.lastId = rec.id;
  r.stored++;
  // Rows, summary JSON and full-text body are built by the main thread, which otherwise waits for this
  // one: at 1M listings that moved ~11 s off the bottleneck.
  r.batch.recs.push(Object.assign(rec, h));
}

async function run(job: ListingsJob) {
  const port = parentPort!;
  const r = startRun(job, port);
  // Each 4 MiB chunk is decoded once and split into lines as strings (a newline byte never occurs inside a
  // UTF-8 sequence; the decoder carries a character cut at a chunk's end): a Buffer slice and decode per
  // line cost ~3.5 µs more. TextDecoder decodes 2.8 times as fast as StringDecoder here (809 against
  // 291 MB/s on this source); ignoreBOM keeps a byte-order mark in the text, as the other files are read.
  const fd = openSync(job.file, 'r');
  const chunk = Buffer.allocUnsafe(4 << 20);
  const chunks = new ChunkLines(r.hash);
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      for (const line of chunks.push(chunk.subarray(0, n))) if (take(r, line)) await flush(r);
    }
    for (const line of chunks.end()) if (take(r, line)) await flush(r);
  } finally {
    closeSync(fd);
  }
  await flush(r);
  const { read, stored, sorted } = r;
  const done: Done = { type: 'done', digest: r.hash.digest('hex'), read, stored, sorted, cohorts: r.cohorts.groups };
  port.postMessage(done);
}

/** Title and description in every locale, street, postcode and the location's names: what q searches. */
export function ftsBody(rec: v.InferOutput<typeof ListingSource>, locationText: string): string {
  const parts: string[] = [];
  for (const text of [rec.title, rec.description])
    if (text) for (const value of Object.values(text)) parts.push(value as string);
  parts.push(rec.street ?? '', rec.postcode ?? '', locationText);
  return parts.join(' ');
}

export function hierarchyOf(locationId: string, all: Map<string, { type: string; parent: string | null }>) {
  const h: { neighbourhood_id: string | null; city_id: string; province_id: string | null } = {
    neighbourhood_id: null,
    city_id: '',
    province_id: null,
  };
  let id: string | null = locationId;
  while (id) {
    const loc = all.get(id);
    if (!loc) break; // a broken tree was reported while reading locations
    if (loc.type === 'neighbourhood') h.neighbourhood_id = id;
    else if (loc.type === 'city') h.city_id = id;
    else h.province_id = id;
    id = loc.parent;
  }
  return h;
}

if (parentPort && workerData?.kind === 'listings') {
  run(workerData.job as ListingsJob).catch((e) => {
    throw e;
  });
}
