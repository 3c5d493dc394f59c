/**
 * Small wrappers that turn one NVML call into a value or a null with its reason, sharing scratch buffers
 * so the per-sample path allocates nothing. A GPU_IS_LOST answer aborts the device being read (it
 * throws DeviceUnreadable) because every further call on it would fail the same way.
 */
import type { Unavailable } from '../../core/types.js';
import type { DeviceHandle, NvmlCall } from './library.js';
import { NVML_ERROR_GPU_IS_LOST, NVML_SUCCESS, nvmlReturnName } from './return-codes.js';

/** Thrown inside a device read when the device as a whole cannot be read any further. */
export class DeviceUnreadable extends Error {
  constructor(readonly nvmlReturn: number, readonly symbol: string) {
    super(`${symbol}: ${nvmlReturnName(nvmlReturn)}`);
  }
}

/** Scratch space for scalar out-parameters (NVML writes at most two u32 per call here). */
export const scratchU32 = new Uint32Array(2);
/** Scratch space for small structs (memory, utilization, PCI info). */
export const scratchStruct = Buffer.alloc(128);

/** The reason text for a failed call: "nvmlDeviceGetTemperature: NVML_ERROR_NOT_SUPPORTED". */
export function callReason(symbol: string, rc: number): string {
  return `${symbol}: ${nvmlReturnName(rc)}`;
}

/** The reason text for a symbol this driver does not export. */
export function missingReason(symbol: string): string {
  return `${symbol} not exported by this driver`;
}

/**
 * Calls `fn(…args)` (the device handle, when there is one, is the first argument) and returns true on
 * NVML_SUCCESS; otherwise records why `field` is unavailable and returns false. Throws DeviceUnreadable on
 * GPU_IS_LOST.
 */
export function invoke(
  fn: NvmlCall | null,
  symbol: string,
  field: string,
  unavailable: Unavailable,
  args: unknown[],
): boolean {
  if (!fn) {
    unavailable[field] = missingReason(symbol);
    return false;
  }
  const rc = fn(...args);
  if (rc === NVML_SUCCESS) return true;
  if (rc === NVML_ERROR_GPU_IS_LOST) throw new DeviceUnreadable(rc, symbol);
  unavailable[field] = callReason(symbol, rc);
  return false;
}

/** Reads one unsigned int out-parameter: `fn(handle, …before, &value)`. Null with a reason on failure. */
export function readUint(
  fn: NvmlCall | null,
  symbol: string,
  field: string,
  unavailable: Unavailable,
  handle: DeviceHandle,
  ...before: unknown[]
): number | null {
  scratchU32[0] = 0;
  return invoke(fn, symbol, field, unavailable, [handle, ...before, scratchU32]) ? (scratchU32[0] as number) : null;
}
