/**
 * RFC 4180 CSV with spreadsheet formula-injection neutralised (OWASP "CSV injection"): a text
 * cell starting with = + - @, a tab, a carriage return or a line feed gets a leading apostrophe,
 * so Excel/LibreOffice/Sheets show it as text instead of evaluating it (a spreadsheet may drop
 * leading whitespace and read the formula after it). Numbers are written as
 * numbers: a negative gap is data, not a formula.
 */
const FORMULA_START = /^[=+\-@\t\r\n]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  if (typeof value === "boolean") return value ? "true" : "false";
  let text = typeof value === "string" ? value : JSON.stringify(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(",")}\r\n`;
}
