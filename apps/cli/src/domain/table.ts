/** Human output: a list as an aligned table, one record as "field  value" lines. */

const MAX_CELL = 60;

/** One value as a single table cell: absent as "-", lists joined, objects as JSON, long text cut. */
export function cell(value: unknown): string {
  let text: string;
  if (value === null || value === undefined || value === '') text = '-';
  else if (Array.isArray(value)) text = value.length === 0 ? '-' : value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ');
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  text = text.replace(/\s+/g, ' ');
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
}

/** Rows under a header of the given columns, each column as wide as its widest cell. */
export function formatTable(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((c) => cell(row[c])));
  const header = columns.map((c) => c.toUpperCase());
  const widths = columns.map((_, i) => Math.max(header[i]!.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return [line(header), ...cells.map(line)].join('\n');
}

/**
 * One record, a field a line. Fields in `long` (a message's text) are printed whole after
 * the others, under a blank line, since cutting them would hide what the user came to read.
 */
export function formatRecord(record: Record<string, unknown>, long: readonly string[] = []): string {
  const keys = Object.keys(record).filter((k) => !long.includes(k));
  const width = Math.max(0, ...keys.map((k) => k.length));
  const lines = keys.map((k) => `${k.padEnd(width)}  ${cell(record[k])}`);
  for (const k of long) {
    const value = record[k];
    if (typeof value === 'string' && value !== '') lines.push('', `${k}:`, value);
  }
  return lines.join('\n');
}
