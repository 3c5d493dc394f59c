/**
 * The NVML structs gpumem reads, as byte offsets on x86-64 (checked against gcc's offsetof in
 * test/sources/nvml/layouts.test.ts). Structs are passed as plain Buffers and decoded here, which keeps the
 * per-sample path free of marshalling objects and lets the process-entry stride be chosen at run time.
 */

/** nvmlMemory_t (v1): total, free, used — each u64. */
export const MEMORY_V1 = { size: 24, total: 0, free: 8, used: 16 } as const;

/** nvmlMemory_v2_t: u32 version, pad, then total, reserved, free, used — each u64. */
export const MEMORY_V2 = { size: 40, version: 0, total: 8, reserved: 16, free: 24, used: 32 } as const;

/** NVML_STRUCT_VERSION(Memory, 2) = sizeof(nvmlMemory_v2_t) | 2 << 24. */
export const MEMORY_V2_VERSION = (MEMORY_V2.size | (2 << 24)) >>> 0;

/** nvmlUtilization_t: gpu %, memory % (share of time memory was read or written, not capacity). */
export const UTILIZATION = { size: 8, gpu: 0, memory: 4 } as const;

/** nvmlPciInfo_t (v3): busId is the 32-byte "%08X:%02X:%02X.0" form nvidia-smi prints. */
export const PCI_INFO = { size: 68, busIdLegacy: 0, domain: 16, bus: 20, device: 24, busId: 36, busIdLength: 32 } as const;

/**
 * Process entries. v1 has no instance ids; v2 (and `_v3` outside 535.43–535.86) is 24 bytes; the
 * 535.43–535.86 `_v3` entry is 32 bytes (adds usedGpuCcProtectedMemory) with the same prefix.
 */
export const PROCESS_INFO = { pid: 0, usedGpuMemory: 8, gpuInstanceId: 16, computeInstanceId: 20 } as const;
export type ProcessStride = 16 | 24 | 32;
/** Widest entry any driver writes; buffers are sized for it whatever stride was chosen, so a wrong guess cannot overflow. */
export const PROCESS_MAX_STRIDE = 32;

/** nvmlProcessUtilizationSample_t. */
export const PROCESS_UTIL_SAMPLE = { size: 32, pid: 0, timeStamp: 8, smUtil: 16, memUtil: 20 } as const;

/** NVML_DEVICE_NAME_V2_BUFFER_SIZE / NVML_DEVICE_UUID_V2_BUFFER_SIZE (the doc of each call points to the 96-byte one). */
export const NAME_BUFFER_SIZE = 96;
export const UUID_BUFFER_SIZE = 96;
export const DRIVER_VERSION_BUFFER_SIZE = 80;

/** gpuInstanceId / computeInstanceId value when MIG is off. */
export const NO_INSTANCE_ID = 0xffffffff;

/** Linux's largest possible pid (PID_MAX_LIMIT); a decoded pid above it means the stride was wrong. */
export const PID_MAX_LIMIT = 4194304;

const TWO_32 = 4294967296;

/**
 * Reads a u64 as a number, or null for NVML_VALUE_NOT_AVAILABLE (all ones). Byte counts stay far below
 * 2^53, so a number is exact; anything above is treated as not available rather than rounded.
 */
export function readU64OrNull(buf: Buffer, offset: number): number | null {
  const lo = buf.readUInt32LE(offset);
  const hi = buf.readUInt32LE(offset + 4);
  if (hi >= 0x200000) return null;
  return hi * TWO_32 + lo;
}

/** Reads a NUL-terminated C string from a buffer. */
export function readCString(buf: Buffer, offset = 0, max = buf.length - offset): string {
  const end = buf.indexOf(0, offset);
  return buf.toString('utf8', offset, end === -1 || end > offset + max ? offset + max : end);
}

/**
 * nvmlFieldValue_t: fieldId u32 @0, scopeId u32 @4, timestamp i64 @8, latencyUsec i64 @16, valueType i32 @24,
 * nvmlReturn i32 @28, value (8-byte union) @32; 40 bytes, 8-aligned.
 */
export const FIELD_VALUE = { size: 40, fieldId: 0, scopeId: 4, valueType: 24, nvmlReturn: 28, value: 32 } as const;
/** NVML_FI_DEV_POWER_INSTANT: the instant power draw in mW (unsigned int), R530+. */
export const FI_DEV_POWER_INSTANT = 186;
