// Locale over HTTP: translated free text where the fixture has it, English field by field where it does not,
// location display names in the locale, and ids, enum codes and numbers unchanged across locales.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOCALES } from '../snapshot-format/locales.ts';
import { useServer } from './support/server.ts';
import { assert400 } from './support/shapes.ts';

const server = useServer();

const data = async (path: string, locale?: string) => {
  const res = await server.get(locale ? `${path + (path.includes('?') ? '&' : '?')}locale=${locale}` : path);
  assert.equal(res.status, 200, `${path} ${locale}: ${res.text.slice(0, 300)}`);
  assert.equal(res.body.meta.locale, locale ?? 'en');
  return res.body.data;
};
const find = (xs: any[], id: string) => xs.find((x) => x.id === id);

describe('listings: translated titles with English fallback', () => {
  it('serves the Dutch title in nl and English in the locales without a translation (lst-001)', async () => {
    assert.equal((await data('/v1/listings/lst-001', 'nl')).title, 'Lichte woning in De Pijp');
    for (const l of ['en', 'de', 'fr', 'es'])
      assert.equal((await data('/v1/listings/lst-001', l)).title, 'Bright apartment in De Pijp', l);
  });
  it('falls back field by field: a translated title with an English description', async () => {
    const d = await data('/v1/listings/lst-001', 'nl');
    assert.equal(d.title, 'Lichte woning in De Pijp');
    assert.equal(d.description, 'Description of lst-001 with balcony');
  });
  it('serves a translated description with the English title where only the description is translated (lst-002)', async () => {
    const nl = await data('/v1/listings/lst-002', 'nl');
    assert.equal(nl.title, 'Canal house with garden');
    assert.equal(nl.description, 'Beschrijving van lst-002 met tuin');
    for (const l of ['en', 'de', 'fr', 'es'])
      assert.equal((await data('/v1/listings/lst-002', l)).description, 'Description of lst-002 with balcony', l);
  });
  it('serves title and description in de where both are translated (lst-003)', async () => {
    const de = await data('/v1/listings/lst-003', 'de');
    assert.equal(de.title, 'Studio beim Vondelpark');
    assert.equal(de.description, 'Beschreibung von lst-003 mit Balkon');
    assert.equal(find(await data('/v1/listings?limit=100', 'de'), 'lst-003').title, 'Studio beim Vondelpark');
  });
  it('serves the German title only in de (lst-003)', async () => {
    assert.equal((await data('/v1/listings/lst-003', 'de')).title, 'Studio beim Vondelpark');
    assert.equal((await data('/v1/listings/lst-003', 'nl')).title, 'Studio near Vondelpark');
  });
  it('serves nl and fr titles of lst-007 and English in de and es', async () => {
    assert.equal((await data('/v1/listings/lst-007', 'nl')).title, 'Appartement centrum Den Haag');
    assert.equal((await data('/v1/listings/lst-007', 'fr')).title, 'Appartement centre La Haye');
    assert.equal((await data('/v1/listings/lst-007', 'de')).title, 'Apartment Den Haag centre');
    assert.equal((await data('/v1/listings/lst-007', 'es')).title, 'Apartment Den Haag centre');
  });
  it('translates search results the same way as the detail', async () => {
    for (const l of LOCALES) {
      const list = await data('/v1/listings?limit=100', l);
      for (const id of ['lst-001', 'lst-003', 'lst-007'])
        assert.equal(find(list, id).title, (await data(`/v1/listings/${id}`, l)).title, `${id} ${l}`);
    }
  });
  it('defaults to English without a locale parameter', async () => {
    assert.equal((await data('/v1/listings/lst-007')).title, 'Apartment Den Haag centre');
    assert.equal((await data('/v1/listings/lst-007')).location.city, 'The Hague');
  });
});

