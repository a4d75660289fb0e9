// Worker thread for listings.ndjson: read, hash, parse, validate, check references, accumulate cohorts, and
// send the records to store. The main thread turns them into rows and writes them, so parsing and SQLite
// run on two cores.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import * as v from 'valibot';
import { CohortCollector } from './derive.ts';
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

async function run(job: ListingsJob) {
  const port = parentPort!;
  let credits = MAX_IN_FLIGHT;
  let wake: (() => void) | null = null;
  port.on('message', () => {
    credits++;
    wake?.();
    wake = null;
  });
  const owners = new Set(job.ownerIds);
  const locations = new Map(job.locations.map(([id, type, parent]) => [id, { type, parent }]));
  const brokenLocations = new Set(job.brokenLocations);
  const seen = new IdIndex();
  const cohorts = new CohortCollector();
  const hash = createHash('sha256');
  let failed = job.failed;
  let read = 0,
    stored = 0,
    lineNo = 0,
    lastId = '',
    sorted = true;
  let batch: Batch = { type: 'batch', first: 1, recs: [], problems: [], lines: 0 };

  const flush = async () => {
    batch.lines = lineNo;
    while (credits === 0) await new Promise<void>((r) => (wake = r));
    credits--;
    port.postMessage(batch);
    batch = { type: 'batch', first: stored + 1, recs: [], problems: [], lines: 0 };
  };
  const problem = (field: string, reason: string) => {
    failed = true;
    batch.problems.push({ file: job.displayName, line: lineNo, field, reason });
  };

  let utf8 = true; // the current chunk's complete lines were valid UTF-8
  const onLine = (text: string) => {
    if (text.trim() === '') return;
    if (!utf8 && text.includes('\ufffd')) {
      problem('(record)', NOT_UTF8);
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      problem('(record)', malformed(text, lineNo, e));
      return;
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      problem('(record)', 'expected a JSON object');
      return;
    }
    const result = v.safeParse(ListingSource, raw);
    if (!result.success) {
      for (const d of describeIssues(result.issues)) problem(d.field, d.reason);
      return;
    }
    read++;
    const rec = result.output;
    const prior = seen.firstLine(rec.id, lineNo);
    if (prior !== undefined) {
      problem('id', `duplicate id "${rec.id}" (first at line ${prior})`);
      return;
    }
    if (rec.owner_id != null && !owners.has(rec.owner_id)) problem('owner_id', `unknown owner "${rec.owner_id}"`);
    const loc = locations.get(rec.location_id);
    if (!loc) {
      if (!brokenLocations.has(rec.location_id)) problem('location_id', `unknown location "${rec.location_id}"`);
      return;
    }
    if (loc.type === 'province') {
      problem('location_id', `"${rec.location_id}" is a province; a listing lies in a city or neighbourhood`);
      return;
    }
    if (failed) return; // keep validating for more problems, but build nothing that will be thrown away
    const h = hierarchyOf(rec.location_id, locations);
    if (rec.offer_type === 'rent' && rec.published)
      cohorts.add(h.city_id, rec.first_seen_at, rec.price_eur, rec.size_m2);
    if (!(rec.offer_type === 'rent' && rec.active && rec.published)) return;
    if (rec.id <= lastId) sorted = false;
    lastId = rec.id;
    stored++;
    // Rows, summary JSON and full-text body are built by the main thread, which otherwise waits for this
    // one: at 1M listings that moved ~11 s off the bottleneck.
    batch.recs.push(Object.assign(rec, h));
  };

  // Each 4 MiB chunk is decoded once and split into lines as strings (a newline byte never occurs inside a
  // UTF-8 sequence; the decoder carries a character cut at a chunk's end): a Buffer slice and decode per
  // line cost ~3.5 µs more. TextDecoder decodes 2.8 times as fast as StringDecoder here (809 against
  // 291 MB/s on this source); ignoreBOM keeps a byte-order mark in the text, as the other files are read.
  const fd = openSync(job.file, 'r');
  const chunk = Buffer.allocUnsafe(4 << 20);
  const chunks = new ChunkLines(hash);
  /** Takes one line; true when the batch is full (awaited only then: an await per line costs ~0.4 µs). */
  const take = (line: { text: string | typeof OVERLONG; utf8: boolean }): boolean => {
    lineNo++;
    utf8 = line.utf8;
    if (line.text === OVERLONG) problem('(record)', OVERLONG_REASON);
    else onLine(line.text);
    return batch.recs.length >= BATCH || batch.problems.length >= BATCH;
  };
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      for (const line of chunks.push(chunk.subarray(0, n))) if (take(line)) await flush();
    }
    for (const line of chunks.end()) if (take(line)) await flush();
  } finally {
    closeSync(fd);
  }
  await flush();
  const done: Done = {
    type: 'done',
    digest: hash.digest('hex'),
    read,
    stored,
    sorted,
    cohorts: cohorts.groups,
  };
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
