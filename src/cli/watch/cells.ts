/**
 * A frame line as terminal cells, and the shortest way to turn one line on screen into the next: only the runs
 * of cells that differ are written, each after a cursor move, so a number that moves on a 160-column row costs
 * a dozen bytes instead of the whole row. Lines hold text and SGR escapes (`ESC [ … m`) only, as the views
 * draw them.
 */

/** One line: the character of each cell and the SGR escapes in force there (all of them since the last reset). */
export interface CellLine {
  chars: string[];
  styles: string[];
}

const SGR = /\u001b\[([0-9;]*)m/y;

/**
 * Whether a character might not take exactly one cell (wide East Asian text, emoji, combining or zero-width
 * marks). The views print none of these themselves; a line holding one is rewritten whole, which is always right.
 */
function unsureWidth(code: number): boolean {
  return (code >= 0x0300 && code <= 0x036f) || (code >= 0x1100 && code <= 0x115f) || (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x2e80 && code <= 0xa4cf) || (code >= 0xac00 && code <= 0xd7a3) || (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe00 && code <= 0xfe4f) || (code >= 0xff00 && code <= 0xff60) || (code >= 0xffe0 && code <= 0xffe6) || code >= 0x1f000 || code < 0x20;
}

/** The cells of `line`, or null when a cell's width is not certain (see unsureWidth) or an escape is not SGR. */
export function toCells(line: string): CellLine | null {
  const chars: string[] = [];
  const styles: string[] = [];
  let style = '';
  for (let i = 0; i < line.length; ) {
    if (line.charCodeAt(i) === 0x1b) {
      SGR.lastIndex = i;
      const m = SGR.exec(line);
      if (!m) return null;
      const params = m[1] as string;
      // A reset (ESC[0m or ESC[m) forgets everything before it, so a style is the escapes since the last one.
      style = params === '' || params === '0' ? '' : style + m[0];
      i = SGR.lastIndex;
      continue;
    }
    const code = line.codePointAt(i) as number;
    if (unsureWidth(code)) return null;
    const ch = String.fromCodePoint(code);
    chars.push(ch);
    styles.push(style);
    i += ch.length;
  }
  return { chars, styles };
}

/** Runs closer than this many cells are written as one: a cursor move costs about as much. */
const JOIN_GAP = 6;

/**
 * The bytes that turn `before` (on screen at `row`, 1-based) into `after`: for each run of differing cells a
 * cursor move, a reset and the run's style, the characters; where `after` is shorter, an erase to the end of
 * the line. Outside these bytes the terminal's style is left reset. Empty when nothing differs.
 */
export function diffCells(row: number, before: CellLine, after: CellLine): string {
  const width = Math.max(before.chars.length, after.chars.length);
  const differs = (i: number): boolean =>
    i >= after.chars.length ? i < before.chars.length && !(before.chars[i] === ' ' && before.styles[i] === '')
      : i >= before.chars.length ? !(after.chars[i] === ' ' && after.styles[i] === '')
      : before.chars[i] !== after.chars[i] || before.styles[i] !== after.styles[i];
  let out = '';
  let i = 0;
  while (i < width) {
    if (!differs(i)) {
      i++;
      continue;
    }
    // A run: from i to the last differing cell with no gap of JOIN_GAP equal cells inside.
    let end = i + 1;
    for (let j = end, equal = 0; j < width && equal < JOIN_GAP; j++) {
      if (differs(j)) {
        end = j + 1;
        equal = 0;
      } else equal++;
    }
    out += `\u001b[${row};${i + 1}H`;
    let style = '';
    const stop = Math.min(end, after.chars.length);
    for (let k = i; k < stop; k++) {
      const next = after.styles[k] as string;
      if (next !== style) {
        out += `\u001b[0m${next}`;
        style = next;
      }
      out += after.chars[k];
    }
    if (style !== '') out += '\u001b[0m';
    // The rest of the old line beyond the new one's end: erased, as a whole-line write ends.
    if (end > after.chars.length) {
      out += '\u001b[K';
      break;
    }
    i = end;
  }
  return out;
}
