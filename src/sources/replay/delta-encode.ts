/**
 * Writing format version 4: a full sample (a keyframe) first and then every `everySamples` samples or
 * `everyMs` of recorded time, whichever comes first; between keyframes each sample is a delta against the one
 * before (delta-shape.ts). A GPU's numbers move every second but its name, PCI id, limits and versions do
 * not, and of 512 process rows only those whose memory moved need a word: at 8 GPUs × 64 processes a sample
 * shrinks from about 125 KB (version 2) to a few KB. A keyframe is also written when a delta would say more
 * than the sample itself (most rows new, reordered or reshaped, a GPU gone or added).
 */
import type { HostFacts, Sample } from '../../core/types.js';
import { DELTA_KEY, isNestedField, sameValue, type ChangedFields, type DeltaBody, type DeltaLine, type ItemChanges, type RowChanges } from './delta-shape.js';
import { addShared, sharedPaths, unshared, type Changes, type Found } from './delta-shared.js';
import { createHostFactsEncoder, type EncodedSample } from './host-table.js';

/** When a keyframe is written: whichever limit is reached first. */
export interface KeyframePolicy {
  everySamples: number;
  everyMs: number;
}

/** Ten minutes at 1 Hz: a keyframe costs about 125 KB at 8 × 64, so 0.2 KB a sample spread over 600. */
export const DEFAULT_KEYFRAMES: KeyframePolicy = { everySamples: 600, everyMs: 600_000 };

/** One sample's lines: host facts new in it (or null), then the sample as a keyframe or a delta. */
export type RecordingEncoder = (sample: Sample) => {
  definitions: Record<string, HostFacts> | null;
  line: EncodedSample | DeltaLine;
  keyframe: boolean;
};

type Item = Record<string, unknown>;

/** The sample fields that are not arrays of items, compared whole. */
const ITEM_FIELDS: ReadonlySet<string> = new Set(['timeMs', 'devices', 'processes']);

/** Fields of `item` whose value is not undefined (the ones JSON writes). */
function definedFields(item: Item): number {
  let count = 0;
  for (const name in item) if (item[name] !== undefined) count++;
  return count;
}

/** A name a path can hold: the dot separates a nested field, the comma paths changed together. */
const plainName = (name: string): boolean => !name.includes('.') && !name.includes(',');

/** No path changed (shared: never written to). */
const UNCHANGED: Found = [];

/**
 * The changed paths of `next` against `prev`: `field`, or `field.sub` inside a nested object. Null when the
 * two differ in their set of fields (or a name holds a dot or a comma): then only the whole item says it.
 */
function diffItem(prev: Item, next: Item): Found | null {
  let found = UNCHANGED;
  let nextCount = 0;
  for (const name in next) {
    const b = next[name];
    // A field set to undefined is not written: it is absent, as a reader will see it.
    if (b === undefined) continue;
    nextCount++;
    const a = prev[name];
    if (a === undefined || !plainName(name)) return null;
    if (a === b) continue;
    if (isNestedField(name, a) && isNestedField(name, b)) {
      let count = 0;
      for (const sub in b) {
        if (b[sub] === undefined) continue;
        count++;
        if (a[sub] === undefined || !plainName(sub)) return null;
        if (!sameValue(a[sub], b[sub])) (found === UNCHANGED ? (found = []) : found).push([`${name}.${sub}`, b[sub]]);
      }
      if (count !== definedFields(a)) return null;
    } else if (!sameValue(a, b)) {
      (found === UNCHANGED ? (found = []) : found).push([name, b]);
    }
  }
  return nextCount === definedFields(prev) ? found : null;
}

/** Records item `pos`'s changes, if any. */
function note(changes: Changes, pos: number, found: Found): void {
  if (found.length === 0) return;
  changes.positions.push(pos);
  changes.found.push(found);
}

/**
 * The changes written as paths: paths that changed together in the same items share one key joined by commas
 * with their values in an array (a row whose memory, SM % and CPU ticks moved names its position once); a path
 * every item changed is an array, one value per item in order; and a value many items took (the date a /proc
 * round gives each of 512 rows) is written once (delta-shared.ts).
 */
function changedFields(changes: Changes, count: number): ChangedFields {
  const out: ChangedFields = {};
  const shared = sharedPaths(changes, count);
  for (let k = 0; k < changes.positions.length; k++) {
    const found = shared === null ? changes.found[k]! : unshared(changes.found[k]!, shared);
    if (found.length === 0) continue;
    const key = found.length === 1 ? found[0]![0] : found.map(([path]) => path).join(',');
    ((out[key] ??= {}) as Record<string, unknown>)[changes.positions[k]!] = found.length === 1 ? found[0]![1] : found.map(([, value]) => value);
  }
  // A path every item changed (a GPU's power, temperature, memory: all eight every second) is written as an
  // array, one value per item in order, saving the position keys.
  for (const [path, byPosition] of Object.entries(out)) {
    if (count > 1 && Object.keys(byPosition).length === count) out[path] = Object.values(byPosition) as unknown as Record<string, unknown>;
  }
  if (shared !== null) addShared(out, shared, count);
  return out;
}

/** What identifies a process row from sample to sample (a mismatch costs bytes, never exactness). */
function rowKey(r: Item): string {
  return `${r.pid as number}/${(r.gpuUuid as string | undefined) ?? ''}/${(r.gpuIndex as number | undefined) ?? ''}/${(r.gpuInstanceId as number | undefined) ?? ''}/${(r.computeInstanceId as number | undefined) ?? ''}`;
}

