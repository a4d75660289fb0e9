// Search text on both sides of the full-text index, normalised so that they meet.
//
// The compiler indexes every body through indexText (NFKC: "m²" is indexed as "m2", the ligature "ﬁ"
// as "fi", full-width letters as ASCII), and a query's terms are its NFKD form without marks,
// lower-cased. FTS5's unicode61 tokenizer (remove_diacritics 2) then folds case and diacritics on both.

/** A body as the full-text index stores it. */
export const indexText = (text: string): string => text.normalize('NFKC');

/** At most this many terms of a query are used (all must match). */
export const MAX_TERMS = 16;

/** The search terms of free text: letters and digits, marks removed, lower-cased; empty when there are none. */
export const searchTerms = (text: string): string[] =>
  text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu)
    ?.slice(0, MAX_TERMS) ?? [];
