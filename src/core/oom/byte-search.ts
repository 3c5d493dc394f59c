/**
 * The marker search over raw bytes. The marker phrases are ASCII and the text scanner's regex matches them
 * ASCII-case-insensitively (a non-ASCII character never matches an ASCII letter without the `u` flag), and
 * UTF-8 never hides an ASCII byte inside another character, so searching the undecoded bytes with ASCII case
 * folding finds exactly the positions the regex finds in the decoded text, without decoding anything.
 *
 * The search is a multi-phrase shift search over byte triples: a window as long as the shortest phrase slides
 * along the text, and a hash of the last three bytes of the window says how far it can move without skipping
 * a phrase (usually most of its length: log text rarely ends a window the way a phrase's first SPAN bytes
 * end). Only where the table says 0 are the phrases compared, and after a failed comparison the window moves
 * on as far as the triple allows. Linear time: the window moves at least one byte per step.
 */
import { MARKER_PHRASES } from './markers.js';

const LF = 0x0a;

/** ASCII upper case to lower case; every other byte maps to itself. */
const FOLD = new Uint8Array(256);
for (let b = 0; b < 256; b++) FOLD[b] = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;

const PHRASES: readonly Uint8Array[] = MARKER_PHRASES.map((p) => Uint8Array.from(p.toLowerCase(), (c) => c.charCodeAt(0)));
/** The window length: the shortest phrase. */
const SPAN = Math.min(...PHRASES.map((p) => p.length));
/** The longest move: the window's last triple may still hold the first two bytes of a phrase. */
const MAX_SHIFT = SPAN - 2;

/** Case variants of an ASCII byte (the byte itself, plus its upper case for a lower-case letter). */
function variants(b: number): number[] {
  return b >= 0x61 && b <= 0x7a ? [b, b - 0x20] : [b];
}

/** The table slot of the three bytes ending at `at` (distinct triples may share a slot; that only shortens moves). */
function slot(bytes: Uint8Array, at: number): number {
  return (((bytes[at - 2] as number) << 10) ^ ((bytes[at - 1] as number) << 5) ^ (bytes[at] as number)) & 0xffff;
}

/**
 * SHIFT[slot]: how far the window may move when it ends in that triple: the distance from the last place the
 * triple occurs within the first SPAN bytes of any phrase to the window's end, or MAX_SHIFT. AFTER[slot]: the
 * same, not counting the window's end itself — the move after the phrases were compared there and failed.
 * CANDIDATES[slot]: the phrases whose first SPAN bytes end in a triple of that slot (compared where SHIFT is 0).
 * Built on the first search, not at load: commands that never scan a log (`gpumem --version`, `status`)
 * should not pay for 64 K-entry tables.
 */
let SHIFT = new Uint8Array(0);
let AFTER = new Uint8Array(0);
let CANDIDATES: Array<readonly Uint8Array[]> = [];

function buildTables(): void {
  const shiftTable = new Uint8Array(1 << 16).fill(MAX_SHIFT);
  const afterTable = new Uint8Array(1 << 16).fill(MAX_SHIFT);
  const candidates = new Array<readonly Uint8Array[]>(1 << 16).fill([]);
  for (const phrase of PHRASES) {
    for (let j = 2; j < SPAN; j++) {
      const shift = SPAN - 1 - j;
      for (const a of variants(phrase[j - 2] as number)) {
        for (const b of variants(phrase[j - 1] as number)) {
          for (const c of variants(phrase[j] as number)) {
            const key = slot(Uint8Array.of(a, b, c), 2);
            if (shift < (shiftTable[key] as number)) shiftTable[key] = shift;
            if (shift > 0 && shift < (afterTable[key] as number)) afterTable[key] = shift;
            const listed = candidates[key] as readonly Uint8Array[];
            if (shift === 0 && !listed.includes(phrase)) candidates[key] = [...listed, phrase];
          }
        }
      }
    }
  }
  [SHIFT, AFTER, CANDIDATES] = [shiftTable, afterTable, candidates];
}

/** Below this many bytes per lane, one lane is used. */
const LANE_MIN_BYTES = 64;

/**
 * The offset of the first marker phrase that starts in bytes[from, to) and ends by `end` (`end` ≥ `to`:
 * a phrase may run past `to` into bytes that are there but belong to the next piece), or -1.
 *
 * Each step of the shift search waits for the previous one (the next position depends on the byte read), so
 * one lane is bound by memory latency, not by the CPU. The range is split into four lanes stepped together;
 * the first lane's match is the answer, a later lane's match counts only when the lanes before it have none.
 */
