/**
 * The marker set: literal phrases at least one of which every OOM message family contains. The text scanner
 * runs this one case-insensitive alternation over whole chunks, the byte scanner searches the same phrases in
 * raw bytes (byte-search.ts), and both look closer only at lines they hit. The benchmark gives grep the same
 * list (MARKER_PHRASES).
 */

/** The phrases, as plain text (grep -E and the regex below are both built from them). */
export const MARKER_PHRASES: readonly string[] = [
  'out of memory',
  'out_of_memory',
  'tried to allocate',
  'alloc_failed',
  'resource_exhausted',
  'resource exhausted',
  'oom when allocating',
  'failed to cuda calloc',
  'allocation on device',
  'invalid buffer size',
];

function escape(phrase: string): string {
  return phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Global, case-insensitive regex over the marker phrases (reset `lastIndex` before use). */
export const MARKER_RE = new RegExp(MARKER_PHRASES.map(escape).join('|'), 'gi');