describe('location display names follow the locale', () => {
  const HAGUE = { en: 'The Hague', nl: 'Den Haag', de: 'Den Haag', fr: 'La Haye', es: 'La Haya' } as const;
  for (const l of LOCALES) {
    it(`names loc-dh "${HAGUE[l]}" in ${l}, in the listing detail, search and similar results`, async () => {
      assert.equal((await data('/v1/listings/lst-008', l)).location.city, HAGUE[l]);
      assert.equal(find(await data('/v1/listings?location_id=loc-dh', l), 'lst-008').location.city, HAGUE[l]);
      assert.equal(find(await data('/v1/listings/lst-007/similar', l), 'lst-008').location.city, HAGUE[l]);
    });
  }
  it(`names loc-dh in the locations endpoints in the locale`, async () => {
    for (const l of LOCALES) {
      assert.equal((await data('/v1/locations/loc-dh', l)).name, HAGUE[l]);
      assert.equal(find(await data('/v1/locations?type=city', l), 'loc-dh').name, HAGUE[l]);
    }
  });
  it('falls back to the English name where a location has no translation (Amsterdam, North Holland in fr)', async () => {
    assert.equal((await data('/v1/listings/lst-001', 'fr')).location.city, 'Amsterdam');
    assert.equal((await data('/v1/locations/loc-nh', 'fr')).name, 'North Holland');
    assert.equal((await data('/v1/locations/loc-nh', 'de')).name, 'Nordholland');
  });
  it('names the parent chain in the locale', async () => {
    const parents = (await data('/v1/locations/loc-ams-pijp', 'nl')).parents;
    assert.deepEqual(
      parents.map((p: any) => p.name),
      ['Noord-Holland', 'Amsterdam'],
    );
  });
});

describe('other resources: translated free text with English fallback', () => {
  it('owners: Dutch short description, English long description in nl', async () => {
    const o = await data('/v1/owners/own-1', 'nl');
    assert.equal(o.description_short, 'Amsterdams makelaarskantoor');
    assert.equal(o.description, 'A long description of Canal Homes.');
    assert.equal(find(await data('/v1/owners', 'nl'), 'own-1').description_short, 'Amsterdams makelaarskantoor');
    assert.equal((await data('/v1/owners/own-1', 'fr')).description_short, 'Amsterdam agency');
  });
  it('internet providers: Dutch description and strengths, English support details and considerations in nl', async () => {
    const p = await data('/v1/internet/providers/inet-kpn', 'nl');
    assert.equal(p.description, 'Nederlandse telecomaanbieder');
    assert.deepEqual(p.strengths, ['Glasvezeldekking', 'Stabiel']);
    assert.deepEqual(p.considerations, ['Pricier']);
    assert.equal(p.support_details, 'Phone support 8-22');
    assert.equal((await data('/v1/internet/providers/inet-kpn', 'de')).description, 'Dutch telecom incumbent');
  });
  it('internet plans: Dutch description in nl, English in es', async () => {
    assert.equal(find(await data('/v1/internet/plans', 'nl'), 'plan-1').description, 'Snelle glasvezel');
    assert.equal(find(await data('/v1/internet/plans', 'es'), 'plan-1').description, 'Fast ﬁbre'); // served as written (the ligature); only the index folds it
  });
  it('insurance products: Dutch headline, English summary in nl', async () => {
    const p = find(await data('/v1/insurance/products', 'nl'), 'insp-1');
    assert.equal(p.headline, 'Verzeker je spullen');
    assert.equal(p.summary, 'Covers theft and fire.');
  });
  it('platforms: Dutch headline, English features, description and content in nl', async () => {
    const p = await data('/v1/platforms/plat-funda', 'nl');
    assert.equal(p.headline, 'De grootste woningsite');
    assert.deepEqual(p.features, ['Alerts', 'Map search']);
    assert.equal(p.description, 'Funda lists homes.');
    assert.equal(p.content, '# Funda\nLong **Markdown** content.');
  });
  it('articles: Dutch title, English description in nl', async () => {
    const a = await data('/v1/articles/art-1', 'nl');
    assert.equal(a.title, 'Huren in Amsterdam');
    assert.equal(a.description, 'A guide');
  });
  it('articles search: Dutch title, English description in nl', async () => {
    const a = find(await data('/v1/articles', 'nl'), 'art-1');
    assert.equal(a.title, 'Huren in Amsterdam');
    assert.equal(a.description, 'A guide');
  });
  it('glossary: Dutch term, English definition in nl; English term in de', async () => {
    for (const g of [
      await data('/v1/glossary/gl-huurtoeslag', 'nl'),
      find(await data('/v1/glossary', 'nl'), 'gl-huurtoeslag'),
    ]) {
      assert.equal(g.term, 'Huurtoeslag');
      assert.equal(g.definition, 'A government allowance towards rent.');
    }
    assert.equal((await data('/v1/glossary/gl-huurtoeslag', 'de')).term, 'Rent benefit');
  });
  it('metrics: Dutch name where translated, English otherwise', async () => {
    const ms = await data('/v1/market/metrics', 'nl');
    assert.equal(find(ms, 'median_rent').name, 'Mediane vraaghuur');
    assert.equal(find(ms, 'new_listings').name, 'New listings');
    assert.equal(find(await data('/v1/market/metrics', 'fr'), 'median_rent').name, 'Median asking rent');
  });
});

