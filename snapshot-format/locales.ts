// The locales the source, the snapshot and the API share, defined once, and how a translation row is keyed.

/** Every locale the API accepts; English is the default and the fallback of every translated field. */
export const LOCALES = ['en', 'nl', 'de', 'fr', 'es'] as const;
export type Locale = (typeof LOCALES)[number];
/** The locales stored in the `*_i18n` tables (English lives in the base tables). */
export const TRANSLATED_LOCALES = ['nl', 'de', 'fr', 'es'] as const;

/** The locale part of an i18n key: k = rid * 8 + code. English is 0 and never stored. */
export const LOCALE_CODE: Record<Locale, number> = { en: 0, nl: 1, de: 2, fr: 3, es: 4 };

/** SQL for the i18n key of the row `alias` in the locale bound as @locale (an unknown locale is English). */
export const localeKeySql = (alias: string): string =>
  `${alias}.rid * 8 + (CASE @locale ${TRANSLATED_LOCALES.map((l) => `WHEN '${l}' THEN ${LOCALE_CODE[l]}`).join(' ')} ELSE 0 END)`;
