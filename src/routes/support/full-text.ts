// The q parameter as a full-text match: its terms (see snapshot-format/text.ts) as an FTS5 expression.
import { searchTerms } from '../../../snapshot-format/text.ts';
import { badRequest } from '../../http/errors.ts';

/** Free text → an FTS5 expression of quoted terms (all must match) and the terms; no letter or digit is a 400. */
export function ftsQuery(text: string): { expr: string; terms: string[] } {
  const terms = searchTerms(text);
  if (terms.length === 0) throw badRequest('Parameter "q" must contain at least one letter or digit.');
  return { expr: terms.map((t) => `"${t}"`).join(' '), terms };
}
