// itemJson (src/routes/fields.ts): an item's JSON text straight from its row must be exactly the text that
// JSON.stringify makes of the item object (stored JSON parsed, 0/1 as booleans), field order included.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { itemJson, parseJson } from '../src/routes/fields.ts';

describe('itemJson', () => {
  const toJson = itemJson({ id: 'value', n: 'value', x: 'value', flag: 'bool', list: 'json', obj: 'json' });
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
    assert.equal(itemJson({ a: 'value', b: 'json', c: 'bool' })({}), '{"a":null,"b":null,"c":null}');
  });
});