describe('ids, codes and numbers do not depend on the locale', () => {
  /** The record without its translated fields (free text and location display names). */
  const strip = (x: any, fields: string[]) => {
    const c = structuredClone(x);
    for (const f of fields) delete c[f];
    if (c.location) delete c.location.city;
    if (c.parents) c.parents = c.parents.map((p: any) => ({ ...p, name: undefined }));
    return c;
  };
  const CASES: [string, string[]][] = [
    ['/v1/listings/lst-007', ['title', 'description']],
    ['/v1/listings?limit=100', ['title']],
    ['/v1/listings/lst-007/similar', ['title']],
    ['/v1/listings/stats', []],
    ['/v1/owners/own-1', ['areas_served', 'description_short', 'description']], // areas: places' names
    ['/v1/internet/providers/inet-kpn', ['description', 'support_details', 'strengths', 'considerations']],
    ['/v1/internet/plans', ['description']],
    ['/v1/insurance/products', ['headline', 'summary']],
    ['/v1/insurance/providers/ins-centraal', []],
    ['/v1/platforms/plat-funda', ['headline', 'features', 'description', 'pricing_details', 'content']],
    ['/v1/articles/art-1', ['title', 'description', 'content']],
    ['/v1/articles', ['title', 'description']],
    ['/v1/insurance/providers', []],
    ['/v1/glossary', ['term', 'definition']],
    ['/v1/glossary/gl-huurtoeslag', ['term', 'definition']],
    ['/v1/locations/loc-ams-pijp', ['name']],
    ['/v1/market/metrics', ['name', 'description']],
    ['/v1/market/metrics/new_listings/observations?location_id=loc-dh&from=2026-01-01&to=2026-12-31', []],
  ];
  for (const [path, translated] of CASES) {
    it(`GET ${path.split('?')[0]} returns the same ids, codes and numbers in every locale`, async () => {
      const norm = (d: any) => (Array.isArray(d) ? d.map((x) => strip(x, translated)) : strip(d, translated));
      const en = norm(await data(path, 'en'));
      for (const l of ['nl', 'de', 'fr', 'es']) assert.deepEqual(norm(await data(path, l)), en, l);
    });
  }
});

