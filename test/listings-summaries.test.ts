// The listing summaries and details /v1/listings serves: every field from its source record, in every locale with
// English field by field where the source has no translation; the pre-serialised page SQLite puts together in the
// order of the rids given; and awkward text (quotes, controls, U+2028, emoji) carried exactly.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { mulberry32 } from '../generate/random.ts';
import { LOCALES } from '../snapshot-format/locales.ts';
import { prepare } from '../src/routes/listings.ts';
import { summariesOf } from '../src/routes/support/listing-text.ts';
import { copyFixture } from './support/files.ts';
import { all, useListings } from './support/listings.ts';
import { startServer } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

const { m, big, snapshot } = useListings();

describe('GET /v1/listings: values are the source values', () => {
  const tr = (text: Record<string, string> | null, locale: string) =>
    text === null ? null : (text[locale] ?? text.en);
  it('maps every summary field from its source record (generated fixture)', async () => {
    for (const x of await all(big)) {
      const l = m.listingById.get(x.id)!;
      const v = (k: string) => l[k] ?? null; // an absent optional source field is null
      assert.deepEqual(x, {
        id: l.id,
        slug: l.slug,
        title: l.title.en,
        price_eur: v('price_eur'),
        size_m2: v('size_m2'),
        rooms: v('rooms'),
        furnishing: v('furnishing'),
        property_type: v('property_type'),
        energy_label: v('energy_label'),
        owner_id: v('owner_id'),
        image_url: v('image_url'),
        created_at: l.created_at,
        updated_at: l.updated_at,
        location: {
          city: m.locations.get(m.cityOf(l.location_id))!.name.en,
          street: v('street'),
          number: v('number'),
          postcode: v('postcode'),
          latitude: v('latitude'),
          longitude: v('longitude'),
        },
      });
    }
  });
  it('maps the detail fields (description, images, attributes, sources) from the source record', async () => {
    for (const l of m.listings.filter((_, i) => i % 10 === 0)) {
      const res = await big.get(`/v1/listings/${l.id}`);
      assert.equal(res.status, 200);
      const d = res.body.data;
      assert.equal(d.description, tr(l.description ?? null, 'en'));
      assert.deepEqual(d.images, l.images ?? null);
      assert.deepEqual(d.attributes, l.attributes ?? null);
      assert.deepEqual(d.sources, l.sources ?? null);
    }
  });
  for (const locale of ['nl', 'de', 'fr', 'es']) {
    it(`serves ${locale} titles and city names where the source has them and English where not (every listing)`, async () => {
      const items = await all(big, { locale });
      assert.equal(items.length, m.listings.length);
      let translated = 0;
      for (const x of items) {
        const l = m.listingById.get(x.id)!;
        assert.equal(x.title, tr(l.title, locale), `${x.id} title`);
        assert.equal(x.location.city, tr(m.locations.get(m.cityOf(l.location_id))!.name, locale), `${x.id} city`);
        if (l.title[locale]) translated++;
      }
      assert.ok(translated > 0, 'the fixture has some translations in this locale');
    });
    it(`falls back field by field in ${locale} listing details`, async () => {
      for (const l of m.listings.filter((_, i) => i % 10 === 0)) {
        const d = (await big.get(`/v1/listings/${l.id}?locale=${locale}`)).body.data;
        assert.equal(d.title, tr(l.title, locale));
        assert.equal(d.description, tr(l.description ?? null, locale));
      }
    });
  }
});

