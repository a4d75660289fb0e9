// Aligned plain-text tables for the operator's snapshot tools.

/**
 * Rows as columns padded to their widest cell, two spaces apart; `right[i]` right-aligns column i
 * (numbers). The last column is not padded on the left-aligned side, so lines carry no trailing spaces.
 */
export function alignedTable(rows: string[][], right: boolean[] = []): string {
  const widths: number[] = [];
  for (const row of rows) for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  return rows
    .map((row) =>
      row
        .map((cell, i) => (right[i] ? cell.padStart(widths[i]) : i === row.length - 1 ? cell : cell.padEnd(widths[i])))
        .join('  '),
    )
    .join('\n');
}
