// The discovery endpoints over HTTP (GET /v1/articles, /v1/insurance/providers, /v1/glossary, /v1/glossary/{id}):
// envelopes, cursor walks, filters and q against a model of the source, locale fallback, 400/401/404, and the
// query plans of their statements. A generated source (30 articles, 28 glossary terms, 7 insurers), real compiler.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import * as articles from '../src/routes/articles.ts';
import * as glossary from '../src/routes/glossary.ts';
import * as insurance from '../src/routes/insurance.ts';
import { type Rec, tokens, useGenerated, walk, withParams } from './support/model.ts';
import {
  ARTICLE_SUMMARY,
  assert400,
  assertCollection,
  assertDetail,
  assertError,
  GLOSSARY_ENTRY,
  INSURANCE_PROVIDER,
  type Shape,
} from './support/shapes.ts';

const { model: src, server, snapshot } = useGenerated(40, 3);

const COLLECTIONS: { path: string; file: string; shape: Shape }[] = [
  { path: '/v1/articles', file: 'articles', shape: ARTICLE_SUMMARY },
  { path: '/v1/insurance/providers', file: 'insurance_providers', shape: INSURANCE_PROVIDER },
  { path: '/v1/glossary', file: 'glossary', shape: GLOSSARY_ENTRY },
];

/** Published records of a source file, ascending by id. */
const published = (file: string): Rec[] =>
  src.all[file].filter((r) => r.published !== false).sort((a, b) => (a.id < b.id ? -1 : 1));
const idsOf = (xs: Rec[]): string[] => xs.map((x) => x.id);
/** Every id a search returns, over all its pages. */
const allIds = async (path: string) => idsOf((await walk(server, path, 100)).items);
/** A translated source field in a locale, English where the locale has no text (null when the field has none). */
const tr = (field: Record<string, string> | null | undefined, locale: string) =>
  field ? (field[locale] ?? field.en ?? null) : null;
/** Records whose text in any locale has every word of q as a word. */
const matching = (file: string, fields: string[], q: string) =>
  idsOf(
    published(file).filter((r) => {
      const words = new Set(
        fields
          .flatMap((f): string[] => (typeof r[f] === 'string' ? [r[f]] : Object.values(r[f] ?? {})))
          .flatMap(tokens),
      );
      return tokens(q).every((t) => words.has(t));
    }),
  );

describe('envelopes, paging and parameter rules', () => {
  for (const c of COLLECTIONS) {
    it(`GET ${c.path} returns the collection envelope with the documented fields`, async () => {
      const res = await server.get(c.path);
      assertCollection(res, c.shape);
      assert.deepEqual(idsOf(res.body.data), idsOf(published(c.file)).slice(0, 20));
    });
    it(`walks ${c.path} with limit 1 and 4: every published id exactly once, ascending`, async () => {
      for (const limit of [1, 4]) {
        const { items, pages } = await walk(server, c.path, limit);
        assert.deepEqual(idsOf(items), idsOf(published(c.file)));
        assert.equal(pages, Math.ceil(items.length / limit));
      }
    });
    it(`GET ${c.path} returns 400 naming an unknown or a repeated parameter`, async () => {
      assert400(await server.get(`${c.path}?provider=x`), 'provider');
      assert400(await server.get(`${c.path}?limit=2&limit=3`), 'limit');
    });
    it(`GET ${c.path} returns 401 without a key`, async () => {
      assertError(await server.get(c.path, { key: null }), 401, { code: 'unauthorized' });
    });
  }
  it('GET /v1/glossary/{id} returns one entry; 404 for an unknown or unpublished id; 401 without a key', async () => {
    assertDetail(await server.get('/v1/glossary/term_0003'), GLOSSARY_ENTRY);
    const hidden = src.all.glossary.find((g) => g.published === false)!;
    assertError(await server.get('/v1/glossary/term_9999'), 404, { code: 'not_found' });
    assertError(await server.get(`/v1/glossary/${hidden.id}`), 404, { code: 'not_found' });
    assertError(await server.get('/v1/glossary/term_0003', { key: null }), 401, { code: 'unauthorized' });
  });
  it('rejects a category or location_id of 121 characters on /v1/articles', async () => {
    assert400(await server.get(`/v1/articles?category=${'c'.repeat(121)}`), 'category');
    assert400(await server.get(`/v1/articles?location_id=${'l'.repeat(121)}`), 'location_id');
  });
});

