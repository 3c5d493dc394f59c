/**
 * MIG instances of a MIG-enabled GPU, each with its own memory. Enumerated by index up to
 * nvmlDeviceGetMaxMigDeviceCount; NOT_FOUND at an index means no MIG device there and is skipped.
 */
import type { MigInstance, Unavailable } from '../../core/types.js';
import { callReason, DeviceUnreadable, readUint } from './calls.js';
import { readString } from './device.js';
import type { DeviceHandle, NvmlFunctions } from './library.js';
import { readMemory, type MemoryApiState } from './memory.js';
import { NVML_ERROR_GPU_IS_LOST, NVML_ERROR_NOT_FOUND, NVML_SUCCESS } from './return-codes.js';

const migHandleOut: unknown[] = [null];

/** "1g.10gb" from a MIG device name such as "NVIDIA A100-SXM4-80GB MIG 1g.10gb". */
export function migProfileFromName(name: string | null): string | null {
  const m = name?.match(/\bMIG\s+(\S+)\s*$/);
  return m ? (m[1] as string) : null;
}

/**
 * Reads the MIG instances under `parent`. Failures of the enumeration itself go into `deviceUnavailable`
 * under "migInstances"; failures of one instance's field go into that instance's own map. Also returns
 * the first MIG handle, because with MIG on some calls (compute mode) answer only for a MIG handle.
 */
export function readMigInstances(
  fns: NvmlFunctions,
  memoryApi: MemoryApiState,
  parent: DeviceHandle,
  deviceUnavailable: Unavailable,
): { instances: MigInstance[]; firstHandle: DeviceHandle | null } {
  let firstHandle: DeviceHandle | null = null;
  const max = readUint(fns.maxMigDeviceCount, 'nvmlDeviceGetMaxMigDeviceCount', 'migInstances', deviceUnavailable, parent);
  if (max === null || !fns.migHandleByIndex) {
    if (!fns.migHandleByIndex) deviceUnavailable.migInstances = 'nvmlDeviceGetMigDeviceHandleByIndex not exported by this driver';
    return { instances: [], firstHandle };
  }
  const out: MigInstance[] = [];
  for (let i = 0; i < max; i++) {
    migHandleOut[0] = null;
    const rc = fns.migHandleByIndex(parent, i, migHandleOut);
    if (rc === NVML_ERROR_NOT_FOUND) continue;
    if (rc === NVML_ERROR_GPU_IS_LOST) throw new DeviceUnreadable(rc, 'nvmlDeviceGetMigDeviceHandleByIndex');
    if (rc !== NVML_SUCCESS) {
      deviceUnavailable.migInstances = callReason('nvmlDeviceGetMigDeviceHandleByIndex', rc);
      continue;
    }
    const handle = migHandleOut[0];
    firstHandle ??= handle;
    const unavailable: Unavailable = {};
    const gi = readUint(fns.gpuInstanceId, 'nvmlDeviceGetGpuInstanceId', 'gpuInstanceId', unavailable, handle);
    const ci = readUint(fns.computeInstanceId, 'nvmlDeviceGetComputeInstanceId', 'computeInstanceId', unavailable, handle);
    const uuid = readString(fns.uuid, 'nvmlDeviceGetUUID', 'uuid', unavailable, handle);
    const name = readString(fns.name, 'nvmlDeviceGetName', 'profile', unavailable, handle);
    // The model needs an id; the enumeration index stands in, and the reason says so.
    if (gi === null) unavailable.gpuInstanceId = `${unavailable.gpuInstanceId}; MIG device index ${i} shown instead`;
    const profile = migProfileFromName(name);
    if (profile === null && name !== null) unavailable.profile = `no MIG profile in device name "${name}"`;
    const { memory } = readMemory(fns, memoryApi, handle, unavailable);
    out.push({ gpuInstanceId: gi ?? i, computeInstanceId: ci, uuid, profile, memory, unavailable });
  }
  return { instances: out, firstHandle };
}
