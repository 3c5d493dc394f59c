/**
 * Processes on one GPU: the compute and graphics lists through the call chosen at load, with the
 * INSUFFICIENT_SIZE count protocol, stride sanity checks, and rows merged per (pid, GPU, MIG instance)
 * by max — a pid in both lists is one 'compute+graphics' row, never a sum. Buffers persist across
 * samples, so a steady state costs one call per list.
 */
import type { GpuProcess, GpuProcessKind, Unavailable } from '../../core/types.js';
import { callReason, DeviceUnreadable } from './calls.js';
import { PROCESS_MAX_STRIDE } from './layouts.js';
import type { DeviceHandle, ProcessCall } from './library.js';
import { decodeProcessEntries, fallbackStrides, type ProcessEntry } from './process-api.js';
import { NVML_ERROR_GPU_IS_LOST, NVML_ERROR_INSUFFICIENT_SIZE, NVML_SUCCESS } from './return-codes.js';

/** How often a list may grow between the count and fill calls before we give up for this sample. */
const MAX_ATTEMPTS = 5;

/**
 * Growable buffer for one kind of list, kept across samples, with a copy of the bytes decoded last and their
 * entries: a list the driver answers byte for byte as before is not decoded again.
 */
export class ListBuffer {
  capacity = 0;
  buf: Buffer = Buffer.alloc(0);
  readonly count = new Uint32Array(1);
  decodedBytes: Buffer = Buffer.alloc(0);
  decodedLength = -1;
  decoded: ProcessEntry[] = [];

  /** Grows to hold `needed` entries with headroom (processes appear between calls), as pynvml does. */
  grow(needed: number, entrySize: number): void {
    this.capacity = needed * 2 + 5;
    this.buf = Buffer.alloc(this.capacity * entrySize);
  }
}

/**
 * Result of one list call: the entries (`unchanged` when the driver's answer equals the previous call's, the
 * same array then), or why the list could not be read.
 */
export type ListResult = { entries: ProcessEntry[]; unchanged: boolean } | { reason: string };

/** The entries of `state.buf` (n entries at `stride`) as decoded last time, when its bytes have not changed. */
function sameAsDecoded(state: ListBuffer, bytes: number): boolean {
  return bytes === state.decodedLength && state.buf.compare(state.decodedBytes, 0, bytes, 0, bytes) === 0;
}

function remember(state: ListBuffer, bytes: number, entries: ProcessEntry[]): ListResult {
  if (state.decodedBytes.length < bytes) state.decodedBytes = Buffer.alloc(state.buf.length);
  state.buf.copy(state.decodedBytes, 0, 0, bytes);
  state.decodedLength = bytes;
  state.decoded = entries;
  return { entries, unchanged: false };
}

/**
 * Runs the count protocol for one process list and decodes it. The first call of a session passes
 * count 0 and no buffer, as NVML documents; later calls pass the capacity already held. If the decoded
 * rows fail the sanity checks, other strides are tried and the one that passes is kept for the session.
 */
export function readProcessList(
  api: ProcessCall,
  state: ListBuffer,
  handle: DeviceHandle,
  totalBytes: number | null,
): ListResult {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    state.count[0] = state.capacity;
    const rc = api.call(handle, state.count, state.capacity > 0 ? state.buf : null);
    if (rc === NVML_ERROR_INSUFFICIENT_SIZE) {
      state.grow(state.count[0] as number, PROCESS_MAX_STRIDE);
      continue;
    }
    if (rc === NVML_ERROR_GPU_IS_LOST) throw new DeviceUnreadable(rc, api.symbol);
    if (rc !== NVML_SUCCESS) return { reason: callReason(api.symbol, rc) };
    const n = Math.min(state.count[0] as number, state.capacity);
    // The stride chosen for the session is the one the remembered bytes were decoded with.
    if (sameAsDecoded(state, n * api.choice.stride)) return { entries: state.decoded, unchanged: true };
    const first = decodeProcessEntries(state.buf, n, api.choice.stride, totalBytes);
    if (first) return remember(state, n * api.choice.stride, first);
    for (const stride of fallbackStrides(api.choice.stride)) {
      const entries = decodeProcessEntries(state.buf, n, stride, totalBytes);
      if (entries) {
        api.choice = { ...api.choice, stride, reason: `${api.choice.reason}; entries decoded as ${stride} bytes after a failed sanity check` };
        return remember(state, n * stride, entries);
      }
    }
    return { reason: `${api.symbol}: entries failed the pid/memory sanity check at every known stride` };
  }
  return { reason: `${api.symbol}: process list kept growing over ${MAX_ATTEMPTS} attempts` };
}

/** Larger of two readings, where null (not available) loses to any number. */
function maxNullable(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

/**
 * Merges entries of one list into `rows` (keyed by pid and MIG instance for this GPU): duplicates keep
 * the largest memory; a pid seen in the other list becomes 'compute+graphics'.
 */
export function mergeEntries(
  rows: Map<string | number, GpuProcess>,
  entries: ProcessEntry[],
  kind: 'compute' | 'graphics',
  gpu: { uuid: string | null; index: number },
): void {
  for (const e of entries) {
    // Outside MIG the pid alone is the key (a number: no string made per row per sample).
    const key = e.gpuInstanceId === null && e.computeInstanceId === null ? e.pid : `${e.pid}:${e.gpuInstanceId ?? '-'}:${e.computeInstanceId ?? '-'}`;
    const have = rows.get(key);
    if (have) {
      have.usedBytes = maxNullable(have.usedBytes, e.usedBytes);
      if (have.usedBytes !== null) delete have.unavailable.usedBytes;
      if (have.kind !== kind) have.kind = 'compute+graphics' as GpuProcessKind;
      continue;
    }
    const unavailable: Unavailable = { name: 'not read from NVML (host facts carry the command line)' };
    if (e.usedBytes === null) unavailable.usedBytes = 'NVML_VALUE_NOT_AVAILABLE';
    rows.set(key, {
      pid: e.pid,
      gpuUuid: gpu.uuid,
      gpuIndex: gpu.index,
      gpuInstanceId: e.gpuInstanceId,
      computeInstanceId: e.computeInstanceId,
      usedBytes: e.usedBytes,
      kind,
      name: null,
      smUtilPct: null,
      host: null,
      unavailable,
    });
  }
}
