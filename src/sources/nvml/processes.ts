/**
 * Processes on one GPU: the compute and graphics lists through the call chosen at load, with the
 * INSUFFICIENT_SIZE count protocol, stride sanity checks, and rows merged per (pid, GPU, MIG instance)
 * by max — a pid in both lists is one 'compute+graphics' row, never a sum. Buffers persist across
 * samples, so a steady state costs one call per list.
 */
import type { GpuProcess, GpuProcessKind, Unavailable } from '../../core/types.js';
import { callReason, DeviceUnreadable } from './calls.js';
import { PROCESS_MAX_STRIDE, PROCESS_UTIL_SAMPLE, type ProcessStride } from './layouts.js';
import type { DeviceHandle, NvmlCall, ProcessCall } from './library.js';
import { decodeProcessEntries, fallbackStrides, type ProcessEntry } from './process-api.js';
import { NVML_ERROR_GPU_IS_LOST, NVML_ERROR_INSUFFICIENT_SIZE, NVML_ERROR_NOT_FOUND, NVML_SUCCESS } from './return-codes.js';

/** How often a list may grow between the count and fill calls before we give up for this sample. */
const MAX_ATTEMPTS = 5;

/** Growable buffer for one kind of list, kept across samples. */
export class ListBuffer {
  capacity = 0;
  buf: Buffer = Buffer.alloc(0);
  readonly count = new Uint32Array(1);

  /** Grows to hold `needed` entries with headroom (processes appear between calls), as pynvml does. */
  grow(needed: number, entrySize: number): void {
    this.capacity = needed * 2 + 5;
    this.buf = Buffer.alloc(this.capacity * entrySize);
  }
}

/** Result of one list call: the entries, or why the list could not be read. */
export type ListResult = { entries: ProcessEntry[] } | { reason: string };

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
    const first = decodeProcessEntries(state.buf, n, api.choice.stride, totalBytes);
    if (first) return { entries: first };
    for (const stride of fallbackStrides(api.choice.stride)) {
      const entries = decodeProcessEntries(state.buf, n, stride, totalBytes);
      if (entries) {
        api.choice = { ...api.choice, stride, reason: `${api.choice.reason}; entries decoded as ${stride} bytes after a failed sanity check` };
        return { entries };
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
  rows: Map<string, GpuProcess>,
  entries: ProcessEntry[],
  kind: 'compute' | 'graphics',
  gpu: { uuid: string | null; index: number },
): void {
  for (const e of entries) {
    const key = `${e.pid}:${e.gpuInstanceId ?? '-'}:${e.computeInstanceId ?? '-'}`;
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

/** Buffer for per-process utilization samples, and the newest sample timestamp seen, kept across reads of one device. */
export class UtilBuffer {
  capacity = 0;
  buf: Buffer = Buffer.alloc(0);
  readonly count = new Uint32Array(1);
  /** Timestamp (µs since the epoch) of the newest sample read so far; passed as lastSeenTimeStamp. */
  lastSeenUs = 0;
}

/** Said for a pid when the driver had no sample newer than the previous read (NVML_ERROR_NOT_FOUND). */
export const NO_NEW_UTIL_SAMPLE = 'no new utilization sample since the previous read';

/**
 * Per-pid SM utilization from nvmlDeviceGetProcessUtilization with its timestamp protocol: each read passes
 * the newest timestamp seen on this device, so only samples taken since come back and none is counted
 * twice; a pid's value is the mean of its new samples. Returns a map, or a reason string when nothing can
 * be read (NOT_FOUND = no new samples since the previous read).
 */
export function readSmUtilization(fn: NvmlCall | null, state: UtilBuffer, handle: DeviceHandle): Map<number, number> | string {
  if (!fn) return 'nvmlDeviceGetProcessUtilization not exported by this driver';
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    state.count[0] = state.capacity;
    const rc = fn(handle, state.capacity > 0 ? state.buf : null, state.count, state.lastSeenUs);
    if (rc === NVML_ERROR_INSUFFICIENT_SIZE || (rc === NVML_SUCCESS && state.capacity === 0 && (state.count[0] as number) > 0)) {
      state.capacity = (state.count[0] as number) * 2 + 5;
      state.buf = Buffer.alloc(state.capacity * PROCESS_UTIL_SAMPLE.size);
      continue;
    }
    if (rc === NVML_ERROR_NOT_FOUND) return `${NO_NEW_UTIL_SAMPLE} (${callReason('nvmlDeviceGetProcessUtilization', rc)})`;
    if (rc === NVML_ERROR_GPU_IS_LOST) throw new DeviceUnreadable(rc, 'nvmlDeviceGetProcessUtilization');
    if (rc !== NVML_SUCCESS) return callReason('nvmlDeviceGetProcessUtilization', rc);
    return meanOfNewSamples(state, Math.min(state.count[0] as number, state.capacity));
  }
  return 'nvmlDeviceGetProcessUtilization: sample count kept growing';
}

/** Mean SM % per pid over the `n` samples in the buffer newer than the last read, and the new lastSeen. */
function meanOfNewSamples(state: UtilBuffer, n: number): Map<number, number> | string {
  const sums = new Map<number, { sum: number; count: number }>();
  let newest = state.lastSeenUs;
  for (let i = 0; i < n; i++) {
    const at = i * PROCESS_UTIL_SAMPLE.size;
    const ts = state.buf.readUInt32LE(at + PROCESS_UTIL_SAMPLE.timeStamp + 4) * 4294967296 + state.buf.readUInt32LE(at + PROCESS_UTIL_SAMPLE.timeStamp);
    // A driver that hands back an old sample anyway must not have it counted a second time.
    if (ts <= state.lastSeenUs) continue;
    newest = Math.max(newest, ts);
    const pid = state.buf.readUInt32LE(at + PROCESS_UTIL_SAMPLE.pid);
    const pct = state.buf.readUInt32LE(at + PROCESS_UTIL_SAMPLE.smUtil);
    // Exiting (zombie) processes have been seen to report values like 37100: not a percentage, not evidence.
    if (pct > 100) continue;
    const entry = sums.get(pid) ?? { sum: 0, count: 0 };
    entry.sum += pct;
    entry.count++;
    sums.set(pid, entry);
  }
  state.lastSeenUs = newest;
  if (sums.size === 0) return NO_NEW_UTIL_SAMPLE;
  return new Map([...sums].map(([pid, e]) => [pid, e.sum / e.count]));
}

export type { ProcessStride };
