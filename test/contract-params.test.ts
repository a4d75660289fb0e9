// Contract tests over HTTP, 400s shared by endpoint families: unknown, repeated and unsupported parameters on any
// endpoint, limit, q and cursor on paginated collections, path ids of detail endpoints, and how error messages
// echo bad values. Basic fixture, real service.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixtureRequest, ID_ROUTES, PAGED } from './support/endpoints.ts';
import { useServer } from './support/server.ts';
import { assert400, assertError, ENDPOINTS, OBS, OBS_OK } from './support/shapes.ts';

const server = useServer();
const join = (path: string, qs: string) => path + (path.includes('?') ? '&' : '?') + qs;

describe('400 for any endpoint: unknown, repeated and unsupported parameters', () => {
  it('GET /v1/ping with an unknown parameter returns 400 naming it', async () => {
    assert400(await server.get('/v1/ping?verbose=1'), 'verbose');
  });
  it('GET /v1/openapi.json with an unknown parameter returns 400 naming it', async () => {
    assert400(await server.get('/v1/openapi.json?format=yaml'), 'format');
  });
  // Every data endpoint takes locale; each with a request that otherwise succeeds.
  for (const { pattern } of ENDPOINTS) {
    const request = async () => (await fixtureRequest(server, pattern))!;
    it(`GET ${pattern} returns 400 naming an unknown parameter`, async () => {
      assert400(await server.get(join(await request(), 'colour=red')), 'colour');
    });
    it(`GET ${pattern} returns 400 naming a repeated parameter`, async () => {
      assert400(await server.get(join(await request(), 'locale=en&locale=nl')), 'locale');
    });
    it(`GET ${pattern} returns 400 for an unsupported locale`, async () => {
      assert400(await server.get(join(await request(), 'locale=it')), 'locale');
    });
  }
  it('rejects a locale in another case or with a region (EN, nl-NL) and an empty locale', async () => {
    for (const l of ['EN', 'nl-NL', '']) assert400(await server.get(`/v1/listings?locale=${l}`), 'locale');
  });
  it('treats a repeated parameter as repeated even when both values are equal', async () => {
    assert400(await server.get('/v1/owners?limit=5&limit=5'), 'limit');
  });
  it('rejects a parameter name that differs only in case as unknown', async () => {
    assert400(await server.get('/v1/listings?Locale=en'), 'Locale');
  });
  it('rejects names of Object.prototype members (__proto__, constructor, toString) as unknown parameters', async () => {
    for (const path of ['/v1/listings', '/v1/ping', '/v1/owners/own_00001', '/v1/listings/stats']) {
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
        const res = await server.get(`${path}?${name}=1`);
        assert400(res, name);
        assert.match(res.body.error.message, /^Unknown parameter/, `${path} ${name}`);
      }
    }
  });
  it('rejects a badly percent-encoded query value naming the parameter', async () => {
    assert400(await server.get('/v1/listings?q=%E0%A4%A'), 'q');
  });
  it('rejects an oversized query string (more than 32 parameters) with 400', async () => {
    const qs = Array.from({ length: 33 }, (_, i) => `p${i}=1`).join('&');
    assertError(await server.get(`/v1/listings?${qs}`), 400, { code: 'invalid_request' });
  });
  it('does not count empty parts ("&&") as parameters', async () => {
    assert.equal((await server.get(`/v1/listings?${'&'.repeat(40)}limit=1${'&'.repeat(40)}`)).status, 200);
  });
});

describe('400 on paginated collections: limit, q and cursor rules', () => {
  for (const path of PAGED) {
    it(`GET ${path} returns 400 for a malformed limit ("abc", "1.5", empty)`, async () => {
      for (const v of ['abc', '1.5', '']) assert400(await server.get(`${path}?limit=${v}`), 'limit');
    });
    it(`GET ${path} returns 400 for an out-of-range limit (0, 101, -1)`, async () => {
      for (const v of ['0', '101', '-1']) assert400(await server.get(`${path}?limit=${v}`), 'limit');
    });
    it(`GET ${path} accepts limit 1 and 100`, async () => {
      for (const v of [1, 100]) assert.equal((await server.get(`${path}?limit=${v}`)).body.pagination.limit, v);
    });
    it(`GET ${path} returns 400 for a q of 201 characters or an empty q`, async () => {
      assert400(await server.get(`${path}?q=${'a'.repeat(201)}`), 'q');
      assert400(await server.get(`${path}?q=`), 'q');
    });
    it(`GET ${path} accepts a q of exactly 200 characters`, async () => {
      assert.equal((await server.get(`${path}?q=${'a'.repeat(200)}`)).status, 200);
    });
    it(`GET ${path} counts q in characters (code points): 200 emoji pass, 201 do not`, async () => {
      const emoji = (n: number) => encodeURIComponent(`a${'\u{1F600}'.repeat(n - 1)}`); // a letter, so q has a term
      assert.equal((await server.get(`${path}?q=${emoji(200)}`)).status, 200);
      assert400(await server.get(`${path}?q=${emoji(201)}`), 'q');
    });
    it(`GET ${path} returns 400 for a cursor over 4096 characters or an empty cursor`, async () => {
      assert400(await server.get(`${path}?cursor=${'a'.repeat(4097)}`), 'cursor');
      assert400(await server.get(`${path}?cursor=`), 'cursor');
    });
    it(`GET ${path} returns 400 for a q with no letter or digit`, async () => {
      assert400(await server.get(`${path}?q=${encodeURIComponent('!? -')}`), 'q');
    });
  }
});

