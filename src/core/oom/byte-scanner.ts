/**
 * The streaming OOM scanner over raw bytes (UTF-8 or anything else): what `gpumem explain` feeds a log
 * through. It gives the same events as the text scanner gets for the same bytes decoded as UTF-8 (invalid
 * bytes as U+FFFD), but ordinary lines are never decoded: marker phrases are found in the bytes
 * (byte-search.ts), line feeds are counted in place, and only a bounded window around a hit, the lines a
 * message continues on, and the traceback before a message are decoded. Memory stays bounded whatever the
 * input: the current line is carried up to 1 MiB (longer lines are cut into pieces), plus ~48 KiB of history.
 */
import { countBreaks, findMarker, lineStartOf, nextBreak, warmUpMarkerSearch } from './byte-search.js';
import { LineMachine, LOOKBACK, WINDOW_AFTER, WINDOW_BEFORE } from './line-machine.js';
import type { OomScannerOptions } from './scanner.js';
import type { OomEvent } from './types.js';

export interface OomByteScanner {
  /** Feeds the next bytes (any split, even inside a character); returns the events that became complete. */
  push(chunk: Uint8Array): OomEvent[];
  /** Returns events held back for de-duplication now (e.g. when a followed file goes quiet). */
  flush(): OomEvent[];
  /** Ends the input: finishes a message cut off at the end and returns every remaining event. */
  end(): OomEvent[];
}

/**
 * Bytes that always decode to at least `units` UTF-16 units: a unit never takes more than 3 bytes, and a
 * character cut at the front of a byte range decodes to at most 3 stray U+FFFD, which the caller trims off.
 */
function bytesFor(units: number): number {
  return 3 * units + 4;
}

const BEFORE_BYTES = bytesFor(WINDOW_BEFORE);
const AFTER_BYTES = bytesFor(WINDOW_AFTER);
const HISTORY_BYTES = bytesFor(LOOKBACK);
const MAX_LINE_BYTES = 1 << 20;

/** A growable byte array for the line carried between chunks (reused, so a long log allocates it once). */
class ByteCarry {
  private bytes = new Uint8Array(1 << 16);
  length = 0;

  append(src: Uint8Array, from: number, to: number): void {
    const need = this.length + (to - from);
    if (need > this.bytes.length) {
      const grown = new Uint8Array(Math.max(need, this.bytes.length * 2));
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
    }
    this.bytes.set(src.subarray(from, to), this.length);
    this.length = need;
  }

