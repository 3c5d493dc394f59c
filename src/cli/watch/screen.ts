/**
 * A full-screen terminal surface over plain ANSI escapes: the alternate screen, a hidden cursor, and a frame
 * diff that writes only the cells that changed since the last frame (no flicker over ssh, little output: a
 * number that moves costs its own cells, not its line). `restore()` is idempotent and synchronous so it can
 * run from signal and crash handlers.
 */
import { diffCells, toCells, type CellLine } from './cells.js';

export interface TerminalOut {
  write(text: string): unknown;
}

const ENTER = '\u001b[?1049h\u001b[?25l\u001b[H\u001b[2J';
const LEAVE = '\u001b[0m\u001b[?25h\u001b[?1049l';

export class Screen {
  private previous: string[] = [];
  /** The cells of `previous`, parsed when a line is first compared (null: rewrite that line whole). */
  private previousCells: Array<CellLine | null | undefined> = [];
  private active = false;

  constructor(private readonly out: TerminalOut) {}

  /** Switches to the alternate screen and hides the cursor. */
  enter(): void {
    if (this.active) return;
    this.active = true;
    this.previous = [];
    this.previousCells = [];
    this.out.write(ENTER);
  }

  /** Forgets the last frame so the next draw repaints every line (after a resize). */
  invalidate(): void {
    this.previous = [];
    this.previousCells = [];
    if (this.active) this.out.write('\u001b[H\u001b[2J');
  }

  /**
   * Draws `lines` (already cut to the terminal's width and height); returns how many lines were touched,
   * which the benchmark and tests use to prove unchanged lines are not redrawn. A changed line is patched cell
   * by cell when that is shorter than writing it whole, and written whole otherwise.
   */
  draw(lines: readonly string[]): number {
    let chunk = '';
    let written = 0;
    const count = Math.max(lines.length, this.previous.length);
    const cells: Array<CellLine | null | undefined> = new Array(lines.length);
    for (let row = 0; row < count; row++) {
      const next = lines[row] ?? '';
      const before = this.previous[row];
      if (before === next) {
        if (row < lines.length) cells[row] = this.previousCells[row];
        continue;
      }
      // Move to the row, write the line, clear whatever an older, longer line left to its right.
      const whole = `\u001b[${row + 1};1H${next}\u001b[0m\u001b[K`;
      let patch: string | null = null;
      if (before !== undefined) {
        const old = this.previousCells[row] === undefined ? toCells(before) : this.previousCells[row];
        const now = toCells(next);
        if (row < lines.length) cells[row] = now;
        if (old && now) patch = diffCells(row + 1, old, now);
      }
      chunk += patch !== null && patch.length < whole.length ? patch : whole;
      written++;
    }
    this.previous = [...lines];
    this.previousCells = cells;
    if (chunk !== '') this.out.write(chunk);
    return written;
  }

  /** Leaves the alternate screen and shows the cursor again; safe to call more than once. */
  restore(): void {
    if (!this.active) return;
    this.active = false;
    this.out.write(LEAVE);
  }
}
