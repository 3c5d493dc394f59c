/**
 * The streaming OOM scanner over text: feed it text in chunks of any size, get events once each is complete.
 * Line numbers are global across chunks. Ordinary lines cost one marker-regex pass over the chunk and a
 * newline count; only lines holding a marker (and the few lines after one) are normalized and parsed. Memory
 * stays bounded: a line longer than 1 MiB is cut into pieces, and a traceback is looked up in the last 16 KiB.
 * Logs read from files go through the byte scanner (byte-scanner.ts), which gives the same events faster.
 */
import { LineMachine, LOOKBACK, WINDOW_AFTER, WINDOW_BEFORE } from './line-machine.js';
import { MARKER_RE } from './markers.js';
import type { OomEvent } from './types.js';

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

/**
 * Creates a scanner (see OomScanner). Events are held until no repeat of them can follow within the
 * de-duplication window, so ranks printing the same message become one event with every rank listed.
 */
export function createOomScanner(options: OomScannerOptions = {}): OomScanner {
  const machine = new LineMachine(options.dedupWindowLines ?? 400);
  let carry = '';
  /** Line number of the first line in `carry` (1-based). */
  let lineNo = 1;
  /** The last LOOKBACK characters before `carry`, for traceback frames. */
  let history = '';

  /** The last `units` (≤ LOOKBACK) of the text before `at` (within text[from, at)), reaching back into earlier chunks. */
  function lookback(text: string, from: number, at: number, units: number): string {
    return at - from >= units ? text.slice(at - units, at) : (history + text.slice(from, at)).slice(-units);
  }

  /**
   * Processes text[from, to), which ends at a line break (or is a piece of an over-long line, or the last
   * line). Works on the chunk in place: slicing a big chunk would make the regex pass slower.
   */
  function processComplete(text: string, from: number, to: number): void {
    let pos = from;
    while (pos < to) {
      if (machine.collecting) {
        const nl = text.indexOf('\n', pos);
        const lineEnd = nl < 0 || nl >= to ? to : nl;
        const lineStart = pos;
        machine.line(text.slice(pos, Math.min(lineEnd, pos + WINDOW_AFTER)), lineNo, (units) => lookback(text, from, lineStart, units));
        if (lineEnd === to) break;
        lineNo++;
        pos = lineEnd + 1;
        continue;
      }
      MARKER_RE.lastIndex = pos;
      const hit = MARKER_RE.exec(text);
      if (!hit || hit.index >= to) {
        lineNo += countBreaks(text, pos, to);
        break;
      }
      const lineStart = Math.max(text.lastIndexOf('\n', hit.index) + 1, pos);
      lineNo += countBreaks(text, pos, lineStart);
      const nl = text.indexOf('\n', hit.index);
      const lineEnd = nl < 0 || nl >= to ? to : nl;
      const windowStart = Math.max(lineStart, hit.index - WINDOW_BEFORE);
      machine.line(text.slice(windowStart, Math.min(lineEnd, hit.index + WINDOW_AFTER)), lineNo, (units) => lookback(text, from, lineStart, units));
      if (lineEnd === to) break;
      lineNo++;
      pos = lineEnd + 1;
    }
    history = to - from >= LOOKBACK ? text.slice(to - LOOKBACK, to) : (history + text.slice(from, to)).slice(-LOOKBACK);
  }

  return {
    push(chunk) {
      const firstBreak = chunk.indexOf('\n');
      if (firstBreak < 0) {
        carry += chunk;
        if (carry.length > MAX_LINE) {
          // An over-long line: parse all but its tail now, keep the tail, and stay on the same line number.
          const cut = carry.length - WINDOW_AFTER;
          processComplete(carry, 0, cut);
          carry = carry.slice(cut);
        }
        return machine.release(lineNo);
      }
      // The line carried over from the last chunk ends at this chunk's first break.
      if (carry !== '') {
        const line = carry + chunk.slice(0, firstBreak + 1);
        carry = '';
        processComplete(line, 0, line.length);
      } else {
        processComplete(chunk, 0, firstBreak + 1);
      }
      const lastBreak = chunk.lastIndexOf('\n');
      if (lastBreak > firstBreak) processComplete(chunk, firstBreak + 1, lastBreak + 1);
      carry = chunk.slice(lastBreak + 1);
      return machine.release(lineNo);
    },
    flush() {
      machine.closeBlock();
      return machine.release(Number.POSITIVE_INFINITY);
    },
    end() {
      if (carry !== '') processComplete(carry, 0, carry.length);
      carry = '';
      machine.closeBlock();
      return machine.release(Number.POSITIVE_INFINITY);
    },
  };
}

/** Counts line breaks in text[from, to). */
function countBreaks(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = text.indexOf('\n', from); i >= 0 && i < to; i = text.indexOf('\n', i + 1)) count++;
  return count;
}
