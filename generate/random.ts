// Seeded randomness and small helpers shared by the source-data generator (generate/main.ts).
// Nothing here reads the clock or Math.random: the same seed always yields the same sequence.
import type { Locale } from '../snapshot-format/locales.ts';

export type Rng = () => number;

/** Fixed reference date of the synthetic data set ("now" for the generator); never the real clock. */
export const REFERENCE_MS = Date.UTC(2026, 9, 31); // 2026-10-31T00:00:00Z
export const DAY_MS = 86_400_000;

/** 32-bit FNV-1a over a string; used to derive independent sub-stream seeds. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: tiny, fast, good enough for synthetic data. Returns floats in [0, 1). */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An independent stream per purpose, so adding listings never changes e.g. the glossary. */
export function rngFor(seed: number, label: string): Rng {
  const rng = mulberry32(hash32(`${seed}:${label}`));
  for (let i = 0; i < 4; i++) rng(); // warm up
  return rng;
}

export const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
export const chance = (rng: Rng, p: number): boolean => rng() < p;
export const pick = <T>(rng: Rng, arr: readonly T[]): T => arr[Math.floor(rng() * arr.length)]!;

/** Standard normal deviate (Box-Muller). */
export function normal(rng: Rng): number {
  const u = 1 - rng();
  const w = rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * w);
}

/** Weighted choice with a precomputed cumulative table (binary search), fine for tens of thousands of items. */
export class Weighted<T> {
  private readonly cum: Float64Array;
  private readonly total: number;
  constructor(
    readonly items: readonly T[],
    weights: readonly number[],
  ) {
    if (items.length === 0 || items.length !== weights.length) throw new Error('Weighted: bad input');
    this.cum = new Float64Array(weights.length);
    let acc = 0;
    weights.forEach((w, i) => {
      acc += w;
      this.cum[i] = acc;
    });
    this.total = acc;
  }
  static of<T>(pairs: readonly (readonly [T, number])[]): Weighted<T> {
    return new Weighted(
      pairs.map((p) => p[0]),
      pairs.map((p) => p[1]),
    );
  }
  index(rng: Rng): number {
    const x = rng() * this.total;
    let lo = 0;
    let hi = this.cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cum[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
  pick(rng: Rng): T {
    return this.items[this.index(rng)]!;
  }
}

/** Fisher-Yates shuffle of 0..n-1. */
export function permutation(rng: Rng, n: number): Int32Array {
  const p = new Int32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    const t = p[i]!;
    p[i] = p[j]!;
    p[j] = t;
  }
  return p;
}

export const pad = (n: number, width: number): string => String(n).padStart(width, '0');

export function slugify(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is "any non-ASCII character"
  return (/[^\x00-\x7f]/.test(s) ? s.normalize('NFD') : s) // normalize only when needed: it is slow
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

const p2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** ISO 8601 UTC timestamp with whole seconds, e.g. 2025-01-31T12:00:00Z. Hand-rolled (days → civil date,
 *  H. Hinnant's algorithm) because Date#toISOString dominated the listing loop; same output for years 1000-9999. */
export function iso(ms: number): string {
  const secs = Math.floor(ms / 1000);
  const days = Math.floor(secs / 86_400);
  const rem = secs - days * 86_400;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y}-${p2(m)}-${p2(d)}T${p2(Math.floor(rem / 3600))}:${p2(Math.floor((rem % 3600) / 60))}:${p2(rem % 60)}Z`;
}
export const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export const round = (x: number, digits: number): number => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/** A locale map {"en": ..., "nl": ...}: the English text plus translations for the chosen locales only. */
export type Tr<T = string> = { en: T; nl?: T; de?: T; fr?: T; es?: T };
export type LocaleSet = readonly Locale[];

/** Picks which translations a record gets: en always, each other locale with its own probability. */
export function pickLocales(rng: Rng, p: { nl: number; de: number; fr: number; es: number }): Locale[] {
  const out: Locale[] = ['en'];
  if (rng() < p.nl) out.push('nl');
  if (rng() < p.de) out.push('de');
  if (rng() < p.fr) out.push('fr');
  if (rng() < p.es) out.push('es');
  return out;
}

/** Builds a locale map for the given locales from a function producing each language's text. */
export function localized<T>(locales: LocaleSet, make: (l: Locale) => T | undefined): Tr<T> {
  const out: Tr<T> = { en: make('en') as T };
  for (const l of locales) {
    if (l === 'en') continue;
    const t = make(l);
    if (t !== undefined) out[l] = t;
  }
  return out;
}

/** Restricts a full translation table to a set of locales (en always kept). */
export function only<T>(full: Tr<T>, locales: LocaleSet): Tr<T> {
  return localized(locales, (l) => full[l]);
}
