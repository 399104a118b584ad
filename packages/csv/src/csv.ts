/**
 * Every CSV file the platform writes (the operator's ledger export, the dashboard's usage and
 * audit log files) goes through this one writer. Such files are opened in spreadsheets, so
 * two rules hold for every field:
 *
 * - RFC 4180: records end in CRLF; a field holding a comma, a double quote, a CR or an LF is
 *   written between double quotes, each double quote inside doubled.
 * - Formula injection (OWASP, "CSV Injection"): a spreadsheet runs a cell that begins with
 *   `=`, `+`, `-` or `@` as a formula (and one that begins with a tab or a CR, which it skips
 *   before looking). Text that begins with one of those six is written with a single quote
 *   in front, inside double quotes: `=HYPERLINK(...)` becomes `"'=HYPERLINK(...)"`, which a
 *   spreadsheet shows as the text it is.
 *
 * What is text and what is a number is decided by the column, never guessed from the value:
 * a cell given as a string is text and is neutralised; a cell given as a number (a finite JS
 * number, or an exact decimal such as `-12.500000` made with `csvDecimal`) is written as the
 * number it is, so a negative amount in a money column stays a negative number. Nothing that
 * a caller passes as text can come out as a number or a formula.
 */

/** The first characters that make a spreadsheet read a cell as a formula (OWASP's list). */
export const FORMULA_START: readonly string[] = ['=', '+', '-', '@', '\t', '\r'];

const STARTS_FORMULA = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;
/** A plain decimal: optional minus, digits without a leading zero (except 0 itself), optional fraction. */
const DECIMAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

/** An exact decimal number given as text (a money amount from integer arithmetic): written as it is. */
export class CsvDecimal {
  readonly #text: string;

  private constructor(text: string) {
    this.#text = text;
  }

  /** `text` must be a plain decimal (`-12.500000`, `0`, `3.25`); anything else throws RangeError. */
  static of(text: string): CsvDecimal {
    if (!DECIMAL.test(text)) throw new RangeError('a CSV decimal must be a plain decimal number such as -12.500000');
    return new CsvDecimal(text);
  }

  toString(): string {
    return this.#text;
  }
}

/** `CsvDecimal.of(text)`. */
export function csvDecimal(text: string): CsvDecimal {
  return CsvDecimal.of(text);
}

/** One cell: text (neutralised), a number, or empty (null or undefined). */
export type CsvCell = string | number | CsvDecimal | null | undefined;

/** One field as RFC 4180 writes it, with text neutralised against formula injection. */
export function csvField(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell === 'number') {
    if (!Number.isFinite(cell)) throw new RangeError('a CSV number must be finite');
    return String(cell);
  }
  if (cell instanceof CsvDecimal) return cell.toString();
  if (STARTS_FORMULA.test(cell)) return `"'${cell.replace(/"/g, '""')}"`;
  return NEEDS_QUOTES.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/** One record: its fields joined by commas, ended by CRLF. */
export function csvRecord(cells: readonly CsvCell[]): string {
  return `${cells.map(csvField).join(',')}\r\n`;
}

/** A whole file: the header record (column names are text like any other), then one record per row. */
export function csvDocument(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  let out = csvRecord(header);
  for (const row of rows) out += csvRecord(row);
  return out;
}
