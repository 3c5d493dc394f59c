/**
 * The streaming OOM scanner: feed it text in chunks of any size, get events once each is complete. Line
 * numbers are global across chunks. Ordinary lines cost one marker-regex pass over the chunk and a newline
 * count; only lines holding a marker (and the few lines after one) are normalized and parsed. Memory stays
 * bounded: a line longer than 1 MiB is cut into pieces, and a traceback is looked up in the last 16 KiB.
 */
import { Block } from './block.js';
import { Dedup } from './dedup.js';
import { findHead } from './families/index.js';
import { isUserFrame, parseFrame } from './frames.js';
import { MARKER_RE } from './markers.js';
import { normalizeLine } from './normalize.js';
import type { OomEvent, OomFrame } from './types.js';

export interface OomScanner {
  /** Feeds the next piece of text; returns the events that became complete. */
  push(chunk: string): OomEvent[];
  /** Returns events held back for de-duplication now (e.g. when a followed file goes quiet). */
  flush(): OomEvent[];
  /** Ends the input: finishes a message cut off at the end and returns every remaining event. */
  end(): OomEvent[];
}

export interface OomScannerOptions {
  /** Repeats of the same message within this many lines merge into one event (default 400). */
  dedupWindowLines?: number;
}

const MAX_LINE = 1 << 20;
const WINDOW_BEFORE = 2048;
const WINDOW_AFTER = 16_384;
const LOOKBACK = 16_384;

/**
 * Creates a scanner (see OomScanner). Events are held until no repeat of them can follow within the
 * de-duplication window, so ranks printing the same message become one event with every rank listed.
 */
export function createOomScanner(options: OomScannerOptions = {}): OomScanner {
  const dedup = new Dedup(options.dedupWindowLines ?? 400);
  let carry = '';
  /** Line number of the first line in `carry` (1-based). */
  let lineNo = 1;
  /** The last LOOKBACK characters before `carry`, for traceback frames. */
  let history = '';
  let block: Block | null = null;

  function closeBlock(): void {
    if (!block) return;
    dedup.add(block.finish());
    block = null;
  }

  /** Handles one complete line (`raw`, possibly a window of a longer one) at line number `n`. */
  function handleLine(raw: string, n: number, before: string): void {
    const norm = normalizeLine(raw);
    if (block) {
      if (block.offer(norm.text)) return;
      closeBlock();
    }
    if (norm.text === '' || !findHead(norm.text, 0)) return;
    block = new Block(norm.text, n, norm.rank, userFrameBefore(before));
  }

  /** The text before `at`, reaching back into earlier chunks, for finding the traceback frames. */
  function lookback(text: string, at: number): string {
    return at >= LOOKBACK ? text.slice(at - LOOKBACK, at) : (history + text.slice(0, at)).slice(-LOOKBACK);
  }

  /** Processes `text`, which ends at a line break (or is a piece of an over-long line, or the last line). */
  function processComplete(text: string): void {
    let pos = 0;
    const end = text.length;
    while (pos < end) {
      if (block) {
        const nl = text.indexOf('\n', pos);
        const lineEnd = nl < 0 ? end : nl;
        handleLine(text.slice(pos, Math.min(lineEnd, pos + WINDOW_AFTER)), lineNo, lookback(text, pos));
        if (nl < 0) break;
        lineNo++;
        pos = nl + 1;
        continue;
      }
      MARKER_RE.lastIndex = pos;
      const hit = MARKER_RE.exec(text);
      if (!hit) {
        lineNo += countBreaks(text, pos, end);
        break;
      }
      const lineStart = text.lastIndexOf('\n', hit.index) + 1;
      const startAt = Math.max(lineStart, pos);
      lineNo += countBreaks(text, pos, startAt);
      const nl = text.indexOf('\n', hit.index);
      const lineEnd = nl < 0 ? end : nl;
      const from = Math.max(startAt, hit.index - WINDOW_BEFORE);
      handleLine(text.slice(from, Math.min(lineEnd, hit.index + WINDOW_AFTER)), lineNo, lookback(text, startAt));
      if (nl < 0) break;
      lineNo++;
      pos = nl + 1;
    }
    history = text.length >= LOOKBACK ? text.slice(-LOOKBACK) : (history + text).slice(-LOOKBACK);
  }

  return {
    push(chunk) {
      const data = carry + chunk;
      const lastBreak = data.lastIndexOf('\n');
      if (lastBreak < 0) {
        carry = data;
        if (carry.length > MAX_LINE) {
          // An over-long line: parse all but its tail now, keep the tail, and stay on the same line number.
          const cut = carry.length - WINDOW_AFTER;
          processComplete(carry.slice(0, cut));
          carry = carry.slice(cut);
        }
      } else {
        processComplete(data.slice(0, lastBreak + 1));
        carry = data.slice(lastBreak + 1);
      }
      return dedup.release(lineNo);
    },
    flush() {
      closeBlock();
      return dedup.release(Number.POSITIVE_INFINITY);
    },
    end() {
      if (carry !== '') processComplete(carry);
      carry = '';
      closeBlock();
      return dedup.release(Number.POSITIVE_INFINITY);
    },
  };
}

/** Counts line breaks in text[from, to). */
function countBreaks(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = text.indexOf('\n', from); i >= 0 && i < to; i = text.indexOf('\n', i + 1)) count++;
  return count;
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
