// Price statistics shared by the compiler (precomputed scopes, cohorts) and the server (filtered stats).

/** Median of numbers; the mean of the two middle values for an even count; null when empty. Sorts a copy. */
export function median(values: ArrayLike<number>): number | null {
  if (values.length === 0) return null;
  const a = Float64Array.from(values).sort();
  const mid = a.length >> 1;
  return a.length % 2 ? a[mid] : (a[mid - 1] + a[mid]) / 2;
}

export const round2 = (x: number) => Math.round(x * 100) / 100;

/** [min, max, average, median] of prices, all null when empty; the average is rounded to cents. */
export function statsOf(prices: ArrayLike<number>): [number | null, number | null, number | null, number | null] {
  if (prices.length === 0) return [null, null, null, null];
  const a = Float64Array.from(prices).sort();
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i];
  const mid = a.length >> 1;
  return [a[0], a[a.length - 1], round2(sum / a.length), a.length % 2 ? a[mid] : (a[mid - 1] + a[mid]) / 2];
}
