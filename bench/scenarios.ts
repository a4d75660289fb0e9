// The HTTP benchmark's fixed scenario mix, with concrete ids and values picked from the snapshot (opened read-only).
import Database from 'better-sqlite3';
import { termDocs } from './common.ts';
import { grid, LOCALES, type Pools } from './variants.ts';

/** What a scenario is judged as: its CPU budget per request (serve.ts, CPU_TARGETS) follows the group. */
export type Group = 'detail' | 'search' | 'stats' | 'similar' | 'other-search' | 'other';
export interface Scenario {
  name: string;
  group: Group;
  path: string;
  /** Start at this page (following next_cursor from the path): the fixed run hammers that page's URL. */
  deepPages?: number;
  /**
   * The distinct traffic (the default run): these base paths, each followed along its next_cursor when
   * `walk`, up to the run's number of distinct requests. Without it, the path alone.
   */
  bases?: (p: Pools) => string[];
  walk?: boolean;
  note?: string;
}
export interface Picks {
  listing_id: string;
  listing_city: string;
  big_city: { id: string; name: string; n: number };
  small_city: { id: string; name: string; n: number };
  neighbourhood: { id: string; name: string; n: number };
  province: { id: string; name: string; n: number };
  big_owner: { id: string; n: number };
  small_owner: { id: string; n: number };
  words: Record<string, number>;
  metric: string;
  from: string;
  to: string;
  owner_type: string | null;
  internet_provider: string | null;
  connection_type: string | null;
  insurance_type: string | null;
  insurance_provider: string | null;
  platform: string | null;
  platform_type: string | null;
  article: string | null;
  /** The latest snapshot of the change history (built with --previous), for /v1/changes?since=; null without one. */
  changes_since: string | null;
  /** The centres of NEAR_CITIES as the snapshot's locations give them (cities the source lacks are left out). */
  centres: { name: string; lat: number; lon: number }[];
}

/** The cities whose centres the near scenarios search around: the largest city and a mid-sized one next to it. */
const NEAR_CITIES = ['Amsterdam', 'Utrecht'];
/** The radii of the near scenarios, in km: a neighbourhood's walk, a city and its edges. */
const NEAR_KM = [2, 10];
/** The other filters a near scenario also runs with: a common property type and a price band. */
const NEAR_WITH = { property_type: 'apartment', min_price: 1000, max_price: 2000 };

export const RARE_WORD = 'sauna';
export const COMMON_WORD = 'bright';
const COMMON_WORD_2 = 'balcony';

