/**
 * A full-screen terminal surface over plain ANSI escapes: the alternate screen, a hidden cursor, and a frame
 * diff that rewrites only the lines that changed since the last frame (no flicker over ssh, little output).
 * `restore()` is idempotent and synchronous so it can run from signal and crash handlers.
 */

export interface TerminalOut {
  write(text: string): unknown;
}

const ENTER = '\u001b[?1049h\u001b[?25l\u001b[H\u001b[2J';
const LEAVE = '\u001b[0m\u001b[?25h\u001b[?1049l';

export class Screen {
  private previous: string[] = [];
  private active = false;

  constructor(private readonly out: TerminalOut) {}

  /** Switches to the alternate screen and hides the cursor. */
  enter(): void {
    if (this.active) return;
    this.active = true;
    this.previous = [];
    this.out.write(ENTER);
  }

  /** Forgets the last frame so the next draw repaints every line (after a resize). */
  invalidate(): void {
    this.previous = [];
    if (this.active) this.out.write('\u001b[H\u001b[2J');
  }

  /**
   * Draws `lines` (already cut to the terminal's width and height); returns how many lines were written,
   * which the benchmark and tests use to prove unchanged lines are not redrawn.
   */
  draw(lines: readonly string[]): number {
    let chunk = '';
    let written = 0;
    const count = Math.max(lines.length, this.previous.length);
    for (let row = 0; row < count; row++) {
      const next = lines[row] ?? '';
      if (this.previous[row] === next) continue;
      // Move to the row, write the line, clear whatever an older, longer line left to its right.
      chunk += `\u001b[${row + 1};1H${next}\u001b[0m\u001b[K`;
      written++;
    }
    this.previous = [...lines];
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
