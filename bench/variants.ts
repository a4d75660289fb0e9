// Distinct traffic for the HTTP benchmark: pools of ids and values picked from the snapshot, the cross products of
// filter values a scenario varies over, and the capture of every distinct request (each base path, followed along
// its cursors) once from our server, so that the reference can replay each request's own bytes.
import Database from 'better-sqlite3';
import { rng } from './common.ts';

/** Ids and values to vary requests over, read once from the snapshot (deterministic for a snapshot). */
export interface Pools {
  /** Listing ids spread evenly over the whole id range. */
  listings: string[];
  /** The same, only listings with a price and a property type (the similar endpoint has work to do for each). */
  priced: string[];
  /** Location ids of each level, by listings descending; every location id. */
  cities: string[];
  provinces: string[];
  neighbourhoods: string[];
  locations: { id: string; name: string }[];
  /** Owner ids by listings descending (owners with listings), and the owners table's ids. */
  owners: string[];
  ownerIds: string[];
  propertyTypes: string[];
  ownerTypes: string[];
  connectionTypes: string[];
  insuranceTypes: string[];
  insuranceProviders: string[];
  platforms: string[];
  platformTypes: string[];
  articles: string[];
  metrics: string[];
}

export const LOCALES = ['en', 'nl', 'de', 'fr', 'es'];

/** `n` values of `col` spread evenly over the rows of `from` (by rowid order of the query). */
function spread(db: Database.Database, sql: string, n: number): string[] {
  const all = db.prepare(sql).pluck().all() as string[];
  if (all.length <= n) return all;
  return Array.from({ length: n }, (_, i) => all[Math.floor((i * all.length) / n)]);
}

export function pools(dbPath: string, n: number): Pools {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const list = (sql: string) => db.prepare(sql).pluck().all() as string[];
    const byCount = (col: string) =>
      list(`SELECT value FROM listing_value_counts WHERE column = '${col}' ORDER BY n DESC, value`);
    const distinct = (table: string, col: string) =>
      list(`SELECT DISTINCT ${col} FROM ${table} WHERE ${col} IS NOT NULL ORDER BY ${col}`);
    return {
      listings: spread(db, 'SELECT id FROM listings ORDER BY rid', n),
      priced: spread(
        db,
        'SELECT id FROM listings WHERE price_eur IS NOT NULL AND property_type IS NOT NULL ORDER BY rid',
        n,
      ),
      cities: byCount('city_id'),
      provinces: byCount('province_id'),
      neighbourhoods: byCount('neighbourhood_id'),
      locations: db.prepare('SELECT id, name FROM locations ORDER BY id').all() as { id: string; name: string }[],
      owners: byCount('owner_id'),
      ownerIds: spread(db, 'SELECT id FROM owners ORDER BY id', n),
      propertyTypes: byCount('property_type'),
      ownerTypes: distinct('owners', 'type'),
      connectionTypes: distinct('internet_plans', 'connection_type'),
      insuranceTypes: distinct('insurance_products', 'insurance_type'),
      insuranceProviders: list('SELECT id FROM insurance_providers ORDER BY id'),
      platforms: list('SELECT id FROM platforms ORDER BY id'),
      platformTypes: distinct('platforms', 'type'),
      articles: spread(db, 'SELECT id FROM articles ORDER BY id', n),
      metrics: list('SELECT id FROM metrics ORDER BY id'),
    };
  } finally {
    db.close();
  }
}

type Value = string | number | undefined;
/**
 * Every combination of the values (a value undefined: the parameter left out), appended to `path`'s own
 * query, in a seeded shuffled order: the first of them, when not all are used, still cover every value.
 */
export function grid(path: string, vary: Record<string, readonly Value[]>, seed = 1): string[] {
  let combos: [string, Value][][] = [[]];
  for (const [k, values] of Object.entries(vary))
    combos = combos.flatMap((c) => values.map((x) => [...c, [k, x] as [string, Value]]));
  const r = rng(seed);
  for (let i = combos.length - 1; i > 0; i--) {
    const j = Math.floor(r.next() * (i + 1));
    [combos[i], combos[j]] = [combos[j], combos[i]];
  }
  return combos.map((c) => {
    const qs = c
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${k}=${encodeURIComponent(String(x))}`)
      .join('&');
    return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
  });
}

/** One request as the reference replays it: the status, headers and body our server gave. */
export interface Captured {
  url: string;
  status: number;
  headers: [string, string][];
  body_base64: string;
}

/** Headers the reference must not copy: it answers on its own connection. */
const HOP = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/**
 * Captures up to `n` distinct 200 answers: each base path and, with `walk`, the pages after it (its
 * next_cursor), at most ceil(n / bases) pages per base, after skipping the first `skip` pages of each.
 * Requests are made as autocannon makes them (no Accept-Encoding). Returns the captures and the number
 * of requests that did not answer 200 (left out).
 */
export async function captureDistinct(
  server: string,
  auth: Record<string, string>,
  bases: string[],
  opts: { n: number; walk: boolean; skip: number },
): Promise<{ captures: Captured[]; refused: { url: string; status: number; body: string }[] }> {
  const captures: Captured[] = [];
  const refused: { url: string; status: number; body: string }[] = [];
  const seen = new Set<string>();
  const perBase = Math.max(1, Math.ceil(opts.n / bases.length));
  for (const base of bases) {
    if (captures.length >= opts.n) break;
    let url: string | null = base;
    for (let page = 0, kept = 0; url !== null && kept < perBase && captures.length < opts.n; page++) {
      const res: Response = await fetch(server + url, { headers: { ...auth, 'accept-encoding': 'identity' } });
      const body: Buffer = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) {
        refused.push({ url, status: res.status, body: body.toString('utf8').slice(0, 300) });
        break;
      }
      if (page >= opts.skip && !seen.has(url)) {
        seen.add(url);
        kept++;
        const headers = [...res.headers].filter(([k]) => !HOP.has(k)) as [string, string][];
        captures.push({ url, status: res.status, headers, body_base64: body.toString('base64') });
      }
      if (!opts.walk) break;
      const next: string | null | undefined = (
        JSON.parse(body.toString('utf8')) as { pagination?: { next_cursor: string | null } }
      ).pagination?.next_cursor;
      url = next ? `${base}${base.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(next)}` : null;
    }
  }
  return { captures, refused };
}
