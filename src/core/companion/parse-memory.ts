/** The `memory` message: per-step peaks and what each step left behind, for the OOM forecast. */
import type { MemoryMessage, SitesMessage } from './messages.js';
import { bad, count, list, obj, text, type Obj } from './parse-fields.js';

/** Steps listed in one message, at most: the companion sends 1500 a message, well under the line limit. */
export const MAX_MEMORY_ROWS = 4096;

function byteList(o: Obj, key: string, rows: number | null): number[] {
  const v = list(o, key, '');
  if (v.length > MAX_MEMORY_ROWS) bad(`.${key}`, `${v.length} steps listed, more than ${MAX_MEMORY_ROWS}`);
  if (rows !== null && v.length !== rows) bad(`.${key}`, `${v.length} entries where .leftBytes has ${rows}`);
  return v.map((x, i) => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) bad(`.${key}[${i}]`, 'expected a non-negative integer');
    return x;
  });
}

/** Reads a `memory` message's fields onto `base`; the four lists must be equally long and peaks at least the current values. */
export function memoryMessage(base: Pick<MemoryMessage, 'schemaVersion' | 'pid' | 'timeMs'>, o: Obj, device: number): MemoryMessage {
  const boundary = text(o, 'boundary', '');
  if (boundary !== 'optimizer' && boundary !== 'dataloader') bad('.boundary', 'expected "optimizer" or "dataloader"');
  const firstStep = count(o, 'firstStep', '');
  if (firstStep < 1) bad('.firstStep', 'steps count from 1');
  const leftBytes = byteList(o, 'leftBytes', null);
  const peakAllocatedBytes = byteList(o, 'peakAllocatedBytes', leftBytes.length);
  const reservedBytes = byteList(o, 'reservedBytes', leftBytes.length);
  const peakReservedBytes = byteList(o, 'peakReservedBytes', leftBytes.length);
  for (let i = 0; i < leftBytes.length; i++) {
    if ((peakAllocatedBytes[i] as number) < (leftBytes[i] as number)) bad(`.peakAllocatedBytes[${i}]`, 'is below what the step left allocated');
    if ((peakReservedBytes[i] as number) < (reservedBytes[i] as number)) bad(`.peakReservedBytes[${i}]`, 'is below the reserved bytes at the step end');
  }
  return {
    ...base, type: 'memory', device, boundary, firstStep, leftBytes, peakAllocatedBytes, reservedBytes, peakReservedBytes,
    dropped: count(o, 'dropped', ''),
  };
}

/** Sites listed in one `sites` message, at most (the companion sends 5). */
export const MAX_SITES = 16;

/** Reads a `sites` message's fields onto `base`. */
export function sitesMessage(base: Pick<SitesMessage, 'schemaVersion' | 'pid' | 'timeMs'>, o: Obj, device: number): SitesMessage {
  const fromStep = count(o, 'fromStep', '');
  const toStep = count(o, 'toStep', '');
  if (toStep <= fromStep) bad('.toStep', 'is not after fromStep');
  const listed = list(o, 'sites', '');
  if (listed.length > MAX_SITES) bad('.sites', `${listed.length} sites listed, more than ${MAX_SITES}`);
  const sites = listed.map((v, i) => {
    const s = obj(v, `.sites[${i}]`);
    return { site: text(s, 'site', `.sites[${i}]`), bytes: count(s, 'bytes', `.sites[${i}]`), blocks: Number.isSafeInteger(s.blocks) ? (s.blocks as number) : 0 };
  });
  return { ...base, type: 'sites', device, fromStep, toStep, leftGrewBytes: count(o, 'leftGrewBytes', ''), sites };
}
