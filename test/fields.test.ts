// itemJson (src/routes/support/fields.ts): an item's JSON text straight from its row must be exactly the text that
// JSON.stringify makes of the item object (stored JSON parsed, 0/1 as booleans), field order included; itemSql,
// the same text made by SQLite, exactly itemJson's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { mulberry32 } from '../generate/random.ts';
import { IN_ENGLISH, IN_LOCALE } from '../src/http/content-language.ts';
import { F, itemJson, itemSelect, itemSql, itemText, parseJson, rowJson } from '../src/routes/support/fields.ts';
import { itemOf, smallSearch } from '../src/routes/support/small-search.ts';

describe('itemJson', () => {
  const toJson = itemJson({ id: F.str, n: F.str, x: F.str, flag: F.bool, list: F.strs, obj: F.strs });
  const rows = [
    { id: 'a"b\\c\u2028\ud800', n: 12.5, x: null, flag: 1, list: '["é","\\u0001"]', obj: '{"a":{"b":[1,2.5,null]}}' },
    { id: 'plain', n: -0, x: 'text', flag: 0, list: null, obj: '{}' },
    { id: 'z', n: 1e21, x: '', flag: null, list: '[]', obj: null, extra: 'not an item field', _lang: 3 },
  ];
  for (const r of rows)
    it(`matches JSON.stringify of the mapped object for ${JSON.stringify(r.id)}`, () => {
      const object = {
        id: r.id,
        n: r.n,
        x: r.x,
        flag: r.flag === null ? null : r.flag === 1,
        list: parseJson(r.list),
        obj: parseJson(r.obj),
      };
      assert.equal(toJson(r), JSON.stringify(object));
    });
  it('writes null for a field the row does not have', () => {
    assert.equal(itemJson({ a: F.str, b: F.strs, c: F.bool })({}), '{"a":null,"b":null,"c":null}');
  });
});

