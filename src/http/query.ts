// Query strings → validated input: raw parsing (unknown, repeated, oversized → 400), typed coercion, valibot, messages.
import * as v from 'valibot';
import { redactKeys } from '../access/key-format.ts';
import { badRequest } from './errors.ts';
import { codePoints, entriesOf, type QuerySchema } from './params.ts';

/** Bounds on the raw query before any parsing: a request cannot make us do unbounded work. */
/** The longest query string (its characters after the "?") and the most parameters one may hold: beyond, a 400. */
export const MAX_QUERY_LENGTH = 8192;
export const MAX_PARAMS = 32;

/** A query string part as text: "+" is a space, %XX an escape (throws on a malformed one); most parts have neither. */
const decoded = (raw: string) =>
  raw.indexOf('%') === -1 && raw.indexOf('+') === -1 ? raw : decodeURIComponent(raw.replace(/\+/g, ' '));

/** Splits a raw query string; a repeated name, a malformed escape or an oversized query is a 400. */
export function parseRawQuery(search: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (!search) return out;
  if (search.length > MAX_QUERY_LENGTH)
    throw badRequest(`The query string is longer than ${MAX_QUERY_LENGTH} characters.`);
  let count = 0;
  for (const part of search.split('&')) {
    if (part === '') continue; // "a=1&&b=2": empty parts are not parameters, and do not count as ones
    if (++count > MAX_PARAMS) throw badRequest(`The query string has more than ${MAX_PARAMS} parameters.`);
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? '' : part.slice(eq + 1);
    let name: string, value: string;
    try {
      name = decoded(rawName);
      value = decoded(rawValue);
    } catch {
      throw badRequest(`Parameter "${printable(rawName)}" is not correctly percent-encoded.`);
    }
    if (name in out) throw badRequest(`Parameter "${printable(name)}" is repeated; give each parameter at most once.`);
    out[name] = value;
  }
  return out;
}

/**
 * What a reader cannot see, or cannot tell from a space, or that changes how the text around it shows: controls,
 * format characters (zero-width, bidi), default-ignorable characters (variation selectors, fillers), spaces other
 * than U+0020 (a no-break space), line and paragraph separators, lone surrogates, private use, unassigned, and a
 * combining mark at the start (it has nothing to sit on). Inside an emoji the variation selector and the zero-width
 * joiner are part of what shows (❤️, 👨‍👩‍👧) and stay; anywhere else they are escaped too. A backslash is doubled, so
 * "\u200B" as typed is not taken for an escape.
 */
// The v flag (a class less some characters, [A--[B]]) is ES2024, past the type check's target; Node 20 has it.
const UNSEEN_SOURCE = String.raw`^\p{M}|[[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]--[\uFE0E\uFE0F\u200D]]|(?<![\p{Extended_Pictographic}\p{Emoji_Modifier}])[\uFE0E\uFE0F]|(?<![\p{Extended_Pictographic}\p{Emoji_Modifier}]\uFE0F?)\u200D|\u200D(?!\p{Extended_Pictographic})`;
const UNSEEN = new RegExp(UNSEEN_SOURCE, 'gv');
const escaped = (c: string) => {
  const cp = c.codePointAt(0) as number;
  return cp > 0xffff ? `\\u{${cp.toString(16).toUpperCase()}}` : `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}`;
};
/**
 * A client value quoted in a message: its first 40 characters (code points, so no pair is cut) and "..." when
 * it is longer; letters of any script show as they are, and what a reader cannot see as a \u escape. An API key
 * sent in the wrong place is cut to its prefix first (redactKeys), as in the log.
 */
export const printable = (s: string) => {
  const chars = Array.from(redactKeys(s.length > 160 ? s.slice(0, 160) : s));
  const shown = chars.slice(0, 40).join('').replaceAll('\\', '\\\\').replace(UNSEEN, escaped);
  return chars.length > 40 ? `${shown}...` : shown;
};

