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
export const bool = (x: number | null) => (x === null ? null : x === 1);
