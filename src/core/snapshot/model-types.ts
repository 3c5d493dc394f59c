/**
 * The types of the snapshot model (see model.ts for how it is read). Kept apart so that the columnar reader
 * can build traces without importing the model reader.
 */
import type { PickleValue } from './unpickle-types.js';

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

/** A device's trace as columns. For `oom` entries `addr` holds `device_free`, as the entry itself does. */
export interface TraceColumns {
  length: number;
  action: Uint8Array;
  addr: Float64Array;
  sizeBytes: Float64Array;
  stream: Float64Array;
  /** Microseconds since the epoch; NaN where the entry has none (files before 2.2). */
  timeUs: Float64Array;
  /** Per entry, the index of its frame list in `stacks`. */
  stack: Int32Array;
  /** Frame lists (raw, innermost first), each once however many entries share it; may be shared between devices. */
  stacks: ReadonlyArray<readonly unknown[]>;
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
