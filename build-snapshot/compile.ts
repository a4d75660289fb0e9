// buildSnapshot(): source folder → validated, derived, checked SQLite file, renamed into place only when complete.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, statSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import * as S from './source-schema.ts';
import { Report, readSource } from './read-source.ts';
import { TABLES, tableWriter, type TableName } from './write.ts';
import { CohortCollector, deriveAll } from './derive.ts';
import { runChecks } from './checks.ts';

export const SCHEMA_VERSION = 1;
const SCHEMA_PATH = join(dirname(fileURLToPath(import.meta.url)), 'schema.sql');

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
  warnings: string[];
  snapshotId?: string;
  counts?: Record<string, { read: number; stored: number }>;
  bytes?: number;
  seconds: number;
}

export function splitSchema(): { tables: string; indexes: string } {
  const sql = readFileSync(SCHEMA_PATH, 'utf8');
  const marker = sql.indexOf('-- ==== INDEXES');
  return { tables: sql.slice(0, marker), indexes: sql.slice(marker) };
}

export async function buildSnapshot(opts: BuildOptions): Promise<BuildResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const phase = (name: string) => log(`[${elapsed().toFixed(1)}s] ${name}`);
  const report = new Report();
  const out = resolve(opts.out);
  const tmp = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  const fail = (extra: string[] = []): BuildResult => {
    try { db?.close(); } catch { /* already closed */ }
    rmSync(tmp, { force: true });
    rmSync(tmp + '-journal', { force: true });
    return { ok: false, problems: [...report.format(), ...extra], warnings: warningLines(report), seconds: elapsed() };
  };

  for (const r of S.RESOURCES) {
    if (!existsSync(join(opts.source, r.file))) report.problem({ file: r.file, line: 0, field: '(file)', reason: `missing source file in ${opts.source}` });
  }
  if (!existsSync(dirname(out))) report.problem({ file: out, line: 0, field: '(out)', reason: 'output folder does not exist' });
  let db: Database.Database | undefined;
  if (report.failed) return fail();

  rmSync(tmp, { force: true });
  db = new Database(tmp);
  db.pragma('page_size = 4096');
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -131072'); // 128 MiB
  db.pragma('temp_store = FILE');
  const { tables, indexes } = splitSchema();
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
    let lastListingId = '';
    let listingsSorted = true;
    const problem = (line: number, field: string, reason: string) => report.problem({ file: r.file, line, field, reason });
    const ref = (line: number, field: string, target: string, id: unknown) => {
      if (id != null && !ids.get(target)!.has(id as string)) problem(line, field, `unknown ${target.replace(/s$/, '').replace(/_/g, ' ')} "${id}"`);
    };
    const read = await readSource(file, r.file, r.schema as never, report, hash, (rec: Record<string, unknown> & { id: string; published: boolean }, line) => {
      const prior = seen.get(rec.id);
      if (prior !== undefined) { problem(line, 'id', `duplicate id "${rec.id}" (first at line ${prior})`); return; }
      seen.set(rec.id, line);
      ids.get(table)!.add(rec.id);
      switch (table) {
        case 'locations': {
          locations.set(rec.id, { type: rec.type as string, parent: rec.parent_id as string | null, line });
          held.push(rec);
          return;
        }
        case 'listings': {
          ref(line, 'owner_id', 'owners', rec.owner_id);
          const loc = locations.get(rec.location_id as string);
          if (!loc) { problem(line, 'location_id', `unknown location "${rec.location_id}"`); return; }
          if (loc.type === 'province') { problem(line, 'location_id', `"${rec.location_id}" is a province; a listing lies in a city or neighbourhood`); return; }
          if (report.failed) return; // no point writing rows that will be thrown away
          const hierarchy = hierarchyOf(rec.location_id as string, locations);
          if (rec.offer_type === 'rent' && rec.published) cohorts.add(hierarchy.city_id, rec.first_seen_at as string, rec.price_eur as number | null, rec.size_m2 as number | null);
          if (!(rec.offer_type === 'rent' && rec.active && rec.published)) return;
          if (rec.id <= lastListingId) listingsSorted = false;
          lastListingId = rec.id;
          stored++;
          writer.insert(stored, { ...rec, ...hierarchy });
          return;
        }
        case 'internet_plans': ref(line, 'provider_id', 'internet_providers', rec.provider_id); break;
        case 'insurance_products': ref(line, 'provider_id', 'insurance_providers', rec.provider_id); break;
        case 'articles': ref(line, 'location_id', 'locations', rec.location_id); break;
      }
      if (rec.published !== false) held.push(rec);
    }, (n) => log(`  ${r.file}: ${n.toLocaleString('en')} lines`), (id) => ids.get(table)!.add(id));

    if (table === 'locations') checkLocationTree(held, locations, (line, field, reason) => problem(line, field, reason));
    if (!report.failed) {
      held.sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : 1));
      held.forEach((rec, i) => writer.insert(i + 1, table === 'locations' ? { ...rec, depth: depthOf(rec.type as string) } : rec));
      if (table !== 'listings') stored = held.length;
      if (table === 'listings' && !listingsSorted) rerankListings(db);
    }
    counts[table] = { read, stored };
    log(`  ${r.file}: ${read.toLocaleString('en')} valid records, ${stored.toLocaleString('en')} stored`);
  }
  if (report.failed) { db.exec('ROLLBACK'); return fail(); }
  for (const [table, m] of missing) {
    report.warn(`${table}: records lacking some translation (English is served instead): ${[...m].map(([l, n]) => `${l} ${n}`).join(', ')}`, 0);
  }

  const snapshotId = 'snap_' + hash.digest('hex').slice(0, 24);
  phase('deriving: location closure, full-text indexes, market cohorts, statistics');
  deriveAll(db, cohorts);
  const meta = db.prepare('INSERT INTO snapshot_meta (key, value) VALUES (?, ?)');
  meta.run('schema_version', String(SCHEMA_VERSION));
  meta.run('snapshot_id', snapshotId);
  meta.run('built_at', opts.builtAt ?? new Date().toISOString());
  meta.run('counts', JSON.stringify(Object.fromEntries(Object.entries(counts).map(([k, c]) => [k, c.stored]))));
  db.exec('COMMIT');

  phase('creating indexes');
  db.exec(indexes);
  phase('analyzing');
  db.exec('ANALYZE');
  phase('checking');
  const problems = runChecks(db);
  if (problems.length) return fail(problems);
  db.pragma('journal_mode = DELETE');
  phase('vacuuming');
  db.exec('VACUUM');
  db.close();
  db = undefined;

  const fd = openSync(tmp, 'r');
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, out);
  const bytes = statSync(out).size;
  return { ok: true, problems: [], warnings: warningLines(report), snapshotId, counts, bytes, seconds: elapsed() };
}

