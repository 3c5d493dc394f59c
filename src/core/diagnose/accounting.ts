/**
 * Accounts for every byte a GPU reports as used: the processes visible here, the processes this PID
 * namespace cannot see (other containers), and the residual no listed process explains. The three parts
 * always sum to the device's `used` exactly; what cannot be split is named, never estimated.
 */
import { splitProcessMemory, type MemorySplit } from '../companion/split.js';
import type { LiveCompanionProcess } from '../companion/live.js';
import type { Device } from '../types.js';
import type { DeviceAccounting, ProcessView } from './types.js';

/** Said for every GPU with processes that have no PyTorch companion statistics (not run under `gpumem run`). */
export const PYTORCH_SPLIT_UNKNOWN =
  "PyTorch's split of each process (allocated / cached by the allocator / context, cuBLAS workspaces, NCCL) is not known from outside the process";

/** The split of every row on `device` whose pid has companion statistics for this GPU's UUID. */
function pytorchSplits(device: Device, rows: readonly ProcessView[], companion: Readonly<Record<number, LiveCompanionProcess>>): MemorySplit[] {
  const out: MemorySplit[] = [];
  for (const v of rows) {
    const uuid = v.row.gpuUuid ?? device.uuid;
    const stats = companion[v.pid]?.devices.find((d) => d.gpuUuid === uuid)?.stats;
    if (stats && uuid) out.push(splitProcessMemory(v.pid, uuid, v.usedBytes, stats));
  }
  return out;
}

/**
 * Accounts one device from the process views of the same sample; `companion` (from a running `gpumem
 * run`) splits the processes it has PyTorch statistics for.
 */
export function accountDevice(device: Device, views: readonly ProcessView[], companion: Readonly<Record<number, LiveCompanionProcess>> = {}): DeviceAccounting {
  const rows = views.filter((v) => v.gpuIndex === device.index);
  let visibleBytes = 0;
  let notVisibleBytes = 0;
  const unknownPids: number[] = [];
  for (const v of rows) {
    if (v.usedBytes === null) unknownPids.push(v.pid);
    else if (v.visible) visibleBytes += v.usedBytes;
    else notVisibleBytes += v.usedBytes;
  }
  const used = device.memory.usedBytes;
  const unknowns: string[] = [];
  if (used === null) unknowns.push(`used memory of this GPU: ${device.unavailable['memory.usedBytes'] ?? device.unavailable.memory ?? 'not reported'}`);
  if (device.memory.reservedBytes === null) unknowns.push('driver-reserved memory: not reported (pre-R510 driver or nvidia-smi without the field)');
  if (unknownPids.length > 0) {
    unknowns.push(
      `memory of pid ${unknownPids.join(', ')}: the driver reports it as not available, so the residual below includes it`,
    );
  }
  const pytorch = pytorchSplits(device, rows, companion);
  const unsplit = [...new Set(rows.filter((v) => !pytorch.some((p) => p.pid === v.pid)).map((v) => v.pid))];
  if (unsplit.length > 0 && pytorch.length === 0) unknowns.push(PYTORCH_SPLIT_UNKNOWN);
  else if (unsplit.length > 0) unknowns.push(`${PYTORCH_SPLIT_UNKNOWN}: pid ${unsplit.join(', ')} (not supervised by a gpumem run with the companion)`);
  return {
    gpuIndex: device.index,
    gpuUuid: device.uuid,
    name: device.name,
    totalBytes: device.memory.totalBytes,
    reservedBytes: device.memory.reservedBytes,
    usedBytes: used,
    freeBytes: device.memory.freeBytes,
    visibleBytes,
    notVisibleBytes,
    residualBytes: used === null ? null : used - visibleBytes - notVisibleBytes,
    unknownPids,
    pids: [...new Set(rows.map((v) => v.pid))],
    unknowns,
    pytorch,
  };
}