/** Concrete values from the snapshot: the biggest and smallest city, owners, a neighbourhood, words and their document counts… */
export function pick(dbPath: string): Picks {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const counts = (col: string) =>
      db
        .prepare('SELECT value AS id, n FROM listing_value_counts WHERE column = ? ORDER BY n DESC, value')
        .all(col) as { id: string; n: number }[];
    const name = (id: string) => db.prepare('SELECT name FROM locations WHERE id = ?').pluck().get(id) as string;
    const named = (r: { id: string; n: number }) => ({ ...r, name: name(r.id) });
    const cities = counts('city_id');
    const owners = counts('owner_id');
    const big = cities[0];
    const one = (sql: string, ...p: unknown[]) =>
      (db
        .prepare(sql)
        .pluck()
        .get(...p) as string | undefined) ?? null;
    // A listing in the middle of the id range, in the biggest city, with a price and a type (so "similar" has work to do).
    const total = db.prepare('SELECT max(rid) FROM listings').pluck().get() as number;
    const listing =
      one(
        'SELECT id FROM listings WHERE rid >= ? AND city_id = ? AND price_eur IS NOT NULL AND property_type IS NOT NULL ORDER BY rid LIMIT 1',
        Math.floor(total / 2),
        big.id,
      ) ?? one('SELECT id FROM listings ORDER BY rid LIMIT 1')!;
    const words: Record<string, number> = {};
    const docs = termDocs(db);
    for (const w of [RARE_WORD, COMMON_WORD, COMMON_WORD_2]) words[w] = docs(w);
    // The metric and the latest 24 months with observations for the biggest city.
    const metric =
      one(
        "SELECT metric_id FROM market_observations WHERE city_id = ? ORDER BY metric_id = 'median_rent' DESC, metric_id LIMIT 1",
        big.id,
      ) ?? 'median_rent';
    const last =
      one('SELECT max(month) FROM market_observations WHERE metric_id = ? AND city_id = ?', metric, big.id) ??
      new Date().toISOString().slice(0, 10);
    const [y, m] = last.split('-').map(Number);
    const fromIdx = y * 12 + (m - 1) - 23;
    const from = `${Math.floor(fromIdx / 12)}-${String((fromIdx % 12) + 1).padStart(2, '0')}-01`;
    const to = `${y}-${String(m).padStart(2, '0')}-${String(new Date(Date.UTC(y, m, 0)).getUTCDate()).padStart(2, '0')}`;
    const mostCommon = (table: string, col: string) =>
      one(
        `SELECT ${col} FROM ${table} WHERE ${col} IS NOT NULL GROUP BY ${col} ORDER BY count(*) DESC, ${col} LIMIT 1`,
      );
    return {
      listing_id: listing,
      listing_city: big.id,
      big_city: named(big),
      small_city: named(cities[cities.length - 1]),
      neighbourhood: named(counts('neighbourhood_id')[0]),
      province: named(counts('province_id')[0]),
      big_owner: owners[0],
      small_owner: owners[owners.length - 1],
      words,
      metric,
      from,
      to,
      owner_type: mostCommon('owners', 'type'),
      internet_provider: one('SELECT id FROM internet_providers ORDER BY id LIMIT 1'),
      connection_type: mostCommon('internet_plans', 'connection_type'),
      insurance_type: mostCommon('insurance_products', 'insurance_type'),
      insurance_provider: one('SELECT id FROM insurance_providers ORDER BY id LIMIT 1'),
      platform: one('SELECT id FROM platforms ORDER BY id LIMIT 1'),
      platform_type: mostCommon('platforms', 'type'),
      article: one('SELECT id FROM articles ORDER BY id LIMIT 1'),
      centres: NEAR_CITIES.flatMap((city) => {
        const at = db
          .prepare("SELECT latitude AS lat, longitude AS lon FROM locations WHERE type = 'city' AND name = ?")
          .get(city) as { lat: number; lon: number } | undefined;
        return at ? [{ name: city, ...at }] : [];
      }),
      changes_since: db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'change_history'").get()
        ? one('SELECT snapshot_id FROM change_history ORDER BY step DESC LIMIT 1')
        : null,
    };
  } finally {
    db.close();
  }
}

const qs = (o: Record<string, string | number | null | undefined>) => {
  const parts = Object.entries(o)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
};

const seq = (from: number, n: number, step = 1) => Array.from({ length: n }, (_, i) => from + i * step);
const FURNISHING = ['FURNISHED', 'UPHOLSTERED', 'SHELL'];

/**
 * The scenario mix. Each scenario's `path` is its fixed request (`--fixed`); its `bases` are the distinct
 * traffic of the default run: other values of the same filters (other cities, owners, bounds, locales) and,
 * with `walk`, the pages after each (cursors), so that no two requests of a run are alike.
 */
