/**
 * Every nvmlReturn_t value by name, with what a user can do about it. Names are NVML's own, so a reason
 * such as "NVML_ERROR_NOT_SUPPORTED" can be looked up in NVIDIA's documentation as printed.
 */

export const NVML_SUCCESS = 0;
export const NVML_ERROR_NO_PERMISSION = 4;
export const NVML_ERROR_NOT_FOUND = 6;
export const NVML_ERROR_INSUFFICIENT_SIZE = 7;
export const NVML_ERROR_FUNCTION_NOT_FOUND = 13;
export const NVML_ERROR_GPU_IS_LOST = 15;
export const NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;

const NAMES: Record<number, string> = {
  0: 'NVML_SUCCESS',
  1: 'NVML_ERROR_UNINITIALIZED',
  2: 'NVML_ERROR_INVALID_ARGUMENT',
  3: 'NVML_ERROR_NOT_SUPPORTED',
  4: 'NVML_ERROR_NO_PERMISSION',
  5: 'NVML_ERROR_ALREADY_INITIALIZED',
  6: 'NVML_ERROR_NOT_FOUND',
  7: 'NVML_ERROR_INSUFFICIENT_SIZE',
  8: 'NVML_ERROR_INSUFFICIENT_POWER',
  9: 'NVML_ERROR_DRIVER_NOT_LOADED',
  10: 'NVML_ERROR_TIMEOUT',
  11: 'NVML_ERROR_IRQ_ISSUE',
  12: 'NVML_ERROR_LIBRARY_NOT_FOUND',
  13: 'NVML_ERROR_FUNCTION_NOT_FOUND',
  14: 'NVML_ERROR_CORRUPTED_INFOROM',
  15: 'NVML_ERROR_GPU_IS_LOST',
  16: 'NVML_ERROR_RESET_REQUIRED',
  17: 'NVML_ERROR_OPERATING_SYSTEM',
  18: 'NVML_ERROR_LIB_RM_VERSION_MISMATCH',
  19: 'NVML_ERROR_IN_USE',
  20: 'NVML_ERROR_MEMORY',
  21: 'NVML_ERROR_NO_DATA',
  22: 'NVML_ERROR_VGPU_ECC_NOT_SUPPORTED',
  23: 'NVML_ERROR_INSUFFICIENT_RESOURCES',
  24: 'NVML_ERROR_FREQ_NOT_SUPPORTED',
  25: 'NVML_ERROR_ARGUMENT_VERSION_MISMATCH',
  26: 'NVML_ERROR_DEPRECATED',
  27: 'NVML_ERROR_NOT_READY',
  28: 'NVML_ERROR_GPU_NOT_FOUND',
  29: 'NVML_ERROR_INVALID_STATE',
  30: 'NVML_ERROR_RESET_TYPE_NOT_SUPPORTED',
  999: 'NVML_ERROR_UNKNOWN',
};

const HINTS: Record<number, string> = {
  1: 'NVML was used before nvmlInit; this is a gpumem bug, please report it',
  2: 'an argument NVML rejected; if it repeats, report it with `gpumem status --json` output',
  3: 'this GPU or driver does not offer the value; nvidia-smi shows [N/A] for it too',
  4: 'run as a user allowed to query this GPU (root, or outside the restricted container/MIG pod)',
  6: 'the object (process, MIG device) is gone; sample again',
  7: 'the driver needed a larger buffer; if this repeats, report it',
  8: 'check the GPU power cables',
  9: 'the NVIDIA kernel module is not loaded: check `lsmod | grep nvidia` and `dmesg`, or reinstall the driver',
  10: 'the driver timed out; retry, and check `dmesg` for Xid errors',
  11: 'the driver reports an interrupt problem: check `dmesg` for Xid errors',
  12: 'a library NVML needs (often libcuda.so.1) was not found: reinstall the driver user-space packages',
  13: 'the driver lacks this function (too old for it); upgrade the driver to get the value',
  14: 'the GPU inforom is corrupted: contact your hardware vendor',
  15: 'the GPU fell off the bus: check `dmesg` for Xid 79; a reboot or GPU reset is usually needed',
  16: 'the GPU needs a reset (`nvidia-smi -r`) or a reboot',
  17: 'the operating system refused the request; check `dmesg`',
  18: 'the NVIDIA kernel module and libnvidia-ml.so.1 are from different driver versions: reboot after a driver upgrade',
  19: 'the GPU is busy with an operation that excludes this one; retry later',
  20: 'the driver ran out of host memory; free memory and retry',
  21: 'no data yet; sample again',
  25: 'the driver expects another struct version; gpumem falls back automatically, report it if this surfaces',
  26: 'the driver marked this call deprecated; upgrade gpumem',
  27: 'the driver is not ready yet; retry in a moment',
  28: 'the GPU was not found: check `nvidia-smi -L` and `dmesg`',
  29: 'the GPU is in a state that forbids this call; retry later',
};

/** NVML's name for a return code, e.g. 15 → "NVML_ERROR_GPU_IS_LOST"; unknown codes keep their number. */
export function nvmlReturnName(code: number): string {
  return NAMES[code] ?? `NVML_ERROR_${code}`;
}

/** What the user can do about a return code; a generic hint for codes without a specific one. */
export function nvmlReturnHint(code: number): string {
  return HINTS[code] ?? 'unexpected NVML error: check `nvidia-smi` works and `dmesg` for Xid errors';
}

/** Every return code gpumem knows by name (for tests and docs). */
export function knownNvmlReturnCodes(): number[] {
  return Object.keys(NAMES).map(Number);
}
