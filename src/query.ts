// Query strings: raw parsing (unknown / repeated → 400), typed coercion, shared valibot pieces, messages.
import * as v from 'valibot';
import { badRequest } from './errors.ts';

export const LOCALES = ['en', 'nl', 'de', 'fr', 'es'] as const;
export type Locale = (typeof LOCALES)[number];

/** Bounds on the raw query before any parsing: a request cannot make us do unbounded work. */
const MAX_QUERY_LENGTH = 8192;
const MAX_PARAMS = 32;

/** Splits a raw query string; a repeated name, a malformed escape or an oversized query is a 400. */
export function parseRawQuery(search: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (!search) return out;
  if (search.length > MAX_QUERY_LENGTH) throw badRequest(`The query string is longer than ${MAX_QUERY_LENGTH} characters.`);
  let count = 0;
  for (const part of search.split('&')) {
    if (part === '') continue; // "a=1&&b=2": empty parts are not parameters, and do not count as ones
    if (++count > MAX_PARAMS) throw badRequest(`The query string has more than ${MAX_PARAMS} parameters.`);
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? '' : part.slice(eq + 1);
    let name: string, value: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      throw badRequest(`Parameter "${printable(rawName)}" is not correctly percent-encoded.`);
    }
    if (name in out) throw badRequest(`Parameter "${printable(name)}" is repeated; give each parameter at most once.`);
    out[name] = value;
  }
  return out;
}

/** A client value quoted in a message: printable ASCII only, long values cut to 40 characters and "...". */
const printable = (s: string) => (s.length > 40 ? s.slice(0, 40) : s).replace(/[^\x20-\x7e]/g, '?') + (s.length > 40 ? '...' : '');

// ---- schema pieces: each carries the message that names its rule ----
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
      if (d >= 0xdc00 && d <= 0xdfff) { n--; i++; }
    }
  }
  return n;
}
/** The length rule of `str`, marked so that the OpenAPI document shows it as minLength / maxLength. */
export const LENGTH = Symbol('length in code points');
export const str = (min: number, max: number) => {
  const message = `must be ${min} to ${max} characters`;
  const rule = v.check((s: string) => { const n = codePoints(s); return n >= min && n <= max; }, message);
  return v.pipe(v.string(), Object.assign(rule, { [LENGTH]: { min, max } }));
};
/** Marks integer parameters: their raw value must be written as an integer (see validateQuery). */
const INTEGER = Symbol('integer parameter');
export const int = (min: number, max: number) => Object.assign(
  v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(min, `must be an integer from ${min} to ${max}`), v.maxValue(max, `must be an integer from ${min} to ${max}`)),
  { [INTEGER]: true },
);
export const num = (min: number, max: number) =>
  v.pipe(v.number('must be a number'), v.minValue(min, `must be a number from ${min} to ${max}`), v.maxValue(max, `must be a number from ${min} to ${max}`));
export const oneOf = <const T extends readonly string[]>(values: T, note = '') =>
  v.picklist(values, `must be one of ${values.join(', ')}${note}`);
export const date = () =>
  v.pipe(v.string(), v.isoDate('must be a date in the form YYYY-MM-DD'), v.check(isRealDate, 'must be a real calendar date in the form YYYY-MM-DD'));
