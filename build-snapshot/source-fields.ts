// The source format's field rules (ids, strings, URLs, timestamps, amounts, translatable texts) that the record
// schemas in ./source-schema.ts are made of.
import * as v from 'valibot';
import { TRANSLATED_LOCALES } from '../snapshot-format/locales.ts';

const idPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
export const Id = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(120),
  v.regex(idPattern, 'must be 1-120 characters of A-Z a-z 0-9 . _ : - starting with a letter or digit'),
);
export const Ref = Id;
export const Str = (max = 500) => v.pipe(v.string(), v.minLength(1), v.maxLength(max));
export const Code = v.pipe(v.string(), v.minLength(1), v.maxLength(120));
export const Url = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.regex(/^https?:\/\/[^\s/?#]+[^\s]*$/i, 'must be an absolute http or https URL'),
);
/**
 * An ISO 8601 timestamp with a time zone, on a real calendar date (no 31 February) and a real time of
 * day (no 25:00, no minute 60; the earlier check let those through), with an offset of at most ±23:59.
 */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export function isTimestamp(s: string): boolean {
  const m = TIMESTAMP.exec(s);
  if (!m) return false;
  const year = +m[1],
    month = +m[2],
    day = +m[3];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS[month - 1])) return false;
  if (+m[4] > 23 || +m[5] > 59 || (m[6] !== undefined && +m[6] > 59)) return false;
  return m[7] === undefined || (+m[7] <= 23 && +m[8] <= 59);
}
/**
 * A valid timestamp in the form the API serves: RFC 3339 (what OpenAPI's `date-time` means), which needs
 * seconds. ISO 8601 lets a source leave them out (`2025-01-31T12:00+01:00`); they are added as `:00`, the
 * same instant. Position 16 is the seconds' colon when there are seconds, else the zone.
 */
export const withSeconds = (s: string): string =>
  s.charCodeAt(16) === 58 /* : */ ? s : `${s.slice(0, 16)}:00${s.slice(16)}`;
export const Timestamp = v.pipe(
  v.string(),
  v.check(
    isTimestamp,
    'must be an ISO 8601 timestamp with time zone on a real date and time of day, e.g. 2025-01-31T12:00:00Z',
  ),
  v.transform(withSeconds),
);
/** Keys a record (valibot's, and any JavaScript object) does not keep as data: refused, never silently dropped. */
const RESERVED_KEYS = ['__proto__', 'prototype', 'constructor'];
/** Free-form attributes: any JSON object (top-level keys other than RESERVED_KEYS), at most 16 KB serialised. */
export const Attributes = v.pipe(
  v.unknown(),
  v.check(
    (o) => typeof o !== 'object' || o === null || !RESERVED_KEYS.some((k) => Object.hasOwn(o, k)),
    `must not have the keys ${RESERVED_KEYS.join(', ')}`,
  ),
  v.record(v.string(), v.unknown()),
  v.check((o) => JSON.stringify(o).length <= 16_384, 'must be at most 16 KB as JSON'),
);
export const NonNegative = v.pipe(v.number(), v.finite(), v.minValue(0, 'must not be negative'));
export const NonNegativeInt = v.pipe(
  v.number(),
  v.integer('must be an integer'),
  v.minValue(0, 'must not be negative'),
);
export const Cents = NonNegativeInt;
export const StrList = v.array(Str(500));
export const Published = v.boolean();

type Translated = (typeof TRANSLATED_LOCALES)[number];
/** One value per locale: English required, every translated locale optional, no other keys. */
function translatable<S extends v.GenericSchema>(s: S) {
  const entries = { en: s } as { en: S } & { [L in Translated]: v.OptionalSchema<S, undefined> };
  for (const l of TRANSLATED_LOCALES) (entries as Record<string, v.GenericSchema>)[l] = v.optional(s);
  return v.strictObject(entries);
}
/** A translatable text: {"en": "...", "nl": "..."}. */
export const Text = (max = 100_000) => translatable(v.pipe(v.string(), v.minLength(1), v.maxLength(max)));
/** A translatable list of strings: {"en": ["..."], "nl": ["..."]}. */
export const TextList = () => translatable(v.array(Str(500)));
export const n = <T extends v.GenericSchema>(s: T) => v.nullable(s);
export const opt = <T extends v.GenericSchema>(s: T) => v.nullish(s, null);
