// Response fields: JSON-schema shorthands for the OpenAPI document, and mappers from stored values to API values.

/** JSON-schema shorthands for response items; every documented field is present and may be null. */
export const J = {
  str: { type: ['string', 'null'] },
  num: { type: ['number', 'null'] },
  int: { type: ['integer', 'null'] },
  bool: { type: ['boolean', 'null'] },
  ts: { type: ['string', 'null'], format: 'date-time' },
  strs: { type: ['array', 'null'], items: { type: 'string' } },
  obj: { type: ['object', 'null'] },
  /** An object with exactly these properties, every one present; the description and example are for the OpenAPI document. */
  object(props: Record<string, unknown>, doc: { description?: string; example?: Record<string, unknown> } = {}) {
    return {
      type: 'object',
      ...(doc.description ? { description: doc.description } : {}),
      properties: props,
      required: Object.keys(props),
      additionalProperties: false,
      ...(doc.example ? { examples: [doc.example] } : {}),
    };
  },
};

export const parseJson = <T = unknown>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

/**
 * How a stored column becomes its API value: as it is, stored JSON text (the compiler writes it with
 * JSON.stringify, build-snapshot/write.ts, so it is already the text JSON.stringify would make of the parsed
 * value), or an SQLite 0/1 as a boolean.
 */
export type FieldKind = 'value' | 'json' | 'bool';

/**
 * One item's JSON text from its row, the fields in the given order: a function put together once per item
 * shape, so a page of items is text from the start. Parsing the JSON columns into objects only to serialise
 * them again (and the objects around them) was a third of an owners page's CPU.
 */
export function itemJson(fields: Record<string, FieldKind>): (row: Record<string, any>) => string {
  const parts = Object.entries(fields).map(([name, kind], i) => {
    const key = JSON.stringify(`${i === 0 ? '{' : ','}${JSON.stringify(name)}:`);
    const at = `r[${JSON.stringify(name)}]`;
    const value =
      kind === 'json'
        ? `(${at} ?? 'null')`
        : kind === 'bool'
          ? `(${at} == null ? 'null' : ${at} === 1 ? 'true' : 'false')`
          : `S(${at} ?? null)`;
    return `${key} + ${value}`;
  });
  return new Function('S', `return (r) => ${parts.join(' + ')} + '}';`)(JSON.stringify) as (
    row: Record<string, any>,
  ) => string;
}