export function findMarker(bytes: Uint8Array, from: number, to: number, end: number): number {
  if (SHIFT.length === 0) buildTables();
  // A phrase starting before `to` has its first SPAN bytes end before to + SPAN - 1.
  const stop = Math.min(end, to + SPAN - 1);
  if (to - from < 4 * LANE_MIN_BYTES) return scanLane(bytes, from + SPAN - 1, stop, end);
  const quarter = (to - from) >> 2;
  const s1 = from + quarter;
  const s2 = s1 + quarter;
  const s3 = s2 + quarter;
  const stop0 = s1 + SPAN - 1;
  const stop1 = s2 + SPAN - 1;
  const stop2 = s3 + SPAN - 1;
  let l0 = from + SPAN - 1;
  let l1 = s1 + SPAN - 1;
  let l2 = s2 + SPAN - 1;
  let l3 = s3 + SPAN - 1;
  /** The lane (1–3) that found a phrase while an earlier lane had not finished; 0 while none has. */
  let laterLane = 0;
  while (l0 < stop0 && l1 < stop1 && l2 < stop2 && l3 < stop) {
    const h0 = slot(bytes, l0);
    const h1 = slot(bytes, l1);
    const h2 = slot(bytes, l2);
    const h3 = slot(bytes, l3);
    const k0 = SHIFT[h0] as number;
    const k1 = SHIFT[h1] as number;
    const k2 = SHIFT[h2] as number;
    const k3 = SHIFT[h3] as number;
    if (k0 !== 0 && k1 !== 0 && k2 !== 0 && k3 !== 0) {
      l0 += k0;
      l1 += k1;
      l2 += k2;
      l3 += k3;
      continue;
    }
    // Some lane is on a possible phrase: compare there (the first lane's match is final).
    if (k0 !== 0) l0 += k0;
    else if (phraseAt(bytes, l0 - SPAN + 1, end, h0)) return l0 - SPAN + 1;
    else l0 += AFTER[h0] as number;
    if (k1 !== 0) l1 += k1;
    else if (phraseAt(bytes, l1 - SPAN + 1, end, h1)) laterLane = 1;
    else l1 += AFTER[h1] as number;
    if (laterLane === 0) {
      if (k2 !== 0) l2 += k2;
      else if (phraseAt(bytes, l2 - SPAN + 1, end, h2)) laterLane = 2;
      else l2 += AFTER[h2] as number;
    }
    if (laterLane === 0) {
      if (k3 !== 0) l3 += k3;
      else if (phraseAt(bytes, l3 - SPAN + 1, end, h3)) laterLane = 3;
      else l3 += AFTER[h3] as number;
    }
    if (laterLane !== 0) break;
  }
  // Finish the lanes one at a time, in order, up to the lane that already has a match (its `last` stays on it).
  const lanes: Array<[number, number]> = [[l0, stop0], [l1, stop1], [l2, stop2], [l3, stop]];
  for (let lane = 0; lane < 4; lane++) {
    const [last, laneStop] = lanes[lane] as [number, number];
    if (laterLane !== 0 && lane === laterLane) return last - SPAN + 1;
    const hit = scanLane(bytes, last, laneStop, end);
    if (hit >= 0) return hit;
  }
  return -1;
}

/** One lane: the first phrase whose first SPAN bytes end at or after `last` and before `stop`. */
function scanLane(bytes: Uint8Array, last: number, stop: number, end: number): number {
  while (last < stop) {
    const h = slot(bytes, last);
    const shift = SHIFT[h] as number;
    if (shift !== 0) {
      last += shift;
      continue;
    }
    if (phraseAt(bytes, last - SPAN + 1, end, h)) return last - SPAN + 1;
    last += AFTER[h] as number;
  }
  return -1;
}

/** True when one of the slot's candidate phrases starts at `start` (ASCII case folded) and ends by `end`. */
function phraseAt(bytes: Uint8Array, start: number, end: number, key: number): boolean {
  for (const phrase of CANDIDATES[key] as readonly Uint8Array[]) {
    if (start + phrase.length > end) continue;
    let k = 0;
    while (k < phrase.length && FOLD[bytes[start + k] as number] === phrase[k]) k++;
    if (k === phrase.length) return true;
  }
  return false;
}

let warmedUp = false;

/**
 * Runs the search once over small made-up inputs that take every branch (a phrase in each lane, near misses,
 * two lanes matching at once, short ranges). The JIT compiles the hot loop from what it has seen run; a
 * branch first taken on real data would throw the compiled loop away mid-log and cost a slow stretch.
 */
export function warmUpMarkerSearch(): void {
  if (warmedUp) return;
  warmedUp = true;
  const length = 1024;
  const quarter = length >> 2;
  const samples = ['alloc_failed', 'xLLOC_FAILED', 'Out of memory', 'out of mxmory'];
  for (let round = 0; round < 3; round++) {
    for (const sample of samples) {
      const phrase = Uint8Array.from(sample, (c) => c.charCodeAt(0));
      for (let at = round; at + phrase.length <= length; at += 61) {
        const bytes = new Uint8Array(length).fill(0x78);
        bytes.set(phrase, at);
        if (at + quarter + phrase.length <= length) bytes.set(phrase, at + quarter);
        findMarker(bytes, 0, length, length);
        findMarker(bytes, at, Math.min(length, at + 200), length);
        countBreaks(bytes, 0, length);
      }
    }
  }
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
