// Word-parallel row sets (src/listings/bits.ts) against a row-at-a-time reference, on awkward data.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mulberry32 } from '../generate/random.ts';
import { accumulateBits, eqBits, popcount, RangeBins, wordCount } from '../src/listings/bits.ts';

const rows = (words: Uint32Array, n: number) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) if ((words[i >>> 5] >>> (i & 31)) & 1) out.push(i);
  return out;
};

describe('word-parallel row sets', () => {
  // Sizes around word boundaries; continuous values, a few discrete ones (most rows in one value, so a
  // bin is empty or holds one value), and unknown values.
  const columns: [string, (r: () => number) => number][] = [
    ['continuous', (r) => Math.round(r() * 500000) / 100],
    [
      'discrete, skewed (rooms)',
      (r) => {
        const x = r();
        return x < 0.6 ? 1 : x < 0.8 ? 2 : x < 0.95 ? 3 : 8;
      },
    ],
    ['with unknowns', (r) => (r() < 0.2 ? NaN : Math.floor(r() * 40))],
    ['one value', () => 7],
  ];
  for (const n of [1, 31, 32, 33, 1000, 5003]) {
    for (const [what, gen] of columns) {
      it(`a range is exactly the rows with lo <= value <= hi (${what}, ${n} rows)`, () => {
        const r = mulberry32(n * 7 + what.length);
        const values = Float64Array.from({ length: n }, () => gen(r));
        const order = Uint32Array.from(
          [...values.keys()].filter((i) => !Number.isNaN(values[i])).sort((a, b) => values[a] - values[b] || a - b),
        );
        const plain = new RangeBins(values, n),
          ordered = new RangeBins(values, n, order);
        const out = new Uint32Array(wordCount(n));
        const known = [...values].filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
        const bounds = [
          -Infinity,
          Infinity,
          0,
          1,
          2,
          3,
          7,
          8,
          ...known.filter((_, k) => k % Math.max(1, Math.floor(known.length / 12)) === 0),
          ...Array.from({ length: 10 }, () => r() * 5000),
        ];
        for (const lo of bounds)
          for (const hi of bounds) {
            const expected: number[] = [];
            for (let i = 0; i < n; i++) if (values[i] >= lo && values[i] <= hi) expected.push(i);
            for (const [how, bins] of [
              ['row tests', plain],
              ['value order', ordered],
            ] as const) {
              bins.select(lo, hi, out);
              assert.deepEqual(rows(out, n), expected, `[${lo}, ${hi}] by ${how}`);
              assert.equal(popcount(out, n), expected.length);
            }
          }
      });
    }
  }

  it('equality bitmaps, popcount and accumulation on either side agree with a row loop', () => {
    const r = mulberry32(5);
    const n = 4099;
    const codes = Uint16Array.from({ length: n }, () => Math.floor(r() * 4));
    const price = Float64Array.from({ length: n }, () => (r() < 0.1 ? NaN : Math.floor(r() * 3000)));
    const order = [...price.keys()].filter((i) => !Number.isNaN(price[i])).sort((a, b) => price[a] - price[b] || a - b);
    const rank = new Uint32Array(n).fill(0xffffffff);
    order.forEach((i, pos) => {
      rank[i] = pos;
    });
    for (let code = 0; code < 5; code++) {
      const bits = eqBits(codes, code, n);
      const expected = [...codes.keys()].filter((i) => codes[i] === code);
      assert.deepEqual(rows(bits, n), expected);
      assert.equal(popcount(bits, n), expected.length);
      for (const side of [0, 1]) {
        const these = side ? [...codes.keys()].filter((i) => codes[i] !== code) : expected;
        const buckets = new Uint32Array((n >> 4) + 1),
          acc = new Float64Array(3);
        accumulateBits(bits, n, side, rank, price, 4, buckets, acc);
        const priced = these.filter((i) => !Number.isNaN(price[i]));
        assert.deepEqual([...acc], [these.length, priced.length, priced.reduce((s, i) => s + price[i], 0)]);
        const want = new Uint32Array(buckets.length);
        for (const i of priced) want[rank[i] >>> 4]++;
        assert.deepEqual(buckets, want);
      }
    }
  });
});
