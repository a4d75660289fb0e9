// Content-Language of a localised answer: the languages its translated fields were actually served in.

/** The column in which a statement reports a row's language bits (see ../routes/support/i18n-sql.ts). */
export const LANG_COLUMN = '_lang';
/** A translated field was served in the requested locale. */
export const IN_LOCALE = 1;
/** A translated field fell back to English. */
export const IN_ENGLISH = 2;

/**
 * The Content-Language value for the bits gathered while answering: the requested locale, English, or both
 * ("de, en": some fields had no German text). Undefined when the body holds no translated field (an empty
 * page, statistics): it has no language of its own, and RFC 9110 (8.5) reads a missing header that way.
 */
export function contentLanguage(locale: string, bits: number): string | undefined {
  if (bits === 0) return undefined;
  if (locale === 'en' || bits === IN_ENGLISH) return 'en';
  return bits === IN_LOCALE ? locale : `${locale}, en`;
}

/**
 * A data answer's body with the language bits of the translated fields in it, as a handler returns it: the app
 * names them in Content-Language. A handler whose body holds no translated field returns the body alone.
 */
export class Localised {
  constructor(
    readonly body: unknown,
    readonly lang: number,
  ) {}
}

/** A row's language bits (its LANG_COLUMN; 0 when the row has none). */
export const langOf = (row: Record<string, unknown>): number => (row[LANG_COLUMN] as number | undefined) ?? 0;

/** The language bits of these rows together. */
export function langOfRows(rows: readonly Record<string, unknown>[]): number {
  let bits = 0;
  for (const r of rows) bits |= langOf(r);
  return bits;
}

/** The row without its LANG_COLUMN (what a body shows). */
export function withoutLang<T extends Record<string, unknown>>(row: T): T {
  const { [LANG_COLUMN]: _, ...rest } = row;
  return rest as T;
}