describe('cursors are bound to the endpoint, the filters and the limit', () => {
  const next = async (path: string) => (await server.get(path)).body.pagination.next_cursor as string;
  it('rejects a cursor of another endpoint, another filter set or another limit with 400', async () => {
    const glossaryCursor = await next('/v1/glossary?limit=2');
    assert400(await server.get(withParams('/v1/articles', { limit: 2, cursor: glossaryCursor })), 'cursor');
    const insurerCursor = await next('/v1/insurance/providers?limit=2');
    assert400(await server.get(withParams('/v1/owners', { limit: 2, cursor: insurerCursor })), 'cursor');
    const articleCursor = await next('/v1/articles?limit=2');
    assert400(
      await server.get(withParams('/v1/articles?category=legal', { limit: 2, cursor: articleCursor })),
      'cursor',
    );
    assert400(await server.get(withParams('/v1/articles', { limit: 3, cursor: articleCursor })), 'cursor');
    assert.equal((await server.get(withParams('/v1/articles', { limit: 2, cursor: articleCursor }))).status, 200);
  });
});

describe('article filters and q', () => {
  it('filters by category', async () => {
    const categories = new Set(published('articles').map((a) => a.category));
    assert.ok(categories.size >= 4);
    for (const cat of categories)
      assert.deepEqual(
        await allIds(`/v1/articles?category=${cat}`),
        idsOf(published('articles').filter((a) => a.category === cat)),
      );
    assert.deepEqual(await allIds('/v1/articles?category=no_such_category'), []);
  });
  it('filters by location_id: a city finds its guide, a province the guides of every city inside it', async () => {
    const located = published('articles').filter((a) => a.location_id);
    const city = located[0].location_id as string;
    const province = src.locations.get(city)!.parent_id as string;
    assert.equal(src.locations.get(province)!.type, 'province');
    for (const loc of [city, province]) {
      const want = idsOf(located.filter((a) => src.ancestorsOf(a.location_id).includes(loc)));
      assert.ok(want.length > 0);
      assert.deepEqual(await allIds(`/v1/articles?location_id=${loc}`), want, loc);
    }
    assert.ok((await allIds(`/v1/articles?location_id=${province}`)).length > 1, 'a province holds several guides');
    assert.deepEqual(await allIds('/v1/articles?location_id=loc_unknown'), []);
  });
  it('finds with q every article whose title or description has every term, in any locale (not the content)', async () => {
    for (const q of [
      'amsterdam',
      'BRP',
      'neighbourhoods',
      'huren Amsterdam',
      'prises',
      'ETUDIANTS',
      'alquiler barrios',
      'zzz',
    ]) {
      const want = matching('articles', ['title', 'description'], q);
      assert.deepEqual(await allIds(withParams('/v1/articles', { q })), want, q);
    }
    assert.ok(matching('articles', ['title', 'description'], 'neighbourhoods').length > 10);
    assert.ok(matching('articles', ['title', 'description'], 'prises').length > 0, 'finds "prisés"');
    assert.ok(matching('articles', ['title', 'description'], 'etudiants').length > 0, 'finds "étudiants"');
    assert.deepEqual(await allIds('/v1/articles?q=jordaan'), [], 'a word only in the content');
    assert.ok(matching('articles', ['content'], 'jordaan').length > 0);
  });
  it('combines q with category', async () => {
    const want = idsOf(
      published('articles').filter(
        (a) => a.category === 'city_guide' && matching('articles', ['title', 'description'], 'alquiler').includes(a.id),
      ),
    );
    assert.ok(want.length > 0);
    assert.ok(want.length < matching('articles', ['title', 'description'], 'alquiler').length);
    assert.deepEqual(await allIds('/v1/articles?q=alquiler&category=city_guide'), want);
  });
  it('returns 400 for a q without letters or digits', async () => {
    assert400(await server.get(`/v1/articles?q=${encodeURIComponent('?!')}`), 'q');
  });
});