describe('400 on detail endpoints: path id rules', () => {
  for (const path of ID_ROUTES) {
    it(`GET ${path} returns 400 for a path id of 121 characters`, async () => {
      assert400(await server.get(path.replace(':id', 'x'.repeat(121))), 'id');
    });
    it(`GET ${path} answers 404, not 400, for an unknown id of exactly 120 characters`, async () => {
      assertError(await server.get(path.replace(':id', 'x'.repeat(120))), 404, { code: 'not_found' });
    });
    it(`GET ${path} counts the path id in characters: 120 emoji are a 404, 121 a 400`, async () => {
      assertError(await server.get(path.replace(':id', encodeURIComponent('\u{1F3E0}'.repeat(120)))), 404, {
        code: 'not_found',
      });
      assert400(await server.get(path.replace(':id', encodeURIComponent('\u{1F3E0}'.repeat(121)))), 'id');
    });
  }
  it('GET /v1/market/metrics/{id}/observations returns 400 for a metric id of 121 characters', async () => {
    assert400(await server.get(OBS_OK.replace('median_rent', 'm'.repeat(121))), 'id');
  });
  it('decodes a percent-encoded path id once (lst%2D001 is lst-001; lst%252D001 is not)', async () => {
    assert.equal((await server.get('/v1/listings/lst%2D001')).body.data.id, 'lst-001');
    assertError(await server.get('/v1/listings/lst%252D001'), 404, { code: 'not_found' });
    assertError(await server.get('/v1/listings/100%25'), 404, { code: 'not_found' });
  });
  it('returns 400 for a path id that is not percent-encoded UTF-8, as for a query value', async () => {
    for (const path of [...ID_ROUTES, '/v1/market/metrics/:id/observations']) {
      for (const bad of ['%FF', 'lst%E0%A4%A', 'a%C3']) {
        const res = await server.get(
          path.replace(':id', bad) + (path.includes('observations') ? OBS_OK.slice(OBS.length) : ''),
        );
        assert400(res, 'id');
        assert.match(res.body.error.message, /^Path parameter "id" is not correctly percent-encoded\.$/, path);
      }
    }
    // A "%" that is itself encoded is part of the id: a 404 for an unknown one.
    assertError(await server.get('/v1/listings/100%25FF'), 404, { code: 'not_found' });
  });
  it('counts a percent-encoded path id by its decoded length', async () => {
    assert400(await server.get(`/v1/listings/${'x'.repeat(119)}%41%41`), 'id');
    assertError(await server.get(`/v1/listings/${'x'.repeat(119)}%41`), 404);
  });
});

describe('error messages echo bad values readably', () => {
  it('truncates a long bad value with "..." (not a stray "?")', async () => {
    const res = await server.get(`/v1/listings?q=${'a'.repeat(201)}`);
    assert400(res, 'q');
    assert.ok(res.body.error.message.includes(`(got "${'a'.repeat(40)}...")`), res.body.error.message);
  });
  it('shows letters and symbols of any script as they are', async () => {
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent('gemeubileerd€ Zoë 🏠')}`);
    assert400(res, 'furnishing');
    assert.ok(res.body.error.message.includes('(got "gemeubileerd€ Zoë 🏠")'), res.body.error.message);
  });
  it('shows what a reader cannot see (controls, zero-width, bidi overrides) as \\u escapes', async () => {
    const value = 'a\u0009b\u200bc\u202ed\u2028e\u{E0041}';
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent(value)}`);
    assert400(res, 'furnishing');
    assert.ok(
      res.body.error.message.includes('(got "a\\u0009b\\u200Bc\\u202Ed\\u2028e\\u{E0041}")'),
      res.body.error.message,
    );
  });
  it('escapes what cannot be told from a space or is ignorable (no-break space, variation selector, filler), a combining mark at the start, and doubles a typed backslash', async () => {
    const value = '\u0301a\u00a0b\ufe0fc\u3164d\\u200B';
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent(value)}`);
    assert400(res, 'furnishing');
    assert.ok(
      res.body.error.message.includes('(got "\\u0301a\\u00A0b\\uFE0Fc\\u3164d\\\\u200B")'),
      res.body.error.message,
    );
  });
  it('shows emoji with their variation selectors and joiners as they are, and escapes those two elsewhere', async () => {
    const value = '❤️ 👨‍👩‍👧 👍🏽 a\ufe0fb\u200dc🏠\u200d';
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent(value)}`);
    assert400(res, 'furnishing');
    assert.ok(
      res.body.error.message.includes('(got "❤️ 👨‍👩‍👧 👍🏽 a\\uFE0Fb\\u200Dc🏠\\u200D")'),
      res.body.error.message,
    );
  });
  it('cuts a long value after 40 characters, never inside a character', async () => {
    const res = await server.get(`/v1/listings?furnishing=${encodeURIComponent('🏠'.repeat(41))}`);
    assert400(res, 'furnishing');
    assert.ok(res.body.error.message.includes(`(got "${'🏠'.repeat(40)}...")`), res.body.error.message);
  });
  it('names an unknown parameter as it was sent', async () => {
    const res = await server.get(`/v1/listings?${encodeURIComponent('prijs€')}=1`);
    assert400(res, 'prijs€');
    assert.ok(res.body.error.message.startsWith('Unknown parameter "prijs€".'), res.body.error.message);
  });
});