export function scenarios(p: Picks): Scenario[] {
  const L = '/v1/listings';
  const S = `${L}/stats`;
  const city = p.big_city.id;
  const s = (name: string, group: Group, path: string, extra: Partial<Scenario> = {}): Scenario => ({
    name,
    group,
    path,
    ...extra,
  });
  const walk = (bases: (x: Pools) => string[]) => ({ bases, walk: true });
  const ids =
    (prefix: string, suffix = '') =>
    (list: string[]) =>
      list.map((id) => `${prefix}/${encodeURIComponent(id)}${suffix}`);
  const localised = (paths: string[]) => paths.flatMap((path) => grid(path, { locale: LOCALES }));
  return [
    s('listing detail', 'detail', `${L}/${encodeURIComponent(p.listing_id)}`, { bases: (x) => ids(L)(x.listings) }),
    s(
      'search (no filter)',
      'search',
      L,
      walk(() => grid(L, { locale: LOCALES })),
    ),
    s(
      `search city big (${p.big_city.name})`,
      'search',
      L + qs({ location_id: city }),
      walk((x) => grid(L, { location_id: x.cities.slice(0, 4), locale: ['en', 'nl'] })),
    ),
    s(
      `search city small (${p.small_city.name})`,
      'search',
      L + qs({ location_id: p.small_city.id }),
      walk((x) => grid(L, { location_id: x.cities.slice(-8) })),
    ),
    s(
      `search province (${p.province.name})`,
      'search',
      L + qs({ location_id: p.province.id }),
      walk((x) => grid(L, { location_id: x.provinces })),
    ),
    s(
      `search neighbourhood (${p.neighbourhood.name})`,
      'search',
      L + qs({ location_id: p.neighbourhood.id }),
      walk((x) => grid(L, { location_id: x.neighbourhoods })),
    ),
    s(
      `search owner big (${p.big_owner.n})`,
      'search',
      L + qs({ owner_id: p.big_owner.id }),
      walk((x) => grid(L, { owner_id: x.owners.slice(0, 10) })),
    ),
    s(
      `search owner small (${p.small_owner.n})`,
      'search',
      L + qs({ owner_id: p.small_owner.id }),
      walk((x) => grid(L, { owner_id: x.owners.slice(-1000) })),
    ),
    s(
      'search min_price=2500',
      'search',
      L + qs({ min_price: 2500 }),
      walk(() => grid(L, { min_price: seq(2400, 20, 10) })),
    ),
    s(
      'search max_price=800',
      'search',
      L + qs({ max_price: 800 }),
      walk(() => grid(L, { max_price: seq(700, 20, 10) })),
    ),
    s(
      'search min_size=150',
      'search',
      L + qs({ min_size: 150 }),
      walk(() => grid(L, { min_size: seq(140, 20) })),
    ),
    s(
      'search max_size=30',
      'search',
      L + qs({ max_size: 30 }),
      walk(() => grid(L, { max_size: seq(25, 20) })),
    ),
    s(
      'search min_rooms=5',
      'search',
      L + qs({ min_rooms: 5 }),
      walk(() => grid(L, { min_rooms: seq(4, 4), locale: LOCALES })),
    ),
    s(
      'search furnishing=FURNISHED',
      'search',
      L + qs({ furnishing: 'FURNISHED' }),
      walk(() => grid(L, { furnishing: FURNISHING, locale: LOCALES })),
    ),
    s(
      'search property_type=house',
      'search',
      L + qs({ property_type: 'house' }),
      walk((x) => grid(L, { property_type: x.propertyTypes, locale: LOCALES })),
    ),
    s(
      `search q rare (${RARE_WORD})`,
      'search',
      L + qs({ q: RARE_WORD }),
      walk(() => grid(L, { q: [RARE_WORD], locale: LOCALES })),
    ),
    s(
      `search q common (${COMMON_WORD})`,
      'search',
      L + qs({ q: COMMON_WORD }),
      walk(() => grid(L, { q: [COMMON_WORD], locale: LOCALES })),
    ),
    s(
      'search city+furnishing+max_price',
      'search',
      L + qs({ location_id: city, furnishing: 'FURNISHED', max_price: 1500 }),
      walk((x) =>
        grid(L, { location_id: x.cities.slice(0, 8), furnishing: FURNISHING, max_price: [1200, 1500, 1800] }),
      ),
    ),
    s(
      'search city+min_rooms+min_size',
      'search',
      L + qs({ location_id: city, min_rooms: 3, min_size: 80 }),
      walk((x) => grid(L, { location_id: x.cities.slice(0, 8), min_rooms: [2, 3, 4], min_size: [60, 80, 100] })),
    ),
    s(
      'search province+type+max_price',
      'search',
      L + qs({ location_id: p.province.id, property_type: 'house', max_price: 2000 }),
      walk((x) =>
        grid(L, { location_id: x.provinces, property_type: ['house', 'apartment'], max_price: [1500, 2000, 2500] }),
      ),
    ),
    s(
      `search q common+city (${COMMON_WORD_2})`,
      'search',
      L + qs({ q: COMMON_WORD_2, location_id: city }),
      walk((x) => grid(L, { q: [COMMON_WORD_2], location_id: x.cities.slice(0, 16) })),
    ),
    s(
      `search q rare+city (${RARE_WORD})`,
      'search',
      L + qs({ q: RARE_WORD, location_id: city }),
      walk((x) => grid(L, { q: [RARE_WORD], location_id: x.cities, locale: LOCALES })),
    ),
    s(
      'search deep cursor (page 50, city+furnishing)',
      'search',
      L + qs({ location_id: city, furnishing: 'FURNISHED' }),
      { deepPages: 50, ...walk((x) => grid(L, { location_id: x.cities.slice(0, 4), furnishing: FURNISHING })) },
    ),
    s('stats (no filter)', 'stats', S, { bases: () => grid(S, { locale: LOCALES }) }),
    s('stats city', 'stats', S + qs({ location_id: city }), {
      bases: (x) => grid(S, { location_id: x.locations.map((l) => l.id), locale: LOCALES }),
    }),
    s(
      'stats city+type+min_price',
      'stats',
      S + qs({ location_id: city, property_type: 'apartment', min_price: 2000 }),
      {
        bases: (x) => grid(S, { location_id: x.cities, property_type: x.propertyTypes, min_price: seq(1000, 6, 500) }),
      },
    ),
    ...nearScenarios(p),
    s('similar', 'similar', `${L}/${encodeURIComponent(p.listing_id)}/similar`, {
      bases: (x) => ids(L, '/similar')(x.priced),
    }),
    s(
      'market observations (24 months)',
      'other',
      `/v1/market/metrics/${encodeURIComponent(p.metric)}/observations` +
        qs({ location_id: city, from: p.from, to: p.to }),
      {
        bases: (x) =>
          ids(
            '/v1/market/metrics',
            '/observations',
          )(x.metrics).flatMap((path) =>
            grid(path, { location_id: x.cities, from: [p.from], to: [p.to], locale: LOCALES }),
          ),
      },
    ),
    s('market metrics', 'other', '/v1/market/metrics', {
      bases: () => grid('/v1/market/metrics', { locale: LOCALES }),
    }),
    s(
      'owners search',
      'other-search',
      `/v1/owners${qs({ type: p.owner_type })}`,
      walk((x) => grid('/v1/owners', { type: [undefined, ...x.ownerTypes], locale: ['en', 'nl'] })),
    ),
    s('owner detail', 'other', `/v1/owners/${encodeURIComponent(p.big_owner.id)}`, {
      bases: (x) => ids('/v1/owners')(x.ownerIds),
    }),
    s(
      'internet providers',
      'other-search',
      '/v1/internet/providers',
      walk(() => grid('/v1/internet/providers', { locale: LOCALES })),
    ),
    s(
      'internet plans (filtered)',
      'other-search',
      '/v1/internet/plans' +
        qs({ connection_type: p.connection_type, min_download_mbps: 100, max_monthly_price_cents: 6000 }),
      {
        bases: (x) =>
          grid('/v1/internet/plans', {
            connection_type: [undefined, ...x.connectionTypes],
            min_download_mbps: [undefined, 50, 100, 200, 300, 500, 1000],
            max_monthly_price_cents: [undefined, 3000, 4000, 5000, 6000, 7000, 8000],
            locale: LOCALES,
          }),
      },
    ),
    s(
      'insurance products',
      'other-search',
      `/v1/insurance/products${qs({ insurance_type: p.insurance_type })}`,
      walk((x) =>
        grid('/v1/insurance/products', { insurance_type: [undefined, ...x.insuranceTypes], locale: LOCALES }),
      ),
    ),
    s(
      'insurance provider detail',
      'other',
      `/v1/insurance/providers/${encodeURIComponent(p.insurance_provider ?? 'none')}`,
      { bases: (x) => localised(ids('/v1/insurance/providers')(x.insuranceProviders)) },
    ),
    s(
      'platforms',
      'other-search',
      `/v1/platforms${qs({ type: p.platform_type })}`,
      walk((x) => grid('/v1/platforms', { type: [undefined, ...x.platformTypes], locale: LOCALES })),
    ),
    s('platform detail', 'other', `/v1/platforms/${encodeURIComponent(p.platform ?? 'none')}`, {
      bases: (x) => localised(ids('/v1/platforms')(x.platforms)),
    }),
    s('article detail', 'other', `/v1/articles/${encodeURIComponent(p.article ?? 'none')}`, {
      bases: (x) => ids('/v1/articles')(x.articles),
    }),
    s('locations search', 'other-search', `/v1/locations${qs({ q: p.big_city.name })}`, {
      bases: (x) => grid('/v1/locations', { q: x.locations.map((l) => l.name), locale: ['en', 'nl'] }),
    }),
    // A client one snapshot behind catching up (a snapshot built with --previous; none without a history): every page
    // of the feed, and of its listings alone, at the listing search's page size and at the largest.
    ...(p.changes_since === null
      ? []
      : [20, 100].map((limit) =>
          s(
            `changes, one snapshot behind (pages of ${limit})`,
            'search',
            `/v1/changes${qs({ since: p.changes_since, limit })}`,
            walk(() =>
              grid('/v1/changes', { since: [p.changes_since!], resource: [undefined, 'listings'], limit: [limit] }),
            ),
          ),
        )),
  ];
}

