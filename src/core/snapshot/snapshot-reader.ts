/**
 * Reads a pickled snapshot chunk by chunk straight into the model: the data-only unpickler in columnar
 * mode, so device traces land in typed-array columns as they are read and the memory needed stays below
 * the file's own size for trace-heavy files (a 1 GB snapshot needs well under 2 GB). Everything else in
 * the file (segments, settings, unknown keys) is read as plain values and modelled as `readSnapshot` does.
 */
import { readSnapshot, type MemorySnapshot } from './model.js';
import { Columnar } from './unpickle-columnar.js';
import type { UnpickleLimits } from './unpickle-types.js';
import { Unpickler } from './unpickle.js';

export class SnapshotReader {
  private readonly unpickler: Unpickler;

  /** `totalBytes` is the file size: it bounds declared lengths and sizes the memory budget. */
  constructor(private readonly totalBytes: number, limits: UnpickleLimits = {}) {
    this.unpickler = new Unpickler({ ...limits, totalBytes, columnar: true });
  }

  /** True once the pickle's STOP was read. */
  get done(): boolean {
    return this.unpickler.done;
  }

  /** Feeds the next chunk (it may be reused afterwards). */
  push(chunk: Uint8Array): void {
    this.unpickler.push(chunk);
  }

  /** Ends the input and builds the model; fails like `Unpickler.finish` and `readSnapshot`. */
  finish(): MemorySnapshot {
    const root = this.unpickler.finish();
    const columnar = this.unpickler.columnar as Columnar;
    if (!Columnar.isRootWithTraces(root)) return readSnapshot(root, this.totalBytes);
    const traces = root.device_traces.lists.map((list) => columnar.builder.columns(list));
    return readSnapshot({ ...root, device_traces: [] }, this.totalBytes, traces);
  }
}

/** Models a whole in-memory pickle with the columnar reader (tests, small files). */
export function readSnapshotPickle(bytes: Uint8Array, limits: UnpickleLimits = {}): MemorySnapshot {
  const reader = new SnapshotReader(bytes.length, limits);
  reader.push(bytes);
  return reader.finish();
}
