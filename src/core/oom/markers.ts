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
  // Families whose words differ (each phrase at least 12 characters: the byte search moves by up to that much).
  'allocating <= available',
  'buffer of size',
  'failed to allocate buffer',
  'device memory allocation',
  "'s max seq len",
  'memory for the cache blocks',
  'allocate request for',
  'could not be allocated',
  'code 2: outofmemory',
  'no enough memory',
  // Pieces of PyTorch's message pasted without its head.
  'total capacity',
  'total capacty',
  'already allocated',
  'reserved in total by pytorch',
  'by pytorch but unallocated',
  'is allocated by pytorch',
  'memory in use',
  'avoid fragmentation',
];

function escape(phrase: string): string {
  return phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Global, case-insensitive regex over the marker phrases (reset `lastIndex` before use). */
export const MARKER_RE = new RegExp(MARKER_PHRASES.map(escape).join('|'), 'gi');
