/**
 * Device (and MIG device) memory with nvidia-smi's semantics: nvmlDeviceGetMemoryInfo_v2 reports
 * driver-reserved memory apart from `used`. Without v2 (drivers before R510) the v1 call is used and
 * `reserved` is null, because v1 `used` already counts it from R510 on.
 */
import type { DeviceMemory, Unavailable } from '../../core/types.js';
import { callReason, DeviceUnreadable, invoke, missingReason, scratchStruct } from './calls.js';
import { MEMORY_V1, MEMORY_V2, MEMORY_V2_VERSION, readU64OrNull } from './layouts.js';
import type { DeviceHandle, NvmlFunctions } from './library.js';
import {
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH,
  NVML_ERROR_FUNCTION_NOT_FOUND,
  NVML_ERROR_GPU_IS_LOST,
  NVML_ERROR_NO_PERMISSION,
  NVML_SUCCESS,
  nvmlReturnName,
} from './return-codes.js';

/** Whether the v2 call is still trusted this session (a version rejection turns it off for good). */
export interface MemoryApiState {
  v2Usable: boolean;
  /** Why v2 is not used, once it is not. */
  v2Reason: string | null;
}

/** The starting state for a library: v2 when the symbol exists. */
export function initialMemoryApi(fns: NvmlFunctions): MemoryApiState {
  return fns.memoryV2
    ? { v2Usable: true, v2Reason: null }
    : { v2Usable: false, v2Reason: `${missingReason('nvmlDeviceGetMemoryInfo_v2')} (driver < 510); v1 counts reserved memory as used` };
}

const nullMemory = (): DeviceMemory => ({ totalBytes: null, reservedBytes: null, usedBytes: null, freeBytes: null });

/**
 * Reads memory for a device or MIG handle into a DeviceMemory, recording reasons for null fields in
 * `unavailable` (keys "memory.totalBytes" …). Returns `noPermission` so the caller can mark the device.
 * Throws DeviceUnreadable on GPU_IS_LOST.
 */
export function readMemory(
  fns: NvmlFunctions,
  api: MemoryApiState,
  handle: DeviceHandle,
  unavailable: Unavailable,
): { memory: DeviceMemory; noPermission: boolean } {
  const buf = scratchStruct;
  if (api.v2Usable && fns.memoryV2) {
    buf.fill(0, 0, MEMORY_V2.size);
    buf.writeUInt32LE(MEMORY_V2_VERSION, MEMORY_V2.version);
    const rc = fns.memoryV2(handle, buf);
    if (rc === NVML_SUCCESS) {
      const memory: DeviceMemory = {
        totalBytes: readU64OrNull(buf, MEMORY_V2.total),
        reservedBytes: readU64OrNull(buf, MEMORY_V2.reserved),
        usedBytes: readU64OrNull(buf, MEMORY_V2.used),
        freeBytes: readU64OrNull(buf, MEMORY_V2.free),
      };
      return { memory: explainNulls(memory, unavailable), noPermission: false };
    }
    // R525+ rejects a struct version with ARGUMENT_VERSION_MISMATCH, R510/R515 with FUNCTION_NOT_FOUND.
    if (rc === NVML_ERROR_ARGUMENT_VERSION_MISMATCH || rc === NVML_ERROR_FUNCTION_NOT_FOUND) {
      api.v2Usable = false;
      api.v2Reason = `nvmlDeviceGetMemoryInfo_v2 rejected struct version 0x${MEMORY_V2_VERSION.toString(16)} (${nvmlReturnName(rc)}); v1 counts reserved memory as used`;
    } else {
      return failed('nvmlDeviceGetMemoryInfo_v2', rc, unavailable);
    }
  }
  buf.fill(0, 0, MEMORY_V1.size);
  if (!invoke(fns.memoryV1, 'nvmlDeviceGetMemoryInfo', 'memory', unavailable, [handle, buf])) {
    const reason = unavailable.memory as string;
    delete unavailable.memory;
    return failedWith(reason, reason.endsWith(nvmlReturnName(NVML_ERROR_NO_PERMISSION)), unavailable);
  }
  unavailable['memory.reservedBytes'] = api.v2Reason ?? 'reserved memory not reported by v1';
  const memory: DeviceMemory = {
    totalBytes: readU64OrNull(buf, MEMORY_V1.total),
    reservedBytes: null,
    usedBytes: readU64OrNull(buf, MEMORY_V1.used),
    freeBytes: readU64OrNull(buf, MEMORY_V1.free),
  };
  return { memory: explainNulls(memory, unavailable), noPermission: false };
}

/** A field the driver answered with NVML_VALUE_NOT_AVAILABLE (or beyond 2^53) is null; say so. */
function explainNulls(memory: DeviceMemory, unavailable: Unavailable): DeviceMemory {
  for (const [k, v] of Object.entries(memory)) {
    if (v === null) unavailable[`memory.${k}`] ??= 'NVML_VALUE_NOT_AVAILABLE';
  }
  return memory;
}

function failed(symbol: string, rc: number, unavailable: Unavailable): { memory: DeviceMemory; noPermission: boolean } {
  if (rc === NVML_ERROR_GPU_IS_LOST) throw new DeviceUnreadable(rc, symbol);
  return failedWith(callReason(symbol, rc), rc === NVML_ERROR_NO_PERMISSION, unavailable);
}

function failedWith(reason: string, noPermission: boolean, unavailable: Unavailable): { memory: DeviceMemory; noPermission: boolean } {
  for (const f of ['totalBytes', 'reservedBytes', 'usedBytes', 'freeBytes']) unavailable[`memory.${f}`] = reason;
  return { memory: nullMemory(), noPermission };
}
