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
  return memorySegmentsByGpu([acc], views, viewerUid).get(acc.gpuIndex) as MemorySegments;
}

/**
 * memorySegments for every device at once, by GPU index: one pass over the views, where one device at a time
 * would walk every view once per GPU (8 × 512 rows each time the panel is drawn).
 */
export function memorySegmentsByGpu(accounting: readonly DeviceAccounting[], views: readonly ProcessView[], viewerUid: number | null): Map<number, MemorySegments> {
  const byGpu = new Map<number, { acc: DeviceAccounting; split: Map<number, number> | null; mine: number; others: number }>();
  for (const acc of accounting) {
    let split: Map<number, number> | null = null;
    for (const s of acc.pytorch) (split ??= new Map()).set(s.pid, (s.allocatedBytes ?? 0) + (s.cachedBytes ?? 0));
    byGpu.set(acc.gpuIndex, { acc, split, mine: 0, others: 0 });
  }
  for (const v of views) {
    if (v.gpuIndex === null || !v.visible || v.usedBytes === null) continue;
    const at = byGpu.get(v.gpuIndex);
    if (at === undefined) continue;
    const rest = Math.max(0, v.usedBytes - (at.split?.get(v.pid) ?? 0));
    if (viewerUid !== null && v.uid !== null && v.uid !== viewerUid) at.others += rest;
    else at.mine += rest;
  }
  const out = new Map<number, MemorySegments>();
  for (const [gpu, { acc, mine, others }] of byGpu) {
    let allocated = 0;
    let cached = 0;
    for (const s of acc.pytorch) {
      allocated += s.allocatedBytes ?? 0;
      cached += s.cachedBytes ?? 0;
    }
    out.set(gpu, {
      pytorchAllocatedBytes: allocated,
      pytorchCachedBytes: cached,
      mineBytes: mine,
      othersBytes: others,
      notVisibleBytes: acc.notVisibleBytes,
      unattributedBytes: Math.max(0, acc.residualBytes ?? 0),
      reservedBytes: acc.reservedBytes ?? 0,
      totalBytes: acc.totalBytes,
    });
  }
  return out;
}