  view(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  dropFront(count: number): void {
    this.bytes.copyWithin(0, count, this.length);
    this.length -= count;
  }
}

/**
 * Creates a byte scanner (see OomByteScanner). Pass Node Buffers for the fastest line counting (their
 * `indexOf` is native); plain Uint8Arrays give the same events.
 */
export function createOomByteScanner(options: OomScannerOptions = {}): OomByteScanner {
  warmUpMarkerSearch();
  const machine = new LineMachine(options.dedupWindowLines ?? 400);
  // ignoreBOM keeps a U+FEFF in the text, as decoding the whole input at once would.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const carry = new ByteCarry();
  /** The last bytes before the range being processed (at most HISTORY_BYTES), for traceback frames. */
  const history = new Uint8Array(HISTORY_BYTES);
  let historyLength = 0;
  let lineNo = 1;

  const decode = (bytes: Uint8Array, from: number, to: number): string => decoder.decode(bytes.subarray(from, to));

  /** The last `units` (≤ LOOKBACK) UTF-16 units of the text before bytes[at], reaching back into earlier input. */
  function lookback(bytes: Uint8Array, from: number, at: number, units: number): string {
    const want = bytesFor(units);
    if (at - from >= want) return decode(bytes, at - want, at).slice(-units);
    const keep = Math.min(historyLength, want - (at - from));
    const joined = new Uint8Array(keep + (at - from));
    joined.set(history.subarray(historyLength - keep, historyLength));
    joined.set(bytes.subarray(from, at), keep);
    return decoder.decode(joined).slice(-units);
  }

  function remember(bytes: Uint8Array, from: number, to: number): void {
    const size = to - from;
    if (size >= HISTORY_BYTES) {
      history.set(bytes.subarray(to - HISTORY_BYTES, to));
      historyLength = HISTORY_BYTES;
      return;
    }
    const keep = Math.min(historyLength, HISTORY_BYTES - size);
    history.copyWithin(0, historyLength - keep, historyLength);
    history.set(bytes.subarray(from, to), keep);
    historyLength = keep + size;
  }

  /** The text the text scanner would see for a hit at `hit` on the line bytes[lineStart, lineEnd). */
  function hitWindow(bytes: Uint8Array, lineStart: number, hit: number, lineEnd: number): string {
    const before = decode(bytes, Math.max(lineStart, hit - BEFORE_BYTES), hit).slice(-WINDOW_BEFORE);
    return before + decode(bytes, hit, Math.min(lineEnd, hit + AFTER_BYTES)).slice(0, WINDOW_AFTER);
  }

  /**
   * Processes bytes[from, to), which ends at a line feed (or is a piece of an over-long line, or the last
   * line); a phrase starting before `to` may run on to `end`. Mirrors the text scanner's loop.
   */
  function processComplete(bytes: Uint8Array, from: number, to: number, end: number): void {
    let pos = from;
    while (pos < to) {
      if (machine.collecting) {
        const nl = nextBreak(bytes, pos, to);
        const lineStart = pos;
        const text = decode(bytes, pos, Math.min(nl < 0 ? to : nl, pos + AFTER_BYTES)).slice(0, WINDOW_AFTER);
        machine.line(text, lineNo, (units) => lookback(bytes, from, lineStart, units));
        if (nl < 0) break;
        lineNo++;
        pos = nl + 1;
        continue;
      }
      const hit = findMarker(bytes, pos, to, end);
      if (hit < 0) {
        lineNo += countBreaks(bytes, pos, to);
        break;
      }
      const lineStart = lineStartOf(bytes, hit, pos);
      lineNo += countBreaks(bytes, pos, lineStart);
      const nl = nextBreak(bytes, hit, to);
      machine.line(hitWindow(bytes, lineStart, hit, nl < 0 ? to : nl), lineNo, (units) => lookback(bytes, from, lineStart, units));
      if (nl < 0) break;
      lineNo++;
      pos = nl + 1;
    }
    remember(bytes, from, to);
  }

  return {
    push(chunk) {
      const firstBreak = nextBreak(chunk, 0, chunk.length);
      if (firstBreak < 0) {
        carry.append(chunk, 0, chunk.length);
        if (carry.length > MAX_LINE_BYTES) {
          // An over-long line: parse all but its tail now, keep the tail, and stay on the same line number.
          const cut = carry.length - AFTER_BYTES;
          const line = carry.view();
          processComplete(line, 0, cut, line.length);
          carry.dropFront(cut);
        }
        return machine.release(lineNo);
      }
      // The line carried over from the last chunk ends at this chunk's first line feed.
      if (carry.length > 0) {
        carry.append(chunk, 0, firstBreak + 1);
        const line = carry.view();
        processComplete(line, 0, line.length, line.length);
        carry.length = 0;
      } else {
        processComplete(chunk, 0, firstBreak + 1, firstBreak + 1);
      }
      const lastBreak = lineStartOf(chunk, chunk.length, 0) - 1;
      if (lastBreak > firstBreak) processComplete(chunk, firstBreak + 1, lastBreak + 1, lastBreak + 1);
      carry.append(chunk, lastBreak + 1, chunk.length);
      return machine.release(lineNo);
    },
    flush() {
      machine.closeBlock();
      return machine.release(Number.POSITIVE_INFINITY);
    },
    end() {
      if (carry.length > 0) {
        const line = carry.view();
        processComplete(line, 0, line.length, line.length);
        carry.length = 0;
      }
      machine.closeBlock();
      return machine.release(Number.POSITIVE_INFINITY);
    },
  };
}