/**
 * How a parameter's raw value is converted: integers and numbers are parsed, a decimal (DECIMAL_FORM) is parsed when
 * its text is a plain decimal no greater than its maximum, everything else stays text.
 */
type Kind = 'integer' | 'number' | { decimalMax: number } | 'text';
const kinds = new WeakMap<v.GenericSchema, Kind>();
type Action = { kind: string; type: string; requirement?: unknown };
/** The first action of a schema's pipe, or of a pipe it holds (a documented parameter pipes its rule's), matching. */
const findAction = (s: v.GenericSchema, match: (a: Action) => boolean): Action | undefined => {
  if (!('pipe' in s)) return undefined;
  for (const a of (s as v.SchemaWithPipe<[v.GenericSchema]>).pipe as Action[]) {
    if (match(a)) return a;
    const inner = a.kind === 'schema' && a !== s ? findAction(a as unknown as v.GenericSchema, match) : undefined;
    if (inner) return inner;
  }
  return undefined;
};
/**
 * Marks (in its pipe, a check that always passes) a number parameter whose text must be a plain decimal (digits, an optional fraction: no sign, exponent, or a point
 * without digits on both sides) and whose decimal value, not only its rounded double, is at most its maxValue:
 * "50.00000000000000001" parses to 50 but is above 50.
 */
export const DECIMAL_FORM = v.check<number>(() => true);
const DECIMAL_TEXT = /^[0-9]+(?:\.[0-9]+)?$/;
/** Whether a plain decimal's text is above max (an integer), even where its double rounds to max. */
function decimalAbove(text: string, max: number): boolean {
  if (Number(text) !== max) return Number(text) > max;
  const [whole, fraction = ''] = text.split('.');
  return Number(whole) >= max && /[1-9]/.test(fraction);
}
/**
 * Read through valibot's public API (unwrap, isOfType, a schema's type and pipe, an action's type): a number schema,
 * under any optional, is an integer parameter when its pipe has valibot's integer rule (int() in ./params.ts), a
 * decimal one when it has DECIMAL_FORM.
 */
function kindOf(s: v.GenericSchema): Kind {
  let kind = kinds.get(s);
  if (kind === undefined) {
    let cur = s;
    while (v.isOfType('optional', cur)) cur = v.unwrap(cur as v.OptionalSchema<v.GenericSchema, unknown>);
    const decimal = findAction(cur, (a) => a === (DECIMAL_FORM as unknown));
    const max = findAction(cur, (a) => a.type === 'max_value')?.requirement;
    kind =
      cur.type !== 'number'
        ? 'text'
        : findAction(cur, (a) => a.type === 'integer')
          ? 'integer'
          : decimal
            ? { decimalMax: typeof max === 'number' ? max : Infinity }
            : 'number';
    kinds.set(s, kind);
  }
  return kind;
}

/** A decimal number as written by people: digits on at least one side of the point (5, 5.5, .5, 5.), an exponent. */
const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/**
 * An integer parameter takes digits only: "1e3", "1000.0" and "100.0000000000000001" (which a number
 * parse rounds to 100, inside the range) are not integers as written, and are 400s.
 */
const INTEGER_TEXT = /^-?\d+$/;

/**
 * A raw value converted as its kind says (+ 0: "-0" is 0, not -0); a value of the wrong form stays text, and valibot's
 * type check names the rule.
 */
function converted(kind: Kind, value: string): unknown {
  if (kind === 'integer') return INTEGER_TEXT.test(value) ? Number(value) + 0 : value;
  if (kind === 'number') return NUMBER.test(value) ? Number(value) + 0 : value;
  if (kind === 'text') return value;
  return DECIMAL_TEXT.test(value) && !decimalAbove(value, kind.decimalMax) ? Number(value) + 0 : value;
}

