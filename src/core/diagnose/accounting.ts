/**
 * Accounts for every byte a GPU reports as used: the processes visible here, the processes this PID
 * namespace cannot see (other containers), and the residual no listed process explains. The three parts
 * always sum to the device's `used` exactly; what cannot be split is named, never estimated.
 */
import type { Device } from '../types.js';
import type { DeviceAccounting, ProcessView } from './types.js';

/** Said for every GPU until the Python companion reports PyTorch's own numbers for its processes. */
export const PYTORCH_SPLIT_UNKNOWN =
  "PyTorch's split of each process (allocated / cached by the allocator / context, cuBLAS workspaces, NCCL) is not known from outside the process";

/** Accounts one device from the process views of the same sample. */
export function accountDevice(device: Device, views: readonly ProcessView[]): DeviceAccounting {
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
  if (rows.length > 0) unknowns.push(PYTORCH_SPLIT_UNKNOWN);
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
  };
}
