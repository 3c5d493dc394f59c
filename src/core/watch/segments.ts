/**
 * The parts of one GPU's memory the live view draws as a split bar: PyTorch allocated and cached (only for
 * processes with companion statistics), the viewer's other processes, other users, processes not visible
 * in this PID namespace, the residual no process explains, and driver-reserved memory. Built from the
 * diagnosis accounting so the bar and `gpumem diagnose` can never disagree.
 */
import type { DeviceAccounting, ProcessView } from '../diagnose/index.js';

export interface MemorySegments {
  pytorchAllocatedBytes: number;
  pytorchCachedBytes: number;
  /** Processes of the viewer (without the PyTorch parts above). */
  mineBytes: number;
  /** Processes of other users visible here. */
  othersBytes: number;
  /** Processes this PID namespace cannot see (other containers). */
  notVisibleBytes: number;
  /** used − every process: contexts of gone pids, the driver's own, pids whose memory NVML did not report. */
  unattributedBytes: number;
  reservedBytes: number;
  totalBytes: number | null;
}

/**
 * Splits one device's accounted memory into bar segments. `viewerUid` null (a recording) puts every visible
 * process under "others" only when its uid is known to differ; with no viewer all visible memory is "mine".
 */
export function memorySegments(acc: DeviceAccounting, views: readonly ProcessView[], viewerUid: number | null): MemorySegments {
  let allocated = 0;
  let cached = 0;
  const splitBytes = new Map<number, number>();
  for (const s of acc.pytorch) {
    allocated += s.allocatedBytes ?? 0;
    cached += s.cachedBytes ?? 0;
    splitBytes.set(s.pid, (s.allocatedBytes ?? 0) + (s.cachedBytes ?? 0));
  }
  let mine = 0;
  let others = 0;
  for (const v of views) {
    if (v.gpuIndex !== acc.gpuIndex || !v.visible || v.usedBytes === null) continue;
    const rest = Math.max(0, v.usedBytes - (splitBytes.get(v.pid) ?? 0));
    if (viewerUid !== null && v.uid !== null && v.uid !== viewerUid) others += rest;
    else mine += rest;
  }
  return {
    pytorchAllocatedBytes: allocated,
    pytorchCachedBytes: cached,
    mineBytes: mine,
    othersBytes: others,
    notVisibleBytes: acc.notVisibleBytes,
    unattributedBytes: Math.max(0, acc.residualBytes ?? 0),
    reservedBytes: acc.reservedBytes ?? 0,
    totalBytes: acc.totalBytes,
  };
}
