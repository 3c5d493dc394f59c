/**
 * The snapshot model: what `torch.cuda.memory._snapshot()` holds, in every schema generation, read from the
 * plain values the unpickler built. Segments and blocks become small typed records; device traces become
 * columns of typed arrays (a 1 GB trace holds tens of millions of entries, and columns keep them to about
 * 40 bytes each). Fields a version did not write are null; keys this reader does not know are listed, not
 * fatal. Nothing here walks untrusted data recursively, and the work done is bounded by the file size so a
 * file that shares one list a million times (a memo bomb) ends in an error instead of a hang.
 */
import { GpumemError } from '../errors.js';
import { isDict, type PickleDict, type PickleValue } from './unpickle.js';

/** One stack frame as PyTorch records it, innermost first. Extra keys (fx_*) may be present. */
export interface SnapshotFrame {
  filename: string;
  line: number;
  name: string;
}

export interface SnapshotBlock {
  address: number;
  sizeBytes: number;
  /** What the caller asked for before rounding; null in 2.0-era files without `history`. */
  requestedBytes: number | null;
  state: string;
  /** Raw frame list from the file; read it with userFrame()/frameText(), which check every element. */
  frames: readonly unknown[];
}

export interface SnapshotSegment {
  device: number;
  address: number;
  totalBytes: number;
  stream: number;
  segmentType: string;
  /** `segment_pool_id` as "a,b"; null before it existed. "0,0" is the default pool. */
  poolId: string | null;
  isExpandable: boolean | null;
  blocks: SnapshotBlock[];
}

/** Trace actions in the order of their codes in TraceColumns.action; OTHER_ACTION marks anything newer. */
export const TRACE_ACTIONS = [
  'alloc', 'free_requested', 'free_completed', 'segment_alloc', 'segment_free', 'segment_map', 'segment_unmap',
  'snapshot', 'oom', 'user_defined', 'annotate',
] as const;
export type TraceAction = (typeof TRACE_ACTIONS)[number];
export const OTHER_ACTION = 255;
const ACTION_CODES = new Map<string, number>(TRACE_ACTIONS.map((a, i) => [a, i]));

/** A device's trace as columns. For `oom` entries `addr` holds `device_free`, as the entry itself does. */
export interface TraceColumns {
  length: number;
  action: Uint8Array;
  addr: Float64Array;
  sizeBytes: Float64Array;
  stream: Float64Array;
  /** Microseconds since the epoch; NaN where the entry has none (files before 2.2). */
  timeUs: Float64Array;
  frames: Array<readonly unknown[]>;
  /** Entries whose action this reader does not know, by name. */
  otherActions: Record<string, number>;
}

export interface MemorySnapshot {
  /** `history` = 2.0-era blocks, `frames` = 2.1 and later, `segments-list` = the bare list of memory_snapshot(). */
  generation: 'history' | 'frames' | 'segments-list';
  segments: SnapshotSegment[];
  /** One per device index; empty when the file has no traces. */
  traces: TraceColumns[];
  allocatorSettings: Record<string, PickleValue> | null;
  externalAnnotationCount: number;
  unknownKeys: string[];
}

const KNOWN_KEYS = new Set(['segments', 'device_traces', 'allocator_settings', 'external_annotations']);
const NO_FRAMES: readonly unknown[] = Object.freeze([]);

/** Reads a number field: ints, floats and wide ints (BigInt, converted) are numbers; anything else is null. */
export function num(value: PickleValue | undefined): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return null;
}

/**
 * Builds the model from an unpickled (or JSON-parsed) snapshot. `fileBytes` sizes the work budget: every
 * segment, block and trace entry visited costs one unit, and more units than 2 × fileBytes + 1 million
 * means the file references the same data over and over, which no real snapshot does.
 */
export function readSnapshot(root: PickleValue, fileBytes: number): MemorySnapshot {
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
  for (const raw of rawSegments) {
    if (!isDict(raw)) continue;
    const rawBlocks = Array.isArray(raw.blocks) ? raw.blocks : [];
    spend(rawBlocks.length);
    const address = num(raw.address) ?? 0;
    let cursor = address;
    const blocks: SnapshotBlock[] = [];
    for (const b of rawBlocks) {
      if (!isDict(b)) continue;
      const sizeBytes = num(b.size) ?? 0;
      const history = Array.isArray(b.history) ? b.history : null;
      if (history) legacy = true;
      const last = history && history.length > 0 ? history[history.length - 1] : undefined;
      blocks.push({
        address: num(b.address) ?? cursor,
        sizeBytes,
        requestedBytes: num(b.requested_size) ?? (isDict(last) ? num(last.real_size) : null),
        state: typeof b.state === 'string' ? b.state : 'unknown',
        frames: Array.isArray(b.frames) ? b.frames : isDict(last) && Array.isArray(last.frames) ? last.frames : NO_FRAMES,
      });
      cursor += sizeBytes;
    }
    const pool = raw.segment_pool_id;
    segments.push({
      device: num(raw.device) ?? 0,
      address,
      totalBytes: num(raw.total_size) ?? blocks.reduce((s, b) => s + b.sizeBytes, 0),
      stream: num(raw.stream) ?? 0,
      segmentType: typeof raw.segment_type === 'string' ? raw.segment_type : 'unknown',
      poolId: Array.isArray(pool) ? pool.map((x) => String(num(x) ?? x)).join(',') : null,
      isExpandable: typeof raw.is_expandable === 'boolean' ? raw.is_expandable : null,
      blocks,
    });
  }
  const traces: TraceColumns[] = [];
  const rawTraces = Array.isArray(top.device_traces) ? top.device_traces : [];
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
  const t: TraceColumns = {
    length: 0,
    action: new Uint8Array(n),
    addr: new Float64Array(n),
    sizeBytes: new Float64Array(n),
    stream: new Float64Array(n),
    timeUs: new Float64Array(n),
    frames: new Array<readonly unknown[]>(n),
    otherActions: {},
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
    t.sizeBytes[i] = num(e.size) ?? 0;
    t.stream[i] = num(e.stream) ?? 0;
    t.timeUs[i] = num(e.time_us) ?? NaN;
    t.frames[i] = Array.isArray(e.frames) ? e.frames : NO_FRAMES;
    i++;
  }
  t.length = i;
  t.frames.length = i;
  return t;
}
