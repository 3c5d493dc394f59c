/**
 * Shared text styling for human output: colour (only when allowed), column alignment, trimming to the
 * terminal width and memory bars. Every renderer uses these so output looks the same across commands.
 */

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90, bold: 1, dim: 2 } as const;
export type Color = keyof typeof CODES;

/** A painter bound to one stream's colour decision; `paint('red', s)` is `s` when colour is off. */
export function painter(enabled: boolean): (color: Color, text: string) => string {
  return (color, text) => (enabled ? `\u001b[${CODES[color]}m${text}\u001b[0m` : text);
}

/** Display width of text without ANSI escapes (no wide-character support needed for our output). */
export function visibleLength(text: string): number {
  return text.replace(/\u001b\[[0-9;]*m/g, '').length;
}

/** Cuts plain text to `width` characters, marking the cut with "…". */
export function trimTo(text: string, width: number): string {
  if (width <= 0) return '';
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

export type Align = 'left' | 'right';

/**
 * Lays out rows as aligned columns separated by two spaces. `align[i]` defaults to left. Cells may hold
 * ANSI colour; widths are measured without it.
 */
export function table(rows: readonly (readonly string[])[], align: readonly Align[] = []): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell))));
  return rows.map((row) =>
    row
      .map((cell, i) => {
        const pad = ' '.repeat((widths[i] ?? 0) - visibleLength(cell));
        const last = i === row.length - 1;
        return align[i] === 'right' ? pad + cell : last ? cell : cell + pad;
      })
      .join('  '),
  );
}

/**
 * A memory bar `[████▒▒····]`: `used` as full blocks, `reserved` (driver) as shaded blocks, the rest as dots.
 * Null totals give an empty bar of the same width so columns stay aligned.
 */
export function memoryBar(used: number | null, reserved: number | null, total: number | null, width = 20): string {
  if (!total || total <= 0 || used === null) return `[${' '.repeat(width)}]`;
  const cells = (bytes: number): number => Math.min(width, Math.round((bytes / total) * width));
  const r = cells(reserved ?? 0);
  const u = Math.min(width - r, cells(used));
  return `[${'▒'.repeat(r)}${'█'.repeat(u)}${'·'.repeat(width - r - u)}]`;
}