describe('a page of summaries is put together by SQLite in the order of the rids given', () => {
  it('keeps any order of the rids (similar ranks them), in every locale, and names the last id', async () => {
    const db = new Database((await snapshot()).path, { readonly: true, fileMustExist: true });
    try {
      const st = prepare(db);
      const idOf = db.prepare('SELECT id FROM listings WHERE rid = ?').pluck();
      const n = db.prepare('SELECT count(*) FROM listings').pluck().get() as number;
      const rnd = mulberry32(7);
      for (let round = 0; round < 20; round++) {
        const rids = [...new Set(Array.from({ length: 1 + (round % 12) * 4 }, () => 1 + Math.floor(rnd() * n)))];
        if (round % 2 === 0) rids.reverse();
        for (const l of LOCALES) {
          const page = summariesOf(st, rids, l);
          const items = JSON.parse(`[${page.json}]`) as { id: string }[];
          assert.deepEqual(
            items.map((x) => x.id),
            rids.map((r) => idOf.get(r)),
            `${l}: ${rids.join(',')}`,
          );
          assert.equal(page.lastId, items[items.length - 1].id);
        }
      }
      assert.deepEqual(summariesOf(st, [], 'en'), { json: '', lang: 0 });
    } finally {
      db.close();
    }
  });
});

describe('pre-serialised summaries carry awkward text exactly', () => {
  it('quotes, backslashes, control characters, separators, emoji and U+2028 in every text field', async () => {
    const dir = copyFixture();
    const file = join(dir, 'listings.ndjson');
    const odd = 'He said "hi" \\ back\\slash \u0001\u0002 tab\t nl\n \u2028 \u00e9\u00df \ud83c\udfe0 </script>';
    const base = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]);
    const rec = {
      ...base,
      id: 'lst-odd',
      slug: `slug ${odd}`,
      title: { en: `T ${odd}`, nl: `NL ${odd}` },
      description: { en: `D ${odd}`, de: `DE ${odd}` },
      street: odd,
      number: '1"a',
      postcode: '1015 AB',
      energy_label: null,
      image_url: 'https://img.example.nl/a"b.jpg',
      // biome-ignore lint/correctness/noPrecisionLoss: more digits than a double holds, on purpose
      latitude: 52.123456789012345,
      longitude: -0.1,
      price_eur: 1234.5,
      size_m2: 0,
      rooms: 2.5,
      attributes: { note: odd, nested: { list: [odd, 1, null, true] } },
      images: [`https://img.example.nl/${encodeURIComponent(odd)}.jpg`],
    };
    appendFileSync(file, `${JSON.stringify(rec)}\n`);
    const server = await startServer({ SNAPSHOT_PATH: (await fixtureSnapshot(dir)).path });
    try {
      for (const locale of ['en', 'nl', 'de']) {
        const want = {
          id: rec.id,
          slug: rec.slug,
          title: rec.title[locale as 'en'] ?? rec.title.en,
          price_eur: 1234.5,
          size_m2: 0,
          rooms: 2.5,
          furnishing: rec.furnishing,
          property_type: rec.property_type,
          energy_label: null,
          owner_id: rec.owner_id,
          image_url: rec.image_url,
          created_at: rec.created_at,
          updated_at: rec.updated_at,
        };
        const d = await server.get(`/v1/listings/lst-odd?locale=${locale}`);
        assert.equal(d.status, 200);
        const { location, description, images, attributes, sources, ...rest } = d.body.data;
        assert.deepEqual(rest, want, locale);
        assert.equal(location.street, odd);
        assert.equal(location.number, '1"a');
        // biome-ignore lint/correctness/noPrecisionLoss: the same literal as the source record
        assert.equal(location.latitude, 52.123456789012345);
        assert.equal(description, (rec.description as Record<string, string>)[locale] ?? rec.description.en);
        assert.deepEqual(images, rec.images);
        assert.deepEqual(attributes, rec.attributes);
        assert.deepEqual(sources, rec.sources ?? null);
        const s = await server.get(`/v1/listings?q=back&locale=${locale}`);
        assert.equal(s.status, 200);
        const item = s.body.data.find((x: { id: string }) => x.id === 'lst-odd');
        assert.ok(item, `found by q in ${locale}`);
        assert.deepEqual({ ...item, location: undefined }, { ...want, location: undefined });
        assert.deepEqual(item.location, { ...location });
      }
    } finally {
      await server.close();
    }
  });
});
