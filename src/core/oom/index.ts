/**
 * core/oom: find out-of-memory errors in text, read their exact numbers, and rank their causes. Pure: it
 * takes strings or bytes and returns values. The supervisor feeds a child's output through
 * `createOomScanner`; `gpumem explain` feeds files and stdin as bytes through `createOomByteScanner`.
 */
import { createOomScanner } from './scanner.js';
import type { OomEvent } from './types.js';

export { createOomScanner, type OomScanner, type OomScannerOptions } from './scanner.js';
export { createOomByteScanner, type OomByteScanner } from './byte-scanner.js';
export { explainOom } from './explain.js';
export { eventToJson as oomEventToJson, OOM_SCHEMA_VERSION } from './json.js';
export { invertSize as invertPytorchSize } from './size.js';
export { MARKER_PHRASES as OOM_MARKER_PHRASES } from './markers.js';
export type { Cause, OomContext, OomEvent, OomFamily, OomFrame, OomFramework, OomProcess } from './types.js';

/** Every OOM event in a whole text (a log, a paste), in order, repeats merged. */
export function parseOomText(text: string): OomEvent[] {
  const scanner = createOomScanner();
  return [...scanner.push(text), ...scanner.end()];
}
