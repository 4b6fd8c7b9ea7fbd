/** A plain left-aligned text table for terminal output. */
export function formatTable(header: string[], rows: (string | number)[][]): string {
  const all = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...all.map((row) => String(row[column] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, column) => String(cell).padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
