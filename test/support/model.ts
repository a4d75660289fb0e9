// Cursor walks, and a model of a fixture's source data to compute expected answers from.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESOURCES } from '../../snapshot-format/resources.ts';
import { type TestServer, useServer } from './server.ts';
import { fixtureSnapshot, generatedSource } from './snapshots.ts';

// ---------------------------------------------------------------------------------------- walks

export const withParams = (path: string, params: Record<string, string | number>) => {
  const qs = Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return qs ? path + (path.includes('?') ? '&' : '?') + qs : path;
};

/**
 * Follows next_cursor from the first page to the last, checking every page's pagination: full pages while
 * has_more, next_cursor null exactly on the last page. Returns every item in the order served.
 */
export async function walk(
  server: TestServer,
  path: string,
  limit: number,
  maxPages = 2000,
): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let pages = 1; pages <= maxPages; pages++) {
    const res = await server.get(withParams(path, cursor === null ? { limit } : { limit, cursor }));
    assert.equal(res.status, 200, `page ${pages} of ${path}: ${res.text.slice(0, 300)}`);
    const p = res.body.pagination;
    assert.equal(p.limit, limit);
    assert.equal(
      p.next_cursor === null,
      !p.has_more,
      `page ${pages}: next_cursor is null exactly when has_more is false`,
    );
    if (p.has_more) assert.equal(res.body.data.length, limit, `page ${pages}: a page with more to come is full`);
    items.push(...res.body.data);
    if (!p.has_more) return { items, pages };
    assert.equal(typeof p.next_cursor, 'string');
    cursor = p.next_cursor;
  }
  assert.fail(`${path}: more than ${maxPages} pages`);
}

/** Ids strictly ascending (so also no duplicates). */
export function assertAscendingIds(items: { id: string }[]) {
  const ids = items.map((x) => x.id);
  for (let i = 1; i < ids.length; i++)
    assert.ok(ids[i - 1] < ids[i], `ids ascend without duplicates: ${ids[i - 1]} then ${ids[i]}`);
  assert.equal(new Set(ids).size, ids.length, 'no duplicate ids');
}

// ---------------------------------------------------------------------------------------- source model

export type Rec = Record<string, any>;
export interface SourceModel {
  dir: string;
  all: Record<string, Rec[]>;
  locations: Map<string, Rec>;
  /** Listings a search returns: rent, active, published; ascending id. */
  listings: Rec[];
  listingById: Map<string, Rec>;
  /** The location itself and all its ancestors. */
  ancestorsOf(locationId: string): string[];
  cityOf(locationId: string): string;
}

export function readNdjson(file: string): Rec[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

export function loadSource(dir: string): SourceModel {
  const names = RESOURCES;
  const all = Object.fromEntries(names.map((n) => [n, readNdjson(join(dir, `${n}.ndjson`))]));
  const locations = new Map(all.locations.map((l) => [l.id as string, l]));
  const ancestorsOf = (id: string) => {
    const out: string[] = [];
    for (let cur: string | null = id; cur; cur = locations.get(cur)?.parent_id ?? null) out.push(cur);
    return out;
  };
  const cityOf = (id: string) => ancestorsOf(id).find((x) => locations.get(x)!.type === 'city')!;
  const listings = all.listings
    .filter((l) => l.offer_type === 'rent' && l.active && l.published)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  return { dir, all, locations, listings, listingById: new Map(listings.map((l) => [l.id, l])), ancestorsOf, cityOf };
}

/** The tokens the full-text index sees in a text: accents removed, lower case, runs of letters and digits. */
export const tokens = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

/** Everything a listing's q search covers: title and description in every locale, street, postcode, location names. */
export function listingText(m: SourceModel, l: Rec): Set<string> {
  const parts: string[] = [
    ...Object.values(l.title as Record<string, string>),
    ...Object.values((l.description ?? {}) as Record<string, string>),
    l.street ?? '',
    l.postcode ?? '',
  ];
  for (const id of m.ancestorsOf(l.location_id))
    parts.push(...Object.values(m.locations.get(id)!.name as Record<string, string>));
  return new Set(parts.flatMap(tokens));
}

/** [min, max, average rounded to cents, median (mean of the middle two for an even count)] of prices, or nulls. */
export function expectedStats(prices: number[]) {
  if (prices.length === 0)
    return { min_price_eur: null, max_price_eur: null, average_price_eur: null, median_price_eur: null };
  const a = [...prices].sort((x, y) => x - y);
  const mid = Math.floor(a.length / 2);
  return {
    min_price_eur: a[0],
    max_price_eur: a[a.length - 1],
    average_price_eur: Math.round((a.reduce((s, x) => s + x, 0) / a.length) * 100) / 100,
    median_price_eur: a.length % 2 ? a[mid] : (a[mid - 1] + a[mid]) / 2,
  };
}

// ---------------------------------------------------------------------------------------- generated fixtures

/** `generated()`, and the service on its snapshot for the calling scope (see useServer). */
export function useGenerated(listings: number, seed: number) {
  const g = generated(listings, seed);
  return { ...g, server: useServer(async () => ({ SNAPSHOT_PATH: (await g.snapshot()).path })) };
}
/** A generated source (cached, shared: never modify it), its model, and its compiled snapshot (cached). */
export function generated(listings: number, seed: number) {
  const dir = generatedSource(listings, seed).dir;
  return { dir, model: loadSource(dir), snapshot: () => fixtureSnapshot(dir) };
}
