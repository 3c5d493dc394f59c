/**
 * The snapshot model: what `torch.cuda.memory._snapshot()` holds, in every schema generation, read from the
 * plain values the unpickler built. Segments and blocks become small typed records; device traces become
 * columns of typed arrays (a 1 GB trace holds tens of millions of entries, and columns keep them to about
 * 40 bytes each). Fields a version did not write are null; keys this reader does not know are listed, not
 * fatal. Nothing here walks untrusted data recursively, and the work done is bounded by the file size so a
 * file that shares one list a million times (a memo bomb) ends in an error instead of a hang.
 */
import { GpumemError } from '../errors.js';
import { nameRecord } from '../records.js';
import { OTHER_ACTION, TRACE_ACTIONS, type MemorySnapshot, type SnapshotBlock, type SnapshotSegment, type TraceColumns } from './model-types.js';
import { isDict, type PickleDict, type PickleValue } from './unpickle-types.js';

export * from './model-types.js';

const KNOWN_KEYS = new Set(['segments', 'device_traces', 'allocator_settings', 'external_annotations']);
const NO_FRAMES: readonly unknown[] = Object.freeze([]);
const ACTION_CODES = new Map<string, number>(TRACE_ACTIONS.map((a, i) => [a, i]));

/** Reads a number field: ints, floats and wide ints (BigInt, converted) are numbers; anything else is null. */
export function num(value: PickleValue | undefined): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return null;
}

/**
 * Reads a size or address field: a whole number of bytes from 0 to 2^53 − 1, or null when absent. Anything
 * else (1.5, inf, −1, 1e300) is a damaged or crafted file, reported with the field's place.
 */
export function byteField(value: PickleValue | undefined, where: () => string): number | null {
  const n = num(value ?? null);
  if (n === null) return null;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new GpumemError('INPUT_MALFORMED', `${where()} is ${String(value)}, not a whole number of bytes`, {
      hint: 'sizes and addresses in a snapshot are non-negative integers; this file is damaged or was not written by PyTorch',
    });
  }
  return n;
}

/**
 * Builds the model from an unpickled (or JSON-parsed) snapshot. `fileBytes` sizes the work budget: every
 * segment, block and trace entry visited costs one unit, and more units than 2 × fileBytes + 1 million
 * means the file references the same data over and over, which no real snapshot does. `columnTraces`,
 * from the columnar reader, replaces whatever `device_traces` holds in `root`.
 */