/**
 * Listings and their stats near a city's centre: every centre and radius, alone and with NEAR_WITH. The distinct
 * traffic moves the point around the centre (up to ~1.5 km) and varies the radius by 10 % either side.
 */
function nearScenarios(p: Picks): Scenario[] {
  const out: Scenario[] = [];
  const around = (c: { lat: number; lon: number }) =>
    [-0.01, 0, 0.01].flatMap((dy) => [-0.015, 0, 0.015].map((dx) => `${c.lat + dy},${c.lon + dx}`));
  for (const c of p.centres)
    for (const km of NEAR_KM)
      for (const extra of [{}, NEAR_WITH]) {
        const q = { near: `${c.lat},${c.lon}`, radius_km: km, ...extra };
        const label = `near ${c.name} ${km} km${Object.keys(extra).length ? '+type+price' : ''}`;
        const vary = { near: around(c), radius_km: [km * 0.9, km, km * 1.1], ...toGrid(extra) };
        out.push(
          {
            name: `search ${label}`,
            group: 'search',
            path: `/v1/listings${qs(q)}`,
            bases: () => grid('/v1/listings', vary),
            walk: true,
          },
          {
            name: `stats ${label}`,
            group: 'stats',
            path: `/v1/listings/stats${qs(q)}`,
            bases: () => grid('/v1/listings/stats', vary),
          },
        );
      }
  return [...out, ...nearWorst(p, around)];
}
/** The largest radius, and a filter that matches almost nothing near the densest city (apartments from €6,000). */
const NEAR_WORST = { km: 50, emptyWith: { property_type: 'apartment', min_price: 6000 } };

/** The worst near stats: NEAR_WORST's radius around the densest city, alone, with NEAR_WITH and near-empty. */
function nearWorst(p: Picks, around: (c: { lat: number; lon: number }) => string[]): Scenario[] {
  const c = p.centres[0];
  if (!c) return [];
  const km = NEAR_WORST.km;
  const cases: [string, Record<string, string | number>][] = [
    ['', {}],
    ['+type+price', NEAR_WITH],
    ['+near-empty filter', NEAR_WORST.emptyWith],
  ];
  return cases.map(([suffix, extra]) => ({
    name: `stats near ${c.name} ${km} km${suffix}`,
    group: 'stats',
    path: `/v1/listings/stats${qs({ near: `${c.lat},${c.lon}`, radius_km: km, ...extra })}`,
    bases: () => grid('/v1/listings/stats', { near: around(c), radius_km: [km * 0.9, km], ...toGrid(extra) }),
  }));
}
const toGrid = (o: Record<string, string | number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, [v]]));
