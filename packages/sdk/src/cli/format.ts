/** Plain-text output for people: aligned tables and key/value blocks. */

export type Cell = string | number | boolean | null | undefined;

export function cell(value: Cell): string {
  if (value === null || value === undefined) return '-';
  return String(value);
}

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function table(headers: string[], rows: Cell[][]): string {
  const text = rows.map((row) => row.map(cell));
  const widths = headers.map((header, i) => Math.max(width(header), ...text.map((row) => width(row[i] ?? ''))));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - width(c)))).join('  ').trimEnd();
  return [line(headers), ...text.map(line)].join('\n') + '\n';
}

/** `key  value` lines, keys aligned. */
export function keyValues(entries: [string, Cell][]): string {
  const keyWidth = Math.max(0, ...entries.map(([key]) => width(key)));
  return entries.map(([key, value]) => `${key}${' '.repeat(keyWidth - width(key))}  ${cell(value)}`).join('\n') + '\n';
}

/** Display width in code points (the API's text is mostly ASCII plus `…`). */
function width(text: string): number {
  return [...text].length;
}
