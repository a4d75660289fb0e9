// The snapshot compiler refuses bad records: one problem line per mistake, as file:line: field: reason, and the
// snapshot it would have replaced is left byte-identical (test/support/builds.ts).

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { failingBuild, refusedBuild, setLine } from './support/builds.ts';
import { copyFixture } from './support/files.ts';

type Edit = (lines: string[]) => string[];
/** An edit setting some fields of the record on line `n`. */
const patch = (n: number, fields: Record<string, unknown>) => setLine(n, (r) => ({ ...r, ...fields }));
/** The problems expected: exactly these lines, one line matching this, or what a function asserts. */
type Want = string[] | RegExp | ((problems: string[]) => void);

// Each row: the test's name, the file edited, the edit, the problems.
const cases: [string, string, Edit, Want][] = [
  [
    'malformed JSON',
    'owners.ndjson',
    (l) => [l[0], '{"id": "own-x", ', ...l.slice(1)],
    /^owners\.ndjson:2: \(record\): malformed JSON: /,
  ],
  [
    'a broken line that names its id does not make every reference to it a second problem',
    'owners.ndjson',
    // own-1 owns three listings: no "unknown owner" lines
    (l) => l.map((x) => (x.includes('"id":"own-1"') ? x.slice(0, -5) : x)),
    /^owners\.ndjson:1: \(record\): malformed JSON: /,
  ],
  [
    'a location line with a problem of its own is not reported again as the unknown parent of its children',
    'locations.ndjson',
    patch(3, { published: 'yes' }),
    ['locations.ndjson:3: published: expected boolean (got "yes")'],
  ],
  [
    'an empty locations file: one problem naming it, not one for every listing',
    'locations.ndjson',
    () => [],
    ['locations.ndjson:0: (file): has no records; every listing needs its location'],
  ],
  [
    'missing required field',
    'listings.ndjson',
    setLine(3, ({ title, ...rest }) => rest),
    ['listings.ndjson:3: title: required field is missing'],
  ],
  [
    'wrong type',
    'listings.ndjson',
    patch(1, { rooms: 'three' }),
    ['listings.ndjson:1: rooms: expected number (got "three")'],
  ],
  [
    'negative price',
    'listings.ndjson',
    patch(2, { price_eur: -5 }),
    ['listings.ndjson:2: price_eur: must not be negative'],
  ],
  [
    'bad date',
    'listings.ndjson',
    patch(4, { first_seen_at: '2026-13-45' }),
    /^listings\.ndjson:4: first_seen_at: must be an ISO 8601 timestamp/,
  ],
  [
    'unknown locale key',
    'listings.ndjson',
    setLine(1, (r) => ({ ...r, title: { ...r.title, it: 'Appartamento' } })),
    ['listings.ndjson:1: title.it: unknown locale key (allowed: en, nl, de, fr, es)'],
  ],
  ['unknown field', 'owners.ndjson', patch(2, { nickname: 'P' }), ['owners.ndjson:2: nickname: unknown field']],
  [
    'duplicate id',
    'listings.ndjson',
    (l) => [...l, l[0]],
    ['listings.ndjson:13: id: duplicate id "lst-001" (first at line 1)'],
  ],
  [
    'unknown owner',
    'listings.ndjson',
    patch(2, { owner_id: 'own-404' }),
    ['listings.ndjson:2: owner_id: unknown owner "own-404"'],
  ],
  [
    'unknown location',
    'listings.ndjson',
    patch(2, { location_id: 'loc-404' }),
    ['listings.ndjson:2: location_id: unknown location "loc-404"'],
  ],
  [
    'listing placed in a province',
    'listings.ndjson',
    patch(2, { location_id: 'loc-nh' }),
    ['listings.ndjson:2: location_id: "loc-nh" is a province; a listing lies in a city or neighbourhood'],
  ],
  [
    'unknown provider',
    'internet_plans.ndjson',
    patch(3, { provider_id: 'inet-404' }),
    ['internet_plans.ndjson:3: provider_id: unknown internet provider "inet-404"'],
  ],
  [
    'unknown parent location',
    'locations.ndjson',
    patch(6, { parent_id: 'loc-404' }),
    ['locations.ndjson:6: parent_id: unknown location "loc-404"'],
  ],
  [
    'parent of the wrong level',
    'locations.ndjson',
    patch(6, { parent_id: 'loc-nh' }),
    [
      'locations.ndjson:6: parent_id: the parent of neighbourhood "loc-ams-pijp" must be a city, "loc-nh" is a province',
    ],
  ],
  [
    'reports many problems, capped, with a count of the rest',
    'listings.ndjson',
    () => Array.from({ length: 80 }, () => '{oops'),
    (p) => {
      assert.equal(p.length, 51);
      assert.equal(p[50], '… and 30 more problems');
    },
  ],
];

describe('snapshot compiler: bad input fails with file:line and leaves the old snapshot untouched', () => {
  for (const [name, file, edit, want] of cases)
    it(name, async () => {
      const p = await failingBuild(file, edit);
      if (typeof want === 'function') want(p);
      else if (Array.isArray(want)) assert.deepEqual(p, want);
      else {
        assert.equal(p.length, 1, p.join('\n'));
        assert.match(p[0], want);
      }
    });

  it('attributes with a key an object does not keep (__proto__, constructor): refused, not dropped', async () => {
    for (const key of ['__proto__', 'constructor']) {
      const p = await failingBuild('listings.ndjson', (l) =>
        l.map((x, i) => (i === 1 ? x.replace(/\}$/, `,"attributes":{"${key}":{"a":1},"floor":2}}`) : x)),
      );
      assert.deepEqual(
        p,
        ['listings.ndjson:2: attributes: must not have the keys __proto__, prototype, constructor'],
        key,
      );
    }
  });
  it('a timestamp on an impossible time of day or offset', async () => {
    for (const t of [
      '2026-01-31T25:00:00Z',
      '2026-01-31T23:60:00Z',
      '2026-01-31T23:59:60Z',
      '2026-01-31T12:00:00+24:00',
    ]) {
      const p = await failingBuild('listings.ndjson', patch(4, { updated_at: t }));
      assert.equal(p.length, 1, t);
      assert.match(
        p[0],
        /^listings\.ndjson:4: updated_at: must be an ISO 8601 timestamp with time zone on a real date and time of day/,
        t,
      );
    }
  });
  it('a missing source file', async () => {
    const src = copyFixture();
    rmSync(join(src, 'platforms.ndjson'));
    assert.match((await refusedBuild(src))[0], /^platforms\.ndjson:0: \(file\): missing source file/);
  });
});
