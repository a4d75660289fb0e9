// The valibot pieces every endpoint's query schema is made of; each carries the message that names its rule.
import * as v from 'valibot';
import { LOCALES } from '../../snapshot-format/locales.ts';

/**
 * Characters as the spec counts them: Unicode code points (an emoji is one, not two UTF-16 units), as
 * JSON Schema's minLength / maxLength do. No string here is longer than the 8192-character query.
 */
export function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}
/**
 * A string of `min` to `max` code points. The rule is a check (valibot's length counts UTF-16 units); its metadata
 * states it as JSON Schema's minLength / maxLength, which count code points, for the OpenAPI document.
 */
export const str = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.check((s: string) => {
      const n = codePoints(s);
      return n >= min && n <= max;
    }, `must be ${min} to ${max} characters`),
    v.metadata({ minLength: min, maxLength: max }),
  );
/**
 * Every way an integer parameter can be wrong (not a number, not whole, out of range) gets its whole rule. Its
 * raw value must be written as an integer: validateQuery knows it by valibot's integer rule in the pipe.
 */
export const int = (min: number, max: number) => {
  const rule = `must be an integer from ${min} to ${max}`;
  return v.pipe(v.number(rule), v.integer(rule), v.minValue(min, rule), v.maxValue(max, rule));
};
export const num = (min: number, max: number) => {
  const rule = `must be a number from ${min} to ${max}`;
  return v.pipe(v.number(rule), v.minValue(min, rule), v.maxValue(max, rule));
};
export const oneOf = <const T extends readonly string[]>(values: T, note = '') =>
  v.picklist(values, `must be one of ${values.join(', ')}${note}`);
export const date = () =>
  v.pipe(
    v.string(),
    v.isoDate('must be a date in the form YYYY-MM-DD'),
    v.check(isRealDate, 'must be a real calendar date in the form YYYY-MM-DD'),
  );
/** A YYYY-MM-DD date that exists (Date rolls 2027-02-30 over to 2 March; this does not). */
export function isRealDate(s: string): boolean {
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/**
 * A query parameter's schema with its meaning and an example value (valibot's description and examples, which the
 * OpenAPI document reads; its rule comes from the schema); validation is the same.
 */
export const documented = <S extends v.GenericSchema>(schema: S, description: string, example: string | number) =>
  v.pipe(schema, v.description(description), v.examples([example]));

export const locale = documented(
  v.optional(oneOf(LOCALES), 'en'),
  'Language of the translated free text (titles, descriptions, names of places). Only this parameter selects ' +
    'the language: Accept-Language is not read, so without locale the answer is in English. A field without a ' +
    'translation in this language is served in English, field by field; ids, codes, numbers and dates never ' +
    'change. meta.locale repeats it.',
  'nl',
);
const Q_TEXT =
  'Free text: its words (letters and digits; at most 16 are used) must all occur as words in the ' +
  "record's text, in any language, ignoring case and accents. Text without a letter or digit is a 400.";
/** What makes q searchable, in the schema so that the document states it: the search terms are its letters and digits. */
export const Q_PATTERN = /[\p{L}\p{N}]/u;
const qRule = v.optional(v.pipe(str(1, 200), v.regex(Q_PATTERN, 'must contain at least one letter or digit')));
export const q = documented(qRule, Q_TEXT, 'amsterdam');
/** q with the fields an endpoint searches named in its documentation. */
export const qOver = (fields: string, example: string) => documented(qRule, `${Q_TEXT} Searched: ${fields}.`, example);
export const limit = (max: number, dflt: number) =>
  documented(v.optional(int(1, max), dflt), 'Number of items per page.', Math.min(dflt, 10));
export const cursor = documented(
  v.optional(str(1, 4096)),
  'Opaque position to continue from: the pagination.next_cursor of the previous page, passed unchanged ' +
    'with the same endpoint, filters, locale and limit (anything else is a 400). Omit it for the first ' +
    'page. It expires after 24 hours.',
  'eyJhIjoiYXJ0XzAwMjAiLCJzIjoiNGpUOG1PMnhRekszUHZYaFl3RmNCQSIsImUiOjE3OTQwMDAwMDB9.rcZ6lpu-vQ6OCQYyvv0Tg81ZaH1x2Rcu6bs3N4FFXas',
);
export const id120 = str(1, 120);

/**
 * A check across parameters, reported on `key` with the message `failure` gives (null: it holds). It runs once every
 * parameter is valid on its own: an answer names only the first issue, and an invalid parameter's comes first.
 */
function crossCheck<T extends Record<string, unknown>>(
  key: keyof T & string,
  failure: (input: T) => string | null,
): v.GenericPipeAction<T, T> {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const message = failure(dataset.value);
    if (message === null) return;
    addIssue({
      message,
      path: [{ type: 'object', origin: 'value', input: dataset.value, key, value: dataset.value[key] }],
    });
  });
}

/** A check that a minimum does not exceed its maximum, reported on the minimum; the pipe's output type is kept. */
export function minMax<T extends Record<string, unknown>>(min: keyof T & string, max: keyof T & string) {
  return crossCheck<T>(min, (input) => {
    const [low, high] = [input[min], input[max]];
    return typeof low === 'number' && typeof high === 'number' && low > high
      ? `must not be greater than ${max}, which is ${high}`
      : null;
  });
}

/** A check that `a` is given only with `b`, reported on `a`; the pipe's output type is kept. */
export function together<T extends Record<string, unknown>>(a: keyof T & string, b: keyof T & string) {
  return crossCheck<T>(a, (input) =>
    input[a] !== undefined && input[b] === undefined ? `must be given with ${b}` : null,
  );
}

type ObjectSchema = v.StrictObjectSchema<v.ObjectEntries, undefined>;
export type QuerySchema = ObjectSchema | v.SchemaWithPipe<readonly [ObjectSchema, ...v.PipeItem<any, any, any>[]]>;

export function entriesOf(schema: QuerySchema): v.ObjectEntries {
  return 'pipe' in schema ? (schema.pipe[0] as ObjectSchema).entries : schema.entries;
}
