// SimilarIndex (src/listings/similar.ts) against the rule computed by brute force, on random columns full of ties:
// prices and sizes from short lists, unknown sizes and prices, several cities and types, every limit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SimilarIndex } from '../src/listings/similar.ts';

/** Random columns as the column store holds them (row = rid - 1, NaN for null, code 0 for null). */
function columns(n: number, seed: number) {
  let a = seed >>> 0;
  const rnd = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const price = new Float64Array(n),
    size = new Float64Array(n),
    city_id = new Uint16Array(n),
    property_type = new Uint16Array(n);
  for (let r = 0; r < n; r++) {
    price[r] = rnd() < 0.05 ? NaN : pick([750, 800, 900, 950, 1000, 1000, 1000, 1010, 1050, 1200, 1250, 1300, 999.5]);
    size[r] = rnd() < 0.15 ? NaN : pick([30, 40, 45, 50, 50, 55, 60, 62.5, 70]);
    city_id[r] = pick([1, 2, 3]);
    property_type[r] = rnd() < 0.03 ? 0 : pick([1, 2]);
  }
  return { n, price, size, city_id, property_type };
}

/** The rule by brute force: every candidate in the window, sorted by price difference, size difference, row. */
function expected(c: ReturnType<typeof columns>, ref: number, limit: number): number[] {
  const p = c.price[ref];
  if (Number.isNaN(p) || c.property_type[ref] === 0) return [];
  const sizeDiff = (r: number) =>
    Number.isNaN(c.size[r]) || Number.isNaN(c.size[ref]) ? Infinity : Math.abs(c.size[r] - c.size[ref]);
  return [...Array(c.n).keys()]
    .filter(
      (r) =>
        r !== ref &&
        c.city_id[r] === c.city_id[ref] &&
        c.property_type[r] === c.property_type[ref] &&
        c.price[r] >= p * 0.75 &&
        c.price[r] <= p * 1.25,
    )
    .sort((x, y) => Math.abs(c.price[x] - p) - Math.abs(c.price[y] - p) || sizeDiff(x) - sizeDiff(y) || x - y)
    .slice(0, limit);
}

describe('SimilarIndex', () => {
  for (const [n, seed] of [
    [60, 1],
    [400, 2],
    [3000, 3],
  ]) {
    it(`ranks as the rule does, for every reference and limit 1 to 20 (${n} listings)`, () => {
      const c = columns(n, seed);
      const index = new SimilarIndex(c);
      for (let ref = 0; ref < n; ref += n > 500 ? 7 : 1)
        for (const limit of [1, 2, 3, 5, 10, 20])
          assert.deepEqual(index.rank(ref, limit), expected(c, ref, limit), `ref ${ref} limit ${limit}`);
    });
  }
  it('groups every city and type: its priced rows in (price, size, row) order and its unpriced count', () => {
    const c = columns(2000, 5);
    c.city_id[7] = 0; // a listing without a city is a group of its own (code 0)
    const wide = columns(300, 6);
    wide.city_id[0] = 65535; // too many (city, type) pairs for the counting table: each group found by a scan
    wide.property_type[1] = 100;
    for (const cols of [c, wide]) {
      const index = new SimilarIndex(cols);
      const sizeKey = (r: number) => (Number.isNaN(cols.size[r]) ? Infinity : cols.size[r]);
      for (const city of new Set(cols.city_id))
        for (const type of new Set(cols.property_type)) {
          const all = [...Array(cols.n).keys()].filter(
            (r) => cols.city_id[r] === city && cols.property_type[r] === type,
          );
          const priced = all
            .filter((r) => !Number.isNaN(cols.price[r]))
            .sort((x, y) => cols.price[x] - cols.price[y] || sizeKey(x) - sizeKey(y) || x - y);
          const g = index.group(city, type);
          assert.deepEqual([...g.rows], priced, `${city} ${type}`);
          assert.equal(g.unpriced, all.length - priced.length, `${city} ${type}`);
        }
    }
  });
  it('has nothing for a reference without a price or type, or alone in its city and type', () => {
    const c = columns(50, 4);
    c.price[0] = NaN;
    c.property_type[1] = 0;
    c.city_id[2] = 9;
    const index = new SimilarIndex(c);
    for (const ref of [0, 1, 2]) assert.deepEqual(index.rank(ref, 10), []);
  });
});
