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
  let at = text.indexOf('\u001b');
  // Most cells hold no colour: nothing to take out (this runs for every cell of a live view's every frame).
  if (at < 0) return text.length;
  let hidden = 0;
  while (at >= 0) {
    // An SGR sequence: ESC [ digits or semicolons m. Anything else is counted as text.
    let end = at + 1;
    if (text.charCodeAt(end) === 0x5b) {
      end++;
      for (let c = text.charCodeAt(end); (c >= 0x30 && c <= 0x39) || c === 0x3b; c = text.charCodeAt(end)) end++;
      if (text.charCodeAt(end) === 0x6d) hidden += end + 1 - at;
      else end = at + 1;
    }
    at = text.indexOf('\u001b', end === at + 1 ? at + 1 : end + 1);
  }
  return text.length - hidden;
}

/** Cuts plain text to `width` characters, marking the cut with "…". */
export function trimTo(text: string, width: number): string {
  if (width <= 0) return '';
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/**
 * Cuts plain text to `width` characters by taking out its middle: a third of the room for the head, the rest
 * for the tail. A command line keeps its program and what it runs (`/opt/conda/bin/python -u t…vit_l16.yaml`),
 * an allocation site keeps its `file:line (function)`; cutting the end would leave only the interpreter path
 * or the directories.
 */
export function cutMiddle(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  if (width <= 1) return width === 1 ? '…' : '';
  const head = Math.floor((width - 1) / 3);
  return `${chars.slice(0, head).join('')}…${chars.slice(chars.length - (width - 1 - head)).join('')}`;
}

/**
 * A command line cut to `width`: first the program's directory goes (`…/python -u train.py …`), since the
 * program's name and what it runs say more than where it is installed; then the middle, as `cutMiddle`.
 */
export function cutCommand(command: string, width: number): string {
  if (Array.from(command).length <= width) return command;
  const program = /^(\S*\/)?([^\s/]+ ?)([\s\S]*)$/.exec(command);
  if (!program) return cutMiddle(command, width);
  const name = `${program[1] ? '…/' : ''}${program[2]}`;
  const rest = program[3] ?? '';
  // The program's name stays whole when it leaves room for the arguments; they are cut in their middle.
  if (name.length > width / 2) return cutMiddle(`${name}${rest}`, width);
  return `${name}${cutMiddle(rest, width - name.length)}`;
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

/**
 * `table`, then every line wider than `width` has its last cell (a command line) cut by `cutCommand` so it
 * fits; the other columns stay whole, and the last cell keeps at least `minLast` characters.
 */
export function tableFitted(rows: readonly (readonly string[])[], align: readonly Align[], width: number, minLast = 12): string[] {
  return table(rows, align).map((line, i) => {
    const row = rows[i] ?? [];
    const last = row[row.length - 1] ?? '';
    if (visibleLength(line) <= width || !line.endsWith(last)) return line;
    const before = line.slice(0, line.length - last.length);
    return before + cutCommand(last, Math.max(minLast, width - visibleLength(before)));
  });
}
