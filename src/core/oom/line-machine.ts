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
/** The traceback of a message is looked for in this many UTF-16 units before its line… */
export const LOOKBACK = 16_384;
/** …first in this many: usually enough to decide, and much cheaper when every line is a message. */
const NEAR_LOOKBACK = 2048;

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
   * Handles one line (`raw`, possibly a window of a longer one) at line number `lineNo`. `before(units)` gives
   * the last `units` (at most LOOKBACK) UTF-16 units of text before the line, or all of it when there is less;
   * it is called only when a message starts here, so ordinary lines never build it.
   */
  line(raw: string, lineNo: number, before: (units: number) => string): void {
    const norm = normalizeLine(raw);
    if (this.block) {
      if (this.block.offer(norm.text)) return;
      this.closeBlock();
    }
    if (norm.text === '' || !findHead(norm.text, 0, true)) return;
    this.block = new Block(norm.text, lineNo, norm.rank, userFrameBefore(before));
    if (this.block.readsBefore) this.block.preceding = before(LOOKBACK);
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

/** An exception header whose message goes on below it ("RuntimeError: ResourceExhaustedError:"). */
const HEADER_ONLY = /^[\w.]{1,200}(?:Error|Exception):(?: [\w.]{1,200}(?:Error|Exception):)?$/;
const EXCEPTION_LINE = /^[\w.]{1,200}(?:Error|Exception|Interrupt)\b:/;

/** True for a line that is the message of some exception: the traceback above it is that exception's. */
function endsAnotherException(line: string): boolean {
  if (HEADER_ONLY.test(line)) return false;
  return EXCEPTION_LINE.test(line) || findHead(line, 0, true) !== null;
}

/**
 * The user's frame of the traceback that ends right before a message: walks back over the lines before
 * it, gives up after 6 lines without a frame, stops at "Traceback (most recent call last)". Looks in the
 * nearest text first; only a walk that reaches the (possibly cut) first line of it looks again in all of it.
 */
function userFrameBefore(before: (units: number) => string): OomFrame | null {
  const near = before(NEAR_LOOKBACK);
  const found = walkBack(near, near.length < NEAR_LOOKBACK);
  return found !== undefined ? found : (walkBack(before(LOOKBACK), true) ?? null);
}

/**
 * The walk of userFrameBefore over `text`, last line first. When `complete` is false the first line may be
 * cut, so reaching it leaves the answer open (undefined).
 */
function walkBack(text: string, complete: boolean): OomFrame | null | undefined {
  if (text === '') return null;
  let end = text.endsWith('\n') ? text.length - 1 : text.length;
  let sinceFrame = 0;
  for (;;) {
    const nl = end > 0 ? text.lastIndexOf('\n', end - 1) : -1;
    if (nl < 0 && !complete) return undefined;
    const line = normalizeLine(text.slice(nl + 1, end)).text;
    if (line.startsWith('Traceback (most recent call last)')) return null;
    const frame = line.startsWith('File "') ? parseFrame(line) : null;
    if (frame) {
      sinceFrame = 0;
      if (isUserFrame(frame)) return frame;
    } else if (++sinceFrame > 6 || endsAnotherException(line)) {
      // Frames above another exception's message (an earlier OOM, a ValueError) belong to that one.
      return null;
    }
    if (nl < 0) return null;
    end = nl;
  }
}