describe('Content-Language names the languages actually in the body', () => {
  const language = async (path: string) => {
    const res = await server.get(path);
    assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 300)}`);
    return res.headers.get('content-language');
  };
  const CASES: [string, string | null][] = [
    // Listings: title, description and the city's display name.
    ['/v1/listings/lst-007?locale=nl', 'nl, en'], // Dutch title and city, English description
    ['/v1/listings/lst-008?locale=de', 'de, en'], // English title and description, German city name
    ['/v1/listings/lst-001?locale=fr', 'en'], // nothing in French: title, description, Amsterdam
    ['/v1/listings/lst-001', 'en'],
    ['/v1/listings/lst-002?locale=nl', 'nl, en'], // English title, Dutch description, Amsterdam
    ['/v1/listings/lst-003?locale=de', 'de, en'], // German title and description, Amsterdam
    ['/v1/listings?owner_id=own-1&limit=1&locale=nl', 'nl, en'], // lst-001: Dutch title, Amsterdam
    ['/v1/listings/lst-007?locale=en', 'en'],
    // A page is the union of its rows; the extra row read to tell has_more (lst-008, English title) is not on it.
    ['/v1/listings?location_id=loc-dh&limit=1&locale=fr', 'fr'],
    ['/v1/listings?location_id=loc-dh&limit=2&locale=fr', 'fr, en'],
    ['/v1/listings/lst-007/similar?locale=fr', 'fr, en'],
    // No translated field in the body: no header.
    ['/v1/listings?location_id=no-such-place&locale=nl', null],
    ['/v1/listings/stats?locale=nl', null],
    ['/v1/insurance/providers/ins-centraal?locale=nl', null],
    ['/v1/market/metrics/new_listings/observations?location_id=loc-dh&from=2026-01-01&to=2026-12-31&locale=nl', null],
    // The other resources, field by field and row by row.
    ['/v1/locations/loc-dh?locale=nl', 'nl'], // Den Haag in Zuid-Holland: both named in Dutch
    ['/v1/locations/loc-dh?locale=de', 'de, en'], // Den Haag in South Holland
    ['/v1/locations/loc-ams-pijp?locale=nl', 'nl, en'],
    ['/v1/glossary/gl-huurtoeslag?locale=nl', 'nl, en'],
    ['/v1/glossary/gl-huurtoeslag?locale=de', 'en'],
    ['/v1/market/metrics?locale=nl', 'nl, en'],
    ['/v1/market/metrics?locale=en', 'en'],
    ['/v1/owners/own-1?locale=nl', 'nl, en'],
    ['/v1/owners/own-1?locale=fr', 'fr, en'], // the areas served name La Haye; the short description is English
    // Areas served: only the ones that are places count, as a listing's city does.
    ['/v1/owners/own-4?locale=nl', 'nl'], // Den Haag; Randstad is the source's own text
    ['/v1/owners/own-4', 'en'],
    ['/v1/owners/own-5?locale=nl', null], // no area, no text
    ['/v1/owners/own-5', null],
    ['/v1/internet/providers/inet-kpn?locale=nl', 'nl, en'],
    ['/v1/platforms/plat-funda?locale=nl', 'nl, en'],
    ['/v1/articles/art-1?locale=nl', 'nl, en'],
    ['/v1/insurance/products?locale=nl', 'nl, en'],
  ];
  for (const [path, want] of CASES)
    it(`GET ${path}: ${want ?? 'none'}`, async () => {
      assert.equal(await language(path), want);
    });
  it('is not on an error', async () => {
    const res = await server.get('/v1/listings/no-such-listing?locale=nl');
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('content-language'), null);
  });
});

describe('unsupported locales', () => {
  for (const l of ['it', 'EN', 'nl-NL', 'nl_NL', 'english', 'e']) {
    it(`returns 400 for locale=${l}`, async () => {
      assert400(await server.get(`/v1/listings/lst-001?locale=${l}`), 'locale');
    });
  }
});

describe('only the locale parameter selects the language', () => {
  it('answers in English to Accept-Language: nl without locale, and says so where locales are described', async () => {
    const res = await server.get('/v1/listings/lst-001', { headers: { 'Accept-Language': 'nl' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.meta.locale, 'en');
    assert.equal(res.body.data.title, 'Bright apartment in De Pijp');
    assert.equal(res.headers.get('content-language'), 'en');
    const doc = (await server.get('/v1/openapi.json')).body;
    const param = doc.paths['/v1/listings/{id}'].get.parameters.find((p: { name: string }) => p.name === 'locale');
    assert.match(param.description, /Only this parameter selects the language: Accept-Language is not read/);
  });
});