/** Validates raw query values against a strict schema: numbers are converted first, then valibot rules apply. */
export function validateQuery<S extends QuerySchema>(schema: S, raw: Record<string, string>): v.InferOutput<S> {
  const entries = entriesOf(schema);
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    // Own entries only: "__proto__" or "constructor" must be unknown parameters like any other name.
    const entry = Object.hasOwn(entries, name) ? entries[name] : undefined;
    if (!entry) {
      const allowed = Object.keys(entries);
      throw badRequest(
        `Unknown parameter "${printable(name)}". ${allowed.length ? `Allowed: ${allowed.join(', ')}.` : 'This endpoint takes no parameters.'}`,
      );
    }
    const kind = kindOf(entry);
    input[name] = converted(kind, value);
  }
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const key = v.getDotPath(issue) ?? '';
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

/** Query strings whose validated form is remembered per route, at most; the memo starts over when full. */
const QUERY_MEMO_SIZE = 256;
/** Only short query strings are remembered: a locale or a filter or two, not a cursor. */
const QUERY_MEMO_LENGTH = 96;
/** A cursor as the service writes it (base64url and a dot): its raw text is its value, with nothing to decode. */
const PLAIN_CURSOR = /^[A-Za-z0-9_.-]{1,4096}$/;

/**
 * A route's validated queries by query string (with its "?"): the same short query string (no parameters, a
 * locale, a common filter) is parsed and validated once (valibot and the raw parse are a visible share of a small answer: see
 * docs/performance.md). A paged route's query with a cursor is the query without it, remembered, plus the cursor:
 * the pages of one walk share everything but the cursor. Bounded in count and length; a query that fails
 * validation is never remembered, so it fails every time, with the message of the whole query's validation.
 * The objects are frozen: a handler that changed one would change every later request's.
 */
export class QueryMemo {
  private readonly memo = new Map<string, Readonly<Record<string, unknown>>>();
  private readonly paged: boolean;
  constructor(private readonly schema: QuerySchema) {
    this.paged = Object.hasOwn(entriesOf(schema), 'cursor');
  }

  /** Query strings remembered. */
  get size(): number {
    return this.memo.size;
  }

  get(search: string): Readonly<Record<string, unknown>> {
    const hit = this.memo.get(search);
    if (hit !== undefined) return hit;
    if (this.paged && search.length > QUERY_MEMO_LENGTH) {
      const withCursor = this.withCursor(search);
      if (withCursor !== undefined) return withCursor;
    }
    const query = Object.freeze(
      validateQuery(this.schema, parseRawQuery(search.length > 1 ? search.slice(1) : '')) as Record<string, unknown>,
    );
    if (search.length <= QUERY_MEMO_LENGTH) {
      if (this.memo.size >= QUERY_MEMO_SIZE) this.memo.clear();
      this.memo.set(search, query);
    }
    return query;
  }

  /**
   * The query of a search string with one cursor, written as the service writes cursors, as the remembered query
   * of the rest plus the cursor; undefined when the string is any other case (the whole query is validated).
   */
  private withCursor(search: string): Readonly<Record<string, unknown>> | undefined {
    const at = search.startsWith('?cursor=') ? 1 : search.indexOf('&cursor=') + 1;
    if (at === 0) return undefined;
    const valueAt = at + 'cursor='.length;
    let end = search.indexOf('&', valueAt);
    if (end === -1) end = search.length;
    const value = search.slice(valueAt, end);
    if (!PLAIN_CURSOR.test(value)) return undefined;
    // The rest, in its order: "?a&cursor=x&b" is "?a&b", "?a&cursor=x" "?a", "?cursor=x&b" "?b".
    const rest = end < search.length ? search.slice(0, at) + search.slice(end + 1) : search.slice(0, at - 1);
    let base: Readonly<Record<string, unknown>>;
    try {
      base = this.get(rest.length > 1 ? rest : '');
    } catch {
      return undefined; // the whole query's validation names its first problem
    }
    // A cursor in the rest too, however it is written ("cursor=", "%63ursor="): the whole query repeats it.
    if (base.cursor !== undefined) return undefined;
    return Object.freeze({ ...base, cursor: value });
  }
}