describe('q on the glossary and insurance providers', () => {
  it('searches glossary terms and definitions in every locale, ignoring case and accents', async () => {
    for (const q of ['huurtoeslag', 'deposit', 'KAUTION', 'etat', 'huur borg', 'no-such-word-here']) {
      assert.deepEqual(
        await allIds(withParams('/v1/glossary', { q })),
        matching('glossary', ['term', 'definition'], q),
        q,
      );
    }
    assert.ok(matching('glossary', ['term', 'definition'], 'etat').length > 0, 'a French accented word is found');
  });
  it('searches insurance provider names; an unpublished provider is not found', async () => {
    assert.deepEqual(await allIds('/v1/insurance/providers?q=fbto'), ['insurer_003']);
    assert.deepEqual(await allIds(`/v1/insurance/providers?q=${encodeURIComponent('Univé')}`), []);
    assert.deepEqual(
      await allIds('/v1/insurance/providers?q=direct'),
      matching('insurance_providers', ['name'], 'direct'),
    );
  });
});

describe('locale: translated text where the source has it, English field by field where not', () => {
  const CASES: [string, string, string[]][] = [
    ['/v1/articles', 'articles', ['title', 'description']],
    ['/v1/glossary', 'glossary', ['term', 'definition']],
  ];
  for (const [path, file, fields] of CASES) {
    it(`GET ${path} serves ${fields.join(' and ')} in each locale with fallback to English`, async () => {
      let translated = 0;
      let fallback = 0;
      for (const locale of ['nl', 'de', 'fr', 'es']) {
        const { items } = await walk(server, `${path}?locale=${locale}`, 100);
        const byId = new Map(published(file).map((r) => [r.id, r]));
        for (const item of items)
          for (const f of fields) {
            const source = byId.get(item.id)![f];
            assert.equal(item[f], tr(source, locale), `${item.id}.${f} in ${locale}`);
            if (source?.[locale] !== undefined && source[locale] !== source.en) translated++;
            if (source?.en !== undefined && source[locale] === undefined) fallback++;
          }
      }
      assert.ok(translated > 0 && fallback > 0, `both cases occur (${translated} translated, ${fallback} in English)`);
    });
  }
  it('GET /v1/glossary/{id} mixes locales field by field: a German definition beside the English term', async () => {
    const entry = published('glossary').find((r) => r.definition.de && !r.term.de)!;
    const res = await server.get(`/v1/glossary/${entry.id}?locale=de`);
    assertDetail(res, GLOSSARY_ENTRY, { locale: 'de' });
    assert.equal(res.body.data.term, entry.term.en);
    assert.equal(res.body.data.definition, entry.definition.de);
    assert.notEqual(entry.definition.de, entry.definition.en);
  });
});

describe('query plans', () => {
  it('scans no table but the small editorial one a statement is about, and uses the closure by its key', async () => {
    const db = new Database((await snapshot()).path, { readonly: true });
    const sqls: string[] = [];
    const spy = new Proxy(db, {
      get(target, key) {
        if (key === 'prepare')
          return (sql: string) => {
            sqls.push(sql);
            return target.prepare(sql);
          };
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const a = articles.prepare(spy);
    for (const filters of [
      {},
      { q: '[1]' },
      { category: 'x' },
      { location_id: 'x' },
      { q: '[1]', category: 'x', location_id: 'x' },
    ])
      for (const afterId of [null, 'art_0001']) a.search(filters, afterId, 3, 'nl');
    const g = glossary.prepare(spy);
    for (const filters of [{}, { q: '[1]' }]) for (const afterId of [null, 'x']) g.search(filters, afterId, 3, 'nl');
    const p = insurance.prepare(spy);
    for (const filters of [{}, { q: '[1]' }]) for (const afterId of [null, 'x']) p.providers(filters, afterId, 3, 'en');
    // Statements with parameters are the ones requests run (the term indexes read their table once, at open).
    const requestSqls = sqls.filter((s) => s.includes('@') || s.includes('?'));
    assert.ok(requestSqls.length >= 20, `${requestSqls.length} statements`);
    for (const sql of requestSqls) {
      const params = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map(([, n]) => [n, n === 'q' ? '[1]' : 'x']));
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(sql.includes('?') ? ['x'] : params) as { detail: string }[]
      ).map((r) => r.detail);
      for (const step of plan.filter((d) => d.startsWith('SCAN ')))
        assert.match(step, /^SCAN (a|g|p|json_each VIRTUAL TABLE.*)$/, `${sql}\n${plan.join('\n')}`);
      for (const step of plan.filter((d) => /location_closure|_i18n|\bt\b/.test(d)))
        assert.match(step, /^SEARCH .*(PRIMARY KEY|INDEX)/, `${sql}\n${plan.join('\n')}`);
    }
    db.close();
  });
});
