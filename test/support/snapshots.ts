// Fixture snapshots built by the real compiler. A fixture source is compiled once and kept in a cache shared by
// every test process (and by later runs): its key is a digest of the source's files, the build's options, the
// compiler's own code (build-snapshot/, snapshot-format/, which holds the schema version), Node's version and
// SQLite's binding, so any change to one of them compiles afresh. A cached file is shared: a test that writes to
// its snapshot, or builds over it, takes a copy (snapshotCopy) or compiles its own (buildTestSnapshot).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { type BuildResult, buildSnapshot } from '../../build-snapshot/compile.ts';
import { mulberry32 } from '../../generate/random.ts';
import { SCHEMA_VERSION } from '../../snapshot-format/schema.ts';
import { BASIC, CACHE, copyFixture, markUsed, moveIntoPlace, pruneUnused, ROOT, tempDir } from './files.ts';

export interface BuildOpts {
  builtAt?: string;
  previous?: string;
  historySteps?: number;
}
export interface Built {
  path: string;
  result: BuildResult;
}

const BUILT_AT = '2026-11-01T00:00:00.000Z';
/** Entries unused for this long are removed when a new one is written. */
const KEEP_MS = 3 * 86_400_000;

/** Compiles a source folder with the real compiler into `out` (a new temp file unless given); throws with the problems on failure. */
export async function buildTestSnapshot(
  source = BASIC,
  out = join(tempDir(), 'snapshot.db'),
  opts: BuildOpts = {},
): Promise<Built> {
  const result = await buildSnapshot({ ...opts, source, out, log: () => {}, builtAt: opts.builtAt ?? BUILT_AT });
  if (!result.ok) throw new Error(`fixture build failed:\n${result.problems.join('\n')}`);
  return { path: out, result };
}