function warningLines(report: Report): string[] {
  return [...report.warnings.keys()].map((k) => `warning: ${k}`);
}

function depthOf(type: string) { return type === 'province' ? 0 : type === 'city' ? 1 : 2; }

type LocInfo = { type: string; parent: string | null; line: number };
const PARENT_TYPE: Record<string, string | null> = { province: null, city: 'province', neighbourhood: 'city' };

/** A province has no parent, a city's parent is a province, a neighbourhood's parent is a city. */
function checkLocationTree(recs: Record<string, unknown>[], all: Map<string, LocInfo>, problem: (line: number, field: string, reason: string) => void) {
  for (const [id, loc] of all) {
    const want = PARENT_TYPE[loc.type];
    if (want === null) { if (loc.parent !== null) problem(loc.line, 'parent_id', `a province has no parent (got "${loc.parent}")`); continue; }
    if (loc.parent === null) { problem(loc.line, 'parent_id', `a ${loc.type} needs a parent ${want}`); continue; }
    const parent = all.get(loc.parent);
    if (!parent) problem(loc.line, 'parent_id', `unknown location "${loc.parent}"`);
    else if (parent.type !== want) problem(loc.line, 'parent_id', `the parent of ${loc.type} "${id}" must be a ${want}, "${loc.parent}" is a ${parent.type}`);
  }
  void recs;
}

function hierarchyOf(locationId: string, all: Map<string, LocInfo>) {
  const h: { neighbourhood_id: string | null; city_id: string; province_id: string | null } = { neighbourhood_id: null, city_id: '', province_id: null };
  let id: string | null = locationId;
  while (id) {
    const loc: LocInfo = all.get(id)!;
    if (loc.type === 'neighbourhood') h.neighbourhood_id = id;
    else if (loc.type === 'city') h.city_id = id;
    else h.province_id = id;
    id = loc.parent;
  }
  return h;
}

/** Listings arrived out of id order: renumber rid so that rid order is id order again. */
function rerankListings(db: Database.Database) {
  db.exec(`
    CREATE TEMP TABLE rid_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
    INSERT INTO rid_map SELECT rid, ROW_NUMBER() OVER (ORDER BY id) FROM listings;
    UPDATE listings SET rid = -rid;
    UPDATE listings SET rid = (SELECT new FROM rid_map WHERE old = -listings.rid);
    UPDATE listings_i18n SET rid = -rid;
    UPDATE listings_i18n SET rid = (SELECT new FROM rid_map WHERE old = -listings_i18n.rid);
    DROP TABLE rid_map;
  `);
}