describe('itemSql', () => {
  // SQLite's JSON text must be exactly itemJson's (JSON.stringify's) for the column types itemSql takes.
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE t (rid INTEGER PRIMARY KEY, id TEXT, s TEXT, n INTEGER, flag INTEGER, list TEXT, r REAL);
           CREATE TABLE t_i18n (k INTEGER PRIMARY KEY, rid INTEGER, locale TEXT, s TEXT)`);
  const odd = 'He said "hi" \\ back\\slash \u0001\u001f\u007f tab\t nl\n \u2028\u2029 é ß 🏠 </script> \'quote\'';
  const rows = [
    { rid: 1, id: 'a', s: odd, n: 9007199254740991, flag: 1, list: '["é","\\u0001"]' },
    { rid: 2, id: 'b', s: '', n: -12, flag: 0, list: null },
    { rid: 3, id: 'c', s: null, n: null, flag: null, list: '{"a":[1,2.5,null]}' },
    { rid: 4, id: 'd', s: 'English', n: 0, flag: 2, list: '[]' },
  ];
  const insert = db.prepare('INSERT INTO t (rid, id, s, n, flag, list) VALUES (@rid, @id, @s, @n, @flag, @list)');
  for (const r of rows) insert.run(r);
  db.prepare("INSERT INTO t_i18n VALUES (4 * 8 + 1, 4, 'nl', ?)").run(`Nederlands ${odd}`);
  const fields = { id: F.str, s: F.str, n: F.str, flag: F.bool, list: F.strs } as const;
  const toJson = itemJson(fields);
  it('writes each row as itemJson does: strings, integers, booleans, stored JSON and nulls', () => {
    const sql = db.prepare(`${itemSelect(db, 't', 'x', fields)} ORDER BY x.rid`);
    const got = sql.all() as { id: string; json: string }[];
    assert.deepEqual(
      got.map((r) => r.json),
      rows.map((r) => toJson(r)),
    );
    assert.deepEqual(
      got.map((r) => r.id),
      rows.map((r) => r.id),
    );
  });
  it('reads translated fields in the locale, falling back to English, with their language bits', () => {
    const sql = db.prepare(`${itemSelect(db, 't', 'x', fields, ['s'])} ORDER BY x.rid`);
    const nl = sql.all({ locale: 'nl' }) as { json: string; _lang: number }[];
    assert.equal(JSON.parse(nl[3].json).s, `Nederlands ${odd}`);
    assert.equal(nl[3]._lang, IN_LOCALE);
    assert.equal(JSON.parse(nl[0].json).s, odd);
    assert.equal(nl[0]._lang, IN_ENGLISH);
    assert.equal(nl[2]._lang, 0); // no text at all
  });
  it('writes REAL values and integers past 2^53 as JSON.stringify does (SQLite would print 100.0, 17 digits, every digit)', () => {
    const reals = [
      100,
      -0,
      0.1 + 0.2,
      1 / 3,
      52.3676,
      4.9041,
      9.95,
      1e21,
      1e-7,
      5e-324,
      1.7976931348623157e308,
      2 ** 53,
      -2.5,
      12.5,
      2 ** 63 - 1024,
      -(2 ** 63),
    ];
    // and doubles of every exponent from their bits
    const rnd = mulberry32(11);
    const view = new DataView(new ArrayBuffer(8));
    for (let i = 0; i < 2000; i++) {
      for (let b = 0; b < 8; b++) view.setUint8(b, Math.floor(rnd() * 256));
      const x = view.getFloat64(0);
      if (Number.isFinite(x)) reals.push(x);
    }
    const mem = new Database(':memory:');
    mem.exec('CREATE TABLE t (rid INTEGER PRIMARY KEY, id TEXT, r REAL, n INTEGER)');
    const ins = mem.prepare('INSERT INTO t VALUES (?, ?, ?, ?)');
    for (const [i, x] of reals.entries()) ins.run(i + 1, `r${i}`, x, x);
    const fieldsR = { id: F.str, r: F.str, n: F.str } as const;
    const got = (mem.prepare(`${itemSelect(mem, 't', 'x', fieldsR)} ORDER BY x.rid`).all() as { json: string }[]).map(
      (r) => itemText(r.json),
    );
    const stored = mem.prepare('SELECT id, r, n FROM t ORDER BY rid').all() as Record<string, unknown>[];
    assert.deepEqual(got, stored.map(itemJson(fieldsR)));
    assert.ok(got.includes('{"id":"r0","r":100,"n":100}'));
  });
  it('refuses an unknown column', () => {
    assert.throws(() => itemSql(db, 't', 'x', { nope: F.str }), /t has no column nope/);
  });
});

describe('smallSearch with json (items made once per snapshot and locale)', () => {
  // The same search with and without `json` must give the same items (text, id, language bits) for every locale,
  // filter, cursor and page size; with `json`, each item is made once and the rows are the kept items.
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE t (rid INTEGER PRIMARY KEY, id TEXT UNIQUE, s TEXT, kind TEXT, shown INTEGER, r REAL);
           CREATE TABLE t_i18n (k INTEGER PRIMARY KEY, rid INTEGER, locale TEXT, s TEXT)`);
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)');
  const tr = db.prepare('INSERT INTO t_i18n VALUES (? * 8 + ?, ?, ?, ?)');
  for (let rid = 1; rid <= 40; rid++) {
    insert.run(
      rid,
      `t_${String(rid).padStart(3, '0')}`,
      rid % 7 ? `text ${rid} "é"` : null,
      rid % 3 ? 'a' : 'b',
      rid % 5 ? 1 : 0,
      rid / 3,
    );
    if (rid % 2) tr.run(rid, 1, rid, 'nl', `tekst ${rid}`);
    if (rid % 9 === 0) tr.run(rid, 2, rid, 'de', `Text ${rid}`);
  }
  const fields = { id: F.str, s: F.str, kind: F.str, r: F.str } as const;
  const opts = {
    select: itemSelect(db, 't', 'x', fields, ['s']),
    alias: 'x',
    where: 'x.shown = 1',
    clauses: { kind: 'x.kind = @kind' },
  };
  const plain = smallSearch(db, opts);
  const made = smallSearch(db, { ...opts, json: rowJson });
  it('gives the items the statement makes, in every locale, with filters, cursors and page sizes', () => {
    let compared = 0;
    for (const locale of ['nl', 'en', 'de', 'fr', 'es'])
      for (const filters of [{}, { kind: 'a' }, { kind: 'b' }, { kind: 'none' }])
        for (const after of [null, 't_000', 't_007', 't_010', 't_0255', 't_040'])
          for (const n of [1, 5, 50]) {
            const want = plain(filters, after, n, locale);
            const got = made(filters, after, n, locale);
            assert.deepEqual(
              got.map((r) => [r.id, itemOf(r), r._lang]),
              want.map((r) => [r.id, rowJson(r), r._lang]),
              `${locale} ${JSON.stringify(filters)} after ${after} limit ${n}`,
            );
            compared += got.length;
          }
    assert.ok(compared > 1000, `compared ${compared} items`);
  });
  it('makes each item once: the rows of two searches are the same objects', () => {
    const [a] = made({}, null, 1, 'nl');
    const [b] = made({ kind: 'a' }, null, 1, 'nl');
    assert.equal(a.id, 't_001');
    assert.equal(b, a);
    assert.notEqual(made({}, null, 1, 'en')[0], a, 'another locale, another item');
  });
  it('never gives a row the where clause leaves out', () => {
    const ids = made({}, null, 100, 'en').map((r) => r.id);
    assert.equal(ids.length, 32);
    assert.ok(!ids.includes('t_005'));
  });
});
