/**
 * The companion's OOM capture joined to the OOM message the program printed. The printed message rounds
 * every size to two decimals of MiB/GiB; the capture holds the allocator's exact counters at the instant of
 * the failure. The explanation is then computed on the exact numbers.
 */
import type { OomEvent } from '../oom/types.js';
import type { OomMessage } from './messages.js';

/** The allocator's numbers at the instant of an OOM, as the run report carries them next to the message. */
export interface AllocatorAtOom {
  pid: number;
  /** CUDA ordinal in the process, and the GPU's NVML UUID when known. */
  device: number;
  gpuUuid: string | null;
  /** "observer": captured inside the allocator; "counter": seen afterwards from `num_ooms` (no sizes). */
  source: 'observer' | 'counter';
  requestedBytes: number | null;
  allocatedBytes: number | null;
  reservedBytes: number | null;
  /** reserved − allocated at that instant. */
  unallocatedBytes: number | null;
  /** Device total, or the allowed maximum under a memory fraction. */
  deviceLimitBytes: number | null;
  deviceFreeBytes: number | null;
  numAllocRetries: number | null;
  snapshotPath: string | null;
}

/** The capture as the report shows it. */
export function allocatorAtOom(capture: OomMessage, gpuUuid: string | null): AllocatorAtOom {
  const s = capture.stats;
  const allocated = s?.allocatedBytes ?? null;
  const reserved = s?.reservedBytes ?? null;
  return {
    pid: capture.pid,
    device: capture.device,
    gpuUuid,
    source: capture.source,
    requestedBytes: capture.requestedBytes,
    allocatedBytes: allocated,
    reservedBytes: reserved,
    unallocatedBytes: allocated !== null && reserved !== null ? reserved - allocated : null,
    deviceLimitBytes: capture.deviceLimitBytes,
    deviceFreeBytes: capture.deviceFreeBytes,
    numAllocRetries: s?.numAllocRetries ?? null,
    snapshotPath: capture.snapshotPath,
  };
}

const big = (n: number | null): bigint | null => (n === null ? null : BigInt(n));

/**
 * A copy of `event` with the allocator's exact numbers in place of the printed, rounded ones: the request,
 * allocated, reserved-unallocated and reserved totals, and free memory. Under a memory fraction the
 * capture's limit is the allowed maximum (`allowedBytes`), otherwise the device total. Fields the capture
 * does not have keep the printed value.
 */
export function withAllocatorNumbers(event: OomEvent, at: AllocatorAtOom, memoryFraction: number | null): OomEvent {
  const out: OomEvent = { ...event, unavailable: { ...event.unavailable } };
  const set = (key: 'requestedBytes' | 'allocatedByPytorchBytes' | 'reservedUnallocatedBytes' | 'freeBytes' | 'totalBytes' | 'allowedBytes', value: number | null): void => {
    if (value === null) return;
    out[key] = BigInt(value);
    delete out.unavailable[key];
  };
  set('requestedBytes', at.requestedBytes);
  set('allocatedByPytorchBytes', at.allocatedBytes);
  set('reservedUnallocatedBytes', at.unallocatedBytes);
  // The printed message names one of the two reserved forms; keep the total in step when it printed one.
  if (event.reservedTotalBytes !== null) out.reservedTotalBytes = big(at.reservedBytes) ?? event.reservedTotalBytes;
  set('freeBytes', at.deviceFreeBytes);
  if (memoryFraction !== null) set('allowedBytes', at.deviceLimitBytes);
  else set('totalBytes', at.deviceLimitBytes);
  return out;
}