/** A YYYY-MM-DD date that exists (Date rolls 2027-02-30 over to 2 March; this does not). */
export function isRealDate(s: string): boolean {
  const d = new Date(s + 'T00:00:00Z');
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

export const locale = v.optional(oneOf(LOCALES), 'en');
export const q = v.optional(str(1, 200));
export const limit = (max: number, dflt: number) => v.optional(int(1, max), dflt);
export const cursor = v.optional(str(1, 4096));
export const id120 = str(1, 120);

/** A check that a minimum does not exceed its maximum, reported on the minimum. */
export function minMax(min: string, max: string): never {
  return v.forward(
    v.partialCheck(
      [[min], [max]] as never,
      (input: Record<string, unknown>) => input[min] === undefined || input[max] === undefined || (input[min] as number) <= (input[max] as number),
      `must not be greater than ${max}`,
    ),
    [min] as never,
  ) as never;
}

type ObjectSchema = v.StrictObjectSchema<v.ObjectEntries, undefined>;
export type QuerySchema = ObjectSchema | v.SchemaWithPipe<readonly [ObjectSchema, ...v.PipeItem<any, any, any>[]]>;

export function entriesOf(schema: QuerySchema): v.ObjectEntries {
  return 'pipe' in schema ? (schema.pipe[0] as ObjectSchema).entries : schema.entries;
}

/** How a parameter's raw value is converted: integers and numbers are parsed, everything else stays text. */
type Kind = 'integer' | 'number' | 'text';
const kinds = new WeakMap<v.GenericSchema, Kind>();
function kindOf(s: v.GenericSchema): Kind {
  let kind = kinds.get(s);
  if (kind === undefined) {
    let cur = s as v.GenericSchema & { wrapped?: v.GenericSchema; [INTEGER]?: true };
    while (cur.wrapped) cur = cur.wrapped as typeof cur;
    kind = cur[INTEGER] ? 'integer' : baseType(cur) === 'number' ? 'number' : 'text';
    kinds.set(s, kind);
  }
  return kind;
}
function baseType(s: v.GenericSchema): string {
  let cur = s as v.GenericSchema & { wrapped?: v.GenericSchema; pipe?: v.GenericSchema[] };
  while (cur.wrapped || (cur.pipe && cur.type !== cur.pipe[0]?.type)) cur = (cur.wrapped ?? cur.pipe![0]) as typeof cur;
  return cur.type;
}

const NUMBER = /^-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/**
 * An integer parameter takes digits only: "1e3", "1000.0" and "100.0000000000000001" (which a number
 * parse rounds to 100, inside the range) are not integers as written, and are 400s.
 */
const INTEGER_TEXT = /^-?\d+$/;

/** Validates raw query values against a strict schema: numbers are converted first, then valibot rules apply. */
export function validateQuery<S extends QuerySchema>(schema: S, raw: Record<string, string>): v.InferOutput<S> {
  const entries = entriesOf(schema);
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    // Own entries only: "__proto__" or "constructor" must be unknown parameters like any other name.
    const entry = Object.hasOwn(entries, name) ? entries[name] : undefined;
    if (!entry) {
      const allowed = Object.keys(entries);
      throw badRequest(`Unknown parameter "${printable(name)}". ${allowed.length ? `Allowed: ${allowed.join(', ')}.` : 'This endpoint takes no parameters.'}`);
    }
    const kind = kindOf(entry);
    // (+ 0: "-0" is 0, not -0.) A value of the wrong form stays text, and valibot's type check names the rule.
    input[name] = kind === 'integer' ? (INTEGER_TEXT.test(value) ? Number(value) + 0 : value)
      : kind === 'number' && NUMBER.test(value) ? Number(value) + 0 : value;
  }
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const key = issue.path?.map((p: { key: unknown }) => String(p.key)).join('.') ?? '';
  if (raw[key] === undefined && Object.hasOwn(entries, key)) throw badRequest(`Parameter "${key}" is required.`);
  const got = raw[key] !== undefined ? ` (got "${printable(raw[key])}")` : '';
  throw badRequest(`Parameter "${key}" ${issue.message}${got}.`);
}

/**
 * Path ids follow the same rule everywhere: 1 to 120 characters. The value is already percent-decoded
 * (polka decodes route params); decoding it again would make "%252D" mean "-".
 */
export function pathId(id: string, name = 'id'): string {
  const n = codePoints(id);
  if (n < 1 || n > 120) throw badRequest(`Path parameter "${name}" must be 1 to 120 characters.`);
  return id;
}

/**
 * Search text on both sides of the full-text index, so that they meet: the compiler indexes every body
 * through indexText (NFKC: "m²" is indexed as "m2", the ligature "ﬁ" as "fi", full-width letters as
 * ASCII), and a query's terms are its NFKD form without marks, lower-cased. FTS5's unicode61 tokenizer
 * (remove_diacritics 2) then folds case and diacritics on both. Without NFKC at build time a query
 * "m²" became "m2" and found nothing (the index held "m²").
 */
export const indexText = (text: string): string => text.normalize('NFKC');

/** Free text → an FTS5 expression of quoted terms (all must match) and the normalised terms. */
export function ftsQuery(text: string): { expr: string; terms: string[] } {
  const terms = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().match(/[\p{L}\p{N}]+/gu)?.slice(0, 16) ?? [];
  if (terms.length === 0) throw badRequest('Parameter "q" must contain at least one letter or digit.');
  return { expr: terms.map((t) => `"${t}"`).join(' '), terms };
}