/** A short digest of names and contents, for a cache key. */
export const digest = (parts: (string | Buffer)[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(typeof p === 'string' ? `${p.length}:${p}` : p);
  return h.digest('hex').slice(0, 32);
};

/** Every file under `dir` (recursively, sorted) as name and content, for a digest. */
export function filesOf(dir: string): (string | Buffer)[] {
  const out: (string | Buffer)[] = [];
  for (const name of (readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out.push(relative(dir, path), readFileSync(path));
  }
  return out;
}

let codeDigest: string | undefined;
/** The code a cached entry was made by: the compiler, the format, the generator, Node and SQLite's binding. */
function code(): string {
  codeDigest ??= digest([
    String(SCHEMA_VERSION),
    process.version,
    createRequire(import.meta.url)('better-sqlite3/package.json').version as string,
    ...['build-snapshot', 'snapshot-format', 'generate'].flatMap((d) => filesOf(join(ROOT, d))),
  ]);
  return codeDigest;
}

/**
 * When an entry was last used. A snapshot's use is marked on its .json, never on the .db: a service watching the
 * file takes a new mtime on the same inode for a write in place, and stops serving it.
 */
function lastUsed(path: string): number {
  const meta = path.replace(/\.db$/, '.json');
  return statSync(path.endsWith('.db') && existsSync(meta) ? meta : path).mtimeMs;
}

const verified = new Map<string, Promise<Built>>();

/**
 * The snapshot compiled from `source` (the basic fixture unless given), from the shared cache: compiled here only
 * when no test process has compiled the same source with the same code and options before. The file is shared:
 * never write to it or build over it (see snapshotCopy). Its digest is checked once per process, so a file changed
 * by a misbehaving test is compiled again rather than served.
 */
export function fixtureSnapshot(source = BASIC, opts: BuildOpts = {}): Promise<Built> {
  const key = digest([
    code(),
    JSON.stringify({ builtAt: opts.builtAt ?? BUILT_AT, historySteps: opts.historySteps }),
    opts.previous === undefined ? '' : readFileSync(opts.previous),
    ...filesOf(source),
  ]);
  // One lookup or build per key and process, however many tests of the process ask at once.
  let built = verified.get(key);
  if (built === undefined) {
    built = cachedOrBuilt(key, source, opts);
    built.catch(() => verified.delete(key)); // a failed build is tried again by the next caller
    verified.set(key, built);
  }
  return built;
}

async function cachedOrBuilt(key: string, source: string, opts: BuildOpts): Promise<Built> {
  mkdirSync(CACHE, { recursive: true });
  const path = join(CACHE, `${key}.db`);
  const meta = join(CACHE, `${key}.json`);
  if (existsSync(path) && existsSync(meta)) {
    const saved = JSON.parse(readFileSync(meta, 'utf8')) as { sha256: string; result: BuildResult };
    if (createHash('sha256').update(readFileSync(path)).digest('hex') === saved.sha256) {
      markUsed(meta);
      return { path, result: saved.result };
    }
  }
  pruneUnused(CACHE, KEEP_MS, lastUsed); // a new entry is being written: the folder grows
  // Built under a name of this process's own, then renamed into place: a reader sees a whole file or none.
  const own = join(CACHE, `${key}.${process.pid}.db`);
  const { result } = await buildTestSnapshot(source, own, opts);
  const sha256 = createHash('sha256').update(readFileSync(own)).digest('hex');
  writeFileSync(`${meta}.${process.pid}`, JSON.stringify({ sha256, result }));
  renameSync(`${meta}.${process.pid}`, meta);
  renameSync(own, path);
  return { path, result };
}

/** A private copy of a snapshot file (the basic fixture's unless given), for a test that writes to it or replaces it. */
export async function snapshotCopy(from?: string, to = join(tempDir(), 'snapshot.db')): Promise<string> {
  copyFileSync(from ?? (await fixtureSnapshot()).path, to);
  return to;
}

/**
 * Source data with many listings, from the project's generator (generate/main.ts), kept in the shared cache: the
 * folder is shared, so never modify it (copy it first). Without the generator (or with TEST_SYNTHETIC_FIXTURE=1):
 * the basic fixture plus deterministic synthetic listings, in a folder of this test's own.
 */
export function generatedSource(listings = 400, seed = 7): { dir: string; by: 'generate.ts' | 'fallback' } {
  const script = join(ROOT, 'generate/main.ts');
  if (existsSync(script) && process.env.TEST_SYNTHETIC_FIXTURE !== '1') {
    const dir = join(CACHE, `generated-${digest([code(), String(listings), String(seed)])}`);
    if (existsSync(join(dir, 'listings.ndjson'))) {
      markUsed(dir);
      return { dir, by: 'generate.ts' };
    }
    mkdirSync(CACHE, { recursive: true });
    const own = `${dir}.${process.pid}`;
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    const args = [tsx, script, '--listings', String(listings), '--out', own, '--seed', String(seed)];
    const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    if (r.status === 0 && existsSync(join(own, 'listings.ndjson'))) {
      moveIntoPlace(own, dir);
      return { dir, by: 'generate.ts' };
    }
  }
  return { dir: syntheticSource(listings, seed), by: 'fallback' };
}

/** The basic fixture plus `n` synthetic listings spread over its locations, owners and value ranges. */
export function syntheticSource(n: number, seed: number): string {
  const dir = copyFixture();
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) {
    const id = `syn-${String(i).padStart(5, '0')}`;
    const type = pick(['apartment', 'house', 'studio', 'room'] as const);
    const word = pick(['garden', 'spacious', 'canal', 'quiet', 'bright'] as const);
    lines.push(
      JSON.stringify({
        id,
        slug: id,
        offer_type: rnd() < 0.9 ? 'rent' : 'sale',
        active: rnd() < 0.9,
        published: rnd() < 0.95,
        title: {
          en: `${word} ${type} ${i}`,
          ...Object.fromEntries(
            ['nl', 'de', 'fr', 'es'].filter(() => rnd() < 0.3).map((l) => [l, `${type} ${i} (${l})`]),
          ),
        },
        description: rnd() < 0.8 ? { en: `Synthetic listing ${i}` } : null,
        price_eur: rnd() < 0.05 ? null : 400 + Math.round(rnd() * 60) * 50,
        size_m2: rnd() < 0.03 ? null : 15 + Math.round(rnd() * 120),
        rooms: 1 + Math.floor(rnd() * 6),
        furnishing: pick(['SHELL', 'FURNISHED', 'UPHOLSTERED', null] as const),
        property_type: type,
        energy_label: pick(['A', 'B', 'C']),
        owner_id: pick(['own-1', 'own-2', 'own-3', null] as const),
        location_id: pick(['loc-ams', 'loc-ams-pijp', 'loc-ams-jordaan', 'loc-dh', 'loc-rdam'] as const),
        first_seen_at: '2026-03-01T00:00:00Z',
        created_at: '2026-03-01T00:00:00Z',
        updated_at: '2026-03-02T00:00:00Z',
      }),
    );
  }
  appendFileSync(join(dir, 'listings.ndjson'), `${lines.join('\n')}\n`);
  return dir;
}

/** The basic fixture's source with one more listing: compiled, it has another snapshot id. */
export function changedSource(): string {
  const dir = copyFixture();
  const file = join(dir, 'listings.ndjson');
  const first = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]);
  const extra = { ...first, id: 'lst-999', slug: 'lst-999-slug', title: { en: 'Listing lst-999' } };
  appendFileSync(file, `${JSON.stringify(extra)}\n`);
  return dir;
}

/** The basic fixture's source with its listings edited (by id, each its source line, in file order): a private copy. */
export function editedSource(edit: (lines: Map<string, string>) => void): string {
  const dir = copyFixture();
  const file = join(dir, 'listings.ndjson');
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const byId = new Map(lines.map((l) => [JSON.parse(l).id as string, l]));
  edit(byId);
  writeFileSync(file, `${[...byId.values()].join('\n')}\n`);
  return dir;
}
