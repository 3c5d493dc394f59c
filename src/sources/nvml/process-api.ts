/**
 * Which running-processes call to use and how wide its entries are, decided once from the symbols the
 * driver exports (the rule nvitop settled on after the R535 break, see docs/nvml.md), and the decoding of
 * the returned entries with the sanity checks that catch a wrong stride.
 */
import { NO_INSTANCE_ID, PID_MAX_LIMIT, PROCESS_INFO, readU64OrNull, type ProcessStride } from './layouts.js';

export interface ProcessApiChoice {
  /** Symbol suffix: '_v3', '_v2' or '' (the bare v1 call). */
  suffix: '_v3' | '_v2' | '';
  stride: ProcessStride;
  /** Why this choice, for docs and debugging. */
  reason: string;
}

/**
 * Picks the process-list call for `list` ('Compute' or 'Graphics') from the symbols present. `_v3` is
 * 32 bytes wide exactly on 535.43–535.86, recognisable by nvmlDeviceGetConfComputeMemSizeInfo being present
 * while nvmlDeviceGetRunningProcessDetailList (535.104+) is not; everywhere else it is 24 bytes.
 */
export function chooseProcessApi(has: (symbol: string) => boolean, list: 'Compute' | 'Graphics'): ProcessApiChoice {
  const base = `nvmlDeviceGet${list}RunningProcesses`;
  if (has(`${base}_v3`)) {
    const r535early = has('nvmlDeviceGetConfComputeMemSizeInfo') && !has('nvmlDeviceGetRunningProcessDetailList');
    return r535early
      ? { suffix: '_v3', stride: 32, reason: '_v3 on 535.43–535.86: 32-byte entries' }
      : { suffix: '_v3', stride: 24, reason: '_v3: 24-byte entries' };
  }
  if (has(`${base}_v2`)) return { suffix: '_v2', stride: 24, reason: 'no _v3 (driver < 510 or 535.98): _v2, 24-byte entries' };
  return { suffix: '', stride: 16, reason: 'no _v2 (driver < 450.66): v1, 16-byte entries' };
}

export interface ProcessEntry {
  pid: number;
  /** Null for NVML_VALUE_NOT_AVAILABLE. */
  usedBytes: number | null;
  gpuInstanceId: number | null;
  computeInstanceId: number | null;
}

/**
 * Decodes `count` entries of width `stride`, or returns null when any entry fails the sanity checks
 * (pid in 1..PID_MAX_LIMIT, memory not above the device total), which is what a wrong stride produces.
 */
export function decodeProcessEntries(
  buf: Buffer,
  count: number,
  stride: ProcessStride,
  totalBytes: number | null,
): ProcessEntry[] | null {
  if (count * stride > buf.length) return null;
  const out: ProcessEntry[] = new Array<ProcessEntry>(count);
  for (let i = 0; i < count; i++) {
    const at = i * stride;
    const pid = buf.readUInt32LE(at + PROCESS_INFO.pid);
    const usedBytes = readU64OrNull(buf, at + PROCESS_INFO.usedGpuMemory);
    if (pid === 0 || pid > PID_MAX_LIMIT) return null;
    if (usedBytes === null && !isNotAvailable(buf, at + PROCESS_INFO.usedGpuMemory)) return null;
    if (usedBytes !== null && totalBytes !== null && usedBytes > totalBytes) return null;
    let gpuInstanceId: number | null = null;
    let computeInstanceId: number | null = null;
    if (stride >= 24) {
      const gi = buf.readUInt32LE(at + PROCESS_INFO.gpuInstanceId);
      const ci = buf.readUInt32LE(at + PROCESS_INFO.computeInstanceId);
      gpuInstanceId = gi === NO_INSTANCE_ID ? null : gi;
      computeInstanceId = ci === NO_INSTANCE_ID ? null : ci;
    }
    out[i] = { pid, usedBytes, gpuInstanceId, computeInstanceId };
  }
  return out;
}

/** True when the u64 at `offset` is NVML_VALUE_NOT_AVAILABLE (all ones), as opposed to an absurd value. */
function isNotAvailable(buf: Buffer, offset: number): boolean {
  return buf.readUInt32LE(offset) === 0xffffffff && buf.readUInt32LE(offset + 4) === 0xffffffff;
}

/** The strides to try after `first` fails its sanity check, most likely first. */
export function fallbackStrides(first: ProcessStride): ProcessStride[] {
  return ([24, 32, 16] as ProcessStride[]).filter((s) => s !== first);
}
