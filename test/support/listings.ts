// The listings tests' larger fixture (a generated source served by the real service, and its model) and what a
// filter set should return, computed from the source records.
import assert from 'node:assert/strict';
import { before } from 'node:test';
import { listingText, type Rec, type SourceModel, tokens, useGenerated, walk, withParams } from './model.ts';
import type { TestServer } from './server.ts';

/** The listings tests' generated fixture: 400 listings (seed 7), enough for the invariants to bite. */
export const LISTINGS = [400, 7] as const;
/** The service on the listings tests' generated fixture (`big`), its model (`m`) and snapshot file. */
export function useListings() {
  const { model: m, server: big, snapshot } = useGenerated(...LISTINGS);
  before(() => {
    assert.ok(m.listings.length >= 100, `the generated fixture has enough listings (${m.listings.length})`);
  });
  return { m, big, snapshot };
}

export type Params = Record<string, string | number>;
export const ids = (xs: { id: string }[]) => xs.map((x) => x.id);
/** Every listing a search returns, in served order (pages of 100). */
export const all = async (s: TestServer, params: Params = {}) =>
  (await walk(s, withParams('/v1/listings', params), 100)).items;
export const stats = async (s: TestServer, params: Params = {}) => {
  const res = await s.get(withParams('/v1/listings/stats', params));
  assert.equal(res.status, 200, res.text);
  return res.body.data;
};

function matches(model: SourceModel, l: Rec, p: Params): boolean {
  const num = (k: string) => Number(p[k]);
  const has = (k: string) => p[k] !== undefined;
  if (has('location_id') && !model.ancestorsOf(l.location_id).includes(String(p.location_id))) return false;
  if (has('owner_id') && l.owner_id !== p.owner_id) return false;
  if (has('furnishing') && l.furnishing !== p.furnishing) return false;
  if (has('property_type') && l.property_type !== p.property_type) return false;
  if (has('min_price') && !(l.price_eur !== null && l.price_eur >= num('min_price'))) return false;
  if (has('max_price') && !(l.price_eur !== null && l.price_eur <= num('max_price'))) return false;
  if (has('min_size') && !(l.size_m2 !== null && l.size_m2 >= num('min_size'))) return false;
  if (has('max_size') && !(l.size_m2 !== null && l.size_m2 <= num('max_size'))) return false;
  if (has('min_rooms') && !(l.rooms !== null && l.rooms >= num('min_rooms'))) return false;
  if (has('q')) {
    const text = listingText(model, l);
    if (!tokens(String(p.q)).every((t) => text.has(t))) return false;
  }
  return true;
}
/** The ids a search with `p` should return, ascending. */
export const expectedIds = (model: SourceModel, p: Params) =>
  model.listings.filter((l) => matches(model, l, p)).map((l) => l.id);

/** The most common value of f over the searchable listings. */
export function mostCommon(model: SourceModel, f: (l: Rec) => string | null | undefined): string {
  const n = new Map<string, number>();
  for (const l of model.listings) {
    const k = f(l);
    if (k != null) n.set(k, (n.get(k) ?? 0) + 1);
  }
  return [...n].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
}
/** A listing's location at one level (province, city, neighbourhood). */
export const levelOf = (model: SourceModel, type: string) => (l: Rec) =>
  model.ancestorsOf(l.location_id).find((id) => model.locations.get(id)!.type === type);
/** The most common location of a level. */
export const commonPlace = (model: SourceModel, type: string) => mostCommon(model, levelOf(model, type));
export const quantile = (xs: number[], q: number) => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.floor(q * (a.length - 1))];
};
/** The known prices of the searchable listings. */
export const pricesOf = (model: SourceModel): number[] =>
  model.listings.map((l) => l.price_eur).filter((x) => x !== null);
