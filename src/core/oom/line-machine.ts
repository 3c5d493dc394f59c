/**
 * The per-line state shared by the text scanner and the byte scanner: the message block being collected,
 * de-duplication, and the traceback look-up. Both front ends decide which lines (or windows of long lines)
 * reach it; everything after that point is the same code, so both give the same events for the same input.
 */
import { Block } from './block.js';
import { Dedup } from './dedup.js';
import { findHead } from './families/index.js';
import { isUserFrame, parseFrame } from './frames.js';
import { normalizeLine } from './normalize.js';
import type { OomEvent, OomFrame } from './types.js';

/** A hit line is looked at from this many UTF-16 units before its marker… */
export const WINDOW_BEFORE = 2048;
/** …to this many after it (also the most of a continuation line a block is offered). */
export const WINDOW_AFTER = 16_384;
/** The traceback of a message is looked for in this many UTF-16 units before its line. */
export const LOOKBACK = 16_384;

export class LineMachine {
  private readonly dedup: Dedup;
  private block: Block | null = null;

  constructor(dedupWindowLines: number) {
    this.dedup = new Dedup(dedupWindowLines);
  }

  /** True while a message is being collected: the next line must be offered whether it has a marker or not. */
  get collecting(): boolean {
    return this.block !== null;
  }

  /**
   * Handles one line (`raw`, possibly a window of a longer one) at line number `lineNo`. `before` gives the
   * text before the line; it is called only when a message starts here, so ordinary lines never build it.
   */
  line(raw: string, lineNo: number, before: () => string): void {
    const norm = normalizeLine(raw);
    if (this.block) {
      if (this.block.offer(norm.text)) return;
      this.closeBlock();
    }
    if (norm.text === '' || !findHead(norm.text, 0)) return;
    this.block = new Block(norm.text, lineNo, norm.rank, userFrameBefore(before()));
  }

  /** Finishes the message being collected, if any. */
  closeBlock(): void {
    if (!this.block) return;
    this.dedup.add(this.block.finish());
    this.block = null;
  }

  /** Events whose de-duplication window closed before `lineNo` (Infinity: all of them). */
  release(lineNo: number): OomEvent[] {
    return this.dedup.release(lineNo);
  }
}

/**
 * The user's frame of the traceback that ends right before a message: walks back over the lines before
 * it, gives up after 6 lines without a frame, stops at "Traceback (most recent call last)".
 */
function userFrameBefore(before: string): OomFrame | null {
  if (before === '') return null;
  const lines = before.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let sinceFrame = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const text = normalizeLine(lines[i] as string).text;
    if (text.startsWith('Traceback (most recent call last)')) break;
    const frame = text.startsWith('File "') ? parseFrame(text) : null;
    if (frame) {
      sinceFrame = 0;
      if (isUserFrame(frame)) return frame;
      continue;
    }
    if (++sinceFrame > 6) break;
  }
  return null;
}
