/**
 * The marker search over raw bytes. The marker phrases are ASCII and the text scanner's regex matches them
 * ASCII-case-insensitively (a non-ASCII character never matches an ASCII letter without the `u` flag), and
 * UTF-8 never hides an ASCII byte inside another character, so searching the undecoded bytes with ASCII case
 * folding finds exactly the positions the regex finds in the decoded text, without decoding anything.
 *
 * The search is a multi-phrase shift search over byte pairs: a window as long as the shortest phrase slides
 * along the text, and the last two bytes of the window say how far it can move without skipping a phrase
 * (usually most of its length, since log text rarely looks like the phrases' bigrams). Only where the table
 * says 0 are the phrases compared. Linear time: the window moves at least one byte per step.
 */
import { MARKER_PHRASES } from './markers.js';

const LF = 0x0a;

/** ASCII upper case to lower case; every other byte maps to itself. */
const FOLD = new Uint8Array(256);
for (let b = 0; b < 256; b++) FOLD[b] = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;

const PHRASES: readonly Uint8Array[] = MARKER_PHRASES.map((p) => Uint8Array.from(p.toLowerCase(), (c) => c.charCodeAt(0)));
/** The window length: the shortest phrase. */
const SPAN = Math.min(...PHRASES.map((p) => p.length));

/** Case variants of an ASCII byte (the byte itself, plus its upper case for a lower-case letter). */
function variants(b: number): number[] {
  return b >= 0x61 && b <= 0x7a ? [b, b - 0x20] : [b];
}

/**
 * SHIFT[b1 << 8 | b2]: how far the window may move when it ends in bytes b1 b2 — the distance from the
 * last place that pair occurs within the first SPAN bytes of any phrase to the window's end, or SPAN - 1.
 */
const SHIFT = new Uint8Array(1 << 16).fill(SPAN - 1);
for (const phrase of PHRASES) {
  for (let j = 1; j < SPAN; j++) {
    const shift = SPAN - 1 - j;
    for (const a of variants(phrase[j - 1] as number)) {
      for (const b of variants(phrase[j] as number)) {
        const key = (a << 8) | b;
        if (shift < (SHIFT[key] as number)) SHIFT[key] = shift;
      }
    }
  }
}

/**
 * The offset of the first marker phrase that starts in bytes[from, to) and ends by `end` (`end` ≥ `to`:
 * a phrase may run past `to` into bytes that are there but belong to the next piece), or -1.
 */
export function findMarker(bytes: Uint8Array, from: number, to: number, end: number): number {
  let last = from + SPAN - 1;
  // A phrase starting before `to` has its first SPAN bytes end before to + SPAN - 1.
  const stop = Math.min(end, to + SPAN - 1);
  while (last < stop) {
    const shift = SHIFT[((bytes[last - 1] as number) << 8) | (bytes[last] as number)] as number;
    if (shift !== 0) {
      last += shift;
      continue;
    }
    const start = last - SPAN + 1;
    if (phraseAt(bytes, start, end)) return start;
    last++;
  }
  return -1;
}

function phraseAt(bytes: Uint8Array, start: number, end: number): boolean {
  for (const phrase of PHRASES) {
    if (start + phrase.length > end) continue;
    let k = 0;
    while (k < phrase.length && FOLD[bytes[start + k] as number] === phrase[k]) k++;
    if (k === phrase.length) return true;
  }
  return false;
}

/**
 * Counts line feeds in bytes[from, to). Uses the array's own `indexOf`, which Node's Buffer implements
 * with memchr, so callers that pass Buffers get a native count and core stays free of Node imports.
 */
export function countBreaks(bytes: Uint8Array, from: number, to: number): number {
  let count = 0;
  for (let i = from < to ? bytes.indexOf(LF, from) : -1; i >= 0 && i < to; i = bytes.indexOf(LF, i + 1)) count++;
  return count;
}

/** The offset of the first line feed in bytes[from, to), or -1. */
export function nextBreak(bytes: Uint8Array, from: number, to: number): number {
  const at = from < to ? bytes.indexOf(LF, from) : -1;
  return at >= 0 && at < to ? at : -1;
}

/** The start of the line holding `at`, not before `floor`. */
export function lineStartOf(bytes: Uint8Array, at: number, floor: number): number {
  // lastIndexOf with a negative start would search from the end of the array.
  if (at - 1 < floor) return floor;
  return Math.max(bytes.lastIndexOf(LF, at - 1) + 1, floor);
}
