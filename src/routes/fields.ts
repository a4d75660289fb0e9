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
  object(props: Record<string, unknown>, required = Object.keys(props)) {
    return { type: 'object', properties: props, required, additionalProperties: false };
  },
};

export const parseJson = <T = unknown>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));
export const bool = (x: number | null) => (x === null ? null : x === 1);