export function readSnapshot(root: PickleValue, fileBytes: number, columnTraces: TraceColumns[] | null = null): MemorySnapshot {
  let budget = 2 * fileBytes + 1_000_000;
  const spend = (units: number): void => {
    budget -= units;
    if (budget < 0) {
      throw new GpumemError('INPUT_UNSAFE', 'the snapshot references the same data far more often than its size allows (a memo bomb?)', {
        hint: 'real snapshots never repeat segments or blocks; this file was crafted or is corrupt',
      });
    }
  };
  const segmentList = Array.isArray(root) && root.every(isDict);
  const top: PickleDict | null = segmentList ? { segments: root } : isDict(root) ? root : null;
  const rawSegments = top?.segments;
  if (!top || !Array.isArray(rawSegments)) {
    throw new GpumemError('INPUT_MALFORMED', 'this pickle is not a PyTorch memory snapshot: it has no "segments" list', {
      hint: 'write one with torch.cuda.memory._dump_snapshot("snapshot.pickle")',
    });
  }
  spend(rawSegments.length);
  let legacy = false;
  const segments: SnapshotSegment[] = [];
  for (let si = 0; si < rawSegments.length; si++) {
    const raw = rawSegments[si];
    if (!isDict(raw)) continue;
    const rawBlocks = Array.isArray(raw.blocks) ? raw.blocks : [];
    spend(rawBlocks.length);
    const address = byteField(raw.address, () => `segment ${si}: address`) ?? 0;
    let cursor = address;
    const blocks: SnapshotBlock[] = [];
    for (let bi = 0; bi < rawBlocks.length; bi++) {
      const b = rawBlocks[bi];
      if (!isDict(b)) continue;
      const sizeBytes = byteField(b.size, () => `segment ${si}, block ${bi}: size`) ?? 0;
      const history = Array.isArray(b.history) ? b.history : null;
      if (history) legacy = true;
      const last = history && history.length > 0 ? history[history.length - 1] : undefined;
      blocks.push({
        address: byteField(b.address, () => `segment ${si}, block ${bi}: address`) ?? cursor,
        sizeBytes,
        requestedBytes: byteField(b.requested_size, () => `segment ${si}, block ${bi}: requested_size`) ?? (isDict(last) ? byteField(last.real_size, () => `segment ${si}, block ${bi}: real_size`) : null),
        state: typeof b.state === 'string' ? b.state : 'unknown',
        frames: Array.isArray(b.frames) ? b.frames : isDict(last) && Array.isArray(last.frames) ? last.frames : NO_FRAMES,
      });
      cursor += sizeBytes;
    }
    const pool = raw.segment_pool_id;
    segments.push({
      device: num(raw.device) ?? 0,
      address,
      totalBytes: byteField(raw.total_size, () => `segment ${si}: total_size`) ?? blocks.reduce((s, b) => s + b.sizeBytes, 0),
      stream: num(raw.stream) ?? 0,
      segmentType: typeof raw.segment_type === 'string' ? raw.segment_type : 'unknown',
      poolId: Array.isArray(pool) ? pool.map((x) => String(num(x) ?? x)).join(',') : null,
      isExpandable: typeof raw.is_expandable === 'boolean' ? raw.is_expandable : null,
      blocks,
    });
  }
  const traces: TraceColumns[] = columnTraces ?? [];
  const rawTraces = columnTraces === null && Array.isArray(top.device_traces) ? top.device_traces : [];
  for (let d = 0; d < rawTraces.length; d++) {
    const list = rawTraces[d];
    const entries = Array.isArray(list) ? list : [];
    spend(entries.length);
    traces.push(readTrace(entries));
    // Let the raw entries go as soon as they are in columns: the dicts are the bulk of a large file.
    rawTraces[d] = null;
  }
  const settings = top.allocator_settings;
  const annotations = top.external_annotations;
  return {
    generation: Array.isArray(root) ? 'segments-list' : legacy ? 'history' : 'frames',
    segments,
    traces,
    allocatorSettings: isDict(settings) ? settings : null,
    externalAnnotationCount: Array.isArray(annotations) ? annotations.length : 0,
    unknownKeys: Object.keys(top).filter((k) => !KNOWN_KEYS.has(k)),
  };
}

function readTrace(entries: readonly PickleValue[]): TraceColumns {
  const n = entries.length;
  const stacks: Array<readonly unknown[]> = [NO_FRAMES];
  const stackIds = new Map<readonly unknown[], number>();
  const t: TraceColumns = {
    length: 0,
    action: new Uint8Array(n),
    addr: new Float64Array(n),
    sizeBytes: new Float64Array(n),
    stream: new Float64Array(n),
    timeUs: new Float64Array(n),
    stack: new Int32Array(n),
    stacks,
    otherActions: nameRecord<number>(),
  };
  let i = 0;
  for (const e of entries) {
    if (!isDict(e)) continue;
    const name = typeof e.action === 'string' ? e.action : 'unknown';
    let code = ACTION_CODES.get(name);
    if (code === undefined) {
      code = OTHER_ACTION;
      t.otherActions[name] = (t.otherActions[name] ?? 0) + 1;
    }
    t.action[i] = code;
    t.addr[i] = num(name === 'oom' ? e.device_free : e.addr) ?? 0;
    t.sizeBytes[i] = byteField(e.size, () => `trace entry ${i}: size`) ?? 0;
    t.stream[i] = num(e.stream) ?? 0;
    t.timeUs[i] = num(e.time_us) ?? NaN;
    // Entries share frame lists by identity (PyTorch reuses one list per recorded stack); keep each once.
    if (Array.isArray(e.frames) && e.frames.length > 0) {
      let id = stackIds.get(e.frames);
      if (id === undefined) {
        id = stacks.push(e.frames) - 1;
        stackIds.set(e.frames, id);
      }
      t.stack[i] = id;
    }
    i++;
  }
  if (i === n) {
    t.length = n;
    return t;
  }
  return { ...t, length: i, action: t.action.subarray(0, i), addr: t.addr.subarray(0, i), sizeBytes: t.sizeBytes.subarray(0, i), stream: t.stream.subarray(0, i), timeUs: t.timeUs.subarray(0, i), stack: t.stack.subarray(0, i) };
}