/** Whether two rows have the same key (rowKey) without building it. */
function sameRowKey(a: Item, b: Item): boolean {
  return a.pid === b.pid && (a.gpuUuid ?? '') === (b.gpuUuid ?? '') && (a.gpuIndex ?? '') === (b.gpuIndex ?? '')
    && (a.gpuInstanceId ?? '') === (b.gpuInstanceId ?? '') && (a.computeInstanceId ?? '') === (b.computeInstanceId ?? '');
}

/** The devices' changes, or null when their number changed or most of them were replaced. */
function diffDevices(prev: Item[], next: Item[]): ItemChanges | null {
  if (prev.length !== next.length) return null;
  const changes: Changes = { positions: [], found: [] };
  let replaced: Record<string, Item> | undefined;
  let replacedCount = 0;
  for (let i = 0; i < next.length; i++) {
    if (prev[i] === next[i]) continue;
    const found = diffItem(prev[i]!, next[i]!);
    if (found !== null) {
      note(changes, i, found);
      continue;
    }
    (replaced ??= {})[i] = next[i]!;
    replacedCount++;
  }
  if (replacedCount * 2 > next.length) return null;
  return { ...(replaced ? { replaced } : {}), ...(changes.positions.length > 0 ? { changed: changedFields(changes, next.length) } : {}) };
}

/**
 * The rows' changes: rows matched by pid, GPU and MIG instance in their order; unmatched ones removed or
 * added. Null when more than half of the new rows would be written whole (a keyframe is then smaller).
 */
function diffRows(prev: Item[], next: Item[]): RowChanges | null {
  const changes: Changes = { positions: [], found: [] };
  const out: RowChanges = {};
  // The very rows of the sample before (host-table.ts hands them back when the source did): nothing moved.
  if (prev === next) return out;
  let whole = 0;
  // A row object of the sample before (host-table.ts hands back a row's encoding when the source reused the
  // row) is the same row with the same values: neither its key nor its fields need comparing.
  const sameOrder = prev.length === next.length && next.every((r, i) => r === prev[i] || sameRowKey(r, prev[i]!));
  if (sameOrder) {
    for (let i = 0; i < next.length; i++) {
      if (prev[i] === next[i]) continue;
      const found = diffItem(prev[i]!, next[i]!);
      if (found !== null) note(changes, i, found);
      else {
        (out.replaced ??= {})[i] = next[i]!;
        whole++;
      }
    }
  } else {
    const queues = new Map<string, { at: number; positions: number[] }>();
    prev.forEach((r, i) => {
      const key = rowKey(r);
      const queue = queues.get(key);
      if (queue) queue.positions.push(i);
      else queues.set(key, { at: 0, positions: [i] });
    });
    const kept = new Uint8Array(prev.length);
    let last = -1;
    for (let j = 0; j < next.length; j++) {
      const queue = queues.get(rowKey(next[j]!));
      const i = queue?.positions[queue.at];
      // Kept rows keep their order: a row that moved before an earlier kept one is removed and added again.
      if (queue && i !== undefined && i > last) {
        queue.at++;
        last = i;
        kept[i] = 1;
        const found = diffItem(prev[i]!, next[j]!);
        if (found !== null) {
          note(changes, j, found);
          continue;
        }
        (out.replaced ??= {})[j] = next[j]!;
      } else {
        (out.added ??= {})[j] = next[j]!;
      }
      whole++;
    }
    const removed = [...kept.keys()].filter((i) => kept[i] === 0);
    if (removed.length > 0) out.removed = removed;
  }
  if (whole * 2 > next.length) return null;
  if (changes.positions.length > 0) out.changed = changedFields(changes, next.length);
  return out;
}

/** The delta from `prev` to `next`, or null when a keyframe must be written instead. */
function diffSamples(prev: EncodedSample, next: EncodedSample): DeltaLine | null {
  const body: DeltaBody = { timeMs: next.timeMs };
  const before = prev as unknown as Item;
  const after = next as unknown as Item;
  // A sample field that went away cannot be said in a delta (a reader keeps what it has).
  for (const name in before) if (!ITEM_FIELDS.has(name) && before[name] !== undefined && after[name] === undefined) return null;
  for (const name in after) {
    if (!ITEM_FIELDS.has(name) && after[name] !== undefined && !sameValue(before[name], after[name])) body[name] = after[name];
  }
  const devices = diffDevices(prev.devices as unknown as Item[], next.devices as unknown as Item[]);
  const processes = diffRows(prev.processes as unknown as Item[], next.processes as unknown as Item[]);
  if (devices === null || processes === null) return null;
  if (Object.keys(devices).length > 0) body.devices = devices;
  if (Object.keys(processes).length > 0) body.processes = processes;
  return { [DELTA_KEY]: body };
}

/** Makes the encoder one recording uses: host facts by reference (host-table.ts), samples as keyframes and deltas. */
export function createRecordingEncoder(policy: KeyframePolicy = DEFAULT_KEYFRAMES): RecordingEncoder {
  const hosts = createHostFactsEncoder(3);
  let prev: EncodedSample | null = null;
  let keyTimeMs = 0;
  let sinceKey = 0;
  return (sample) => {
    // Kept as it is to compare the next sample with: a sample is never changed once handed out (GpuSource),
    // so a device the source handed out again is the same object and needs no comparing. (A deep copy here
    // cost a recorder of 8 GPUs about 0.2 ms a sample and hid every unchanged device from that shortcut.)
    const { definitions, sample: next } = hosts(sample);
    sinceKey++;
    const due = prev === null || sinceKey >= policy.everySamples || next.timeMs - keyTimeMs >= policy.everyMs;
    const delta = due ? null : diffSamples(prev!, next);
    prev = next;
    if (delta) return { definitions, line: delta, keyframe: false };
    keyTimeMs = next.timeMs;
    sinceKey = 0;
    return { definitions, line: next, keyframe: true };
  };
}
