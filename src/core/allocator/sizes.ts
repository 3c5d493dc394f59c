/**
 * The size rules of c10/cuda/CUDACachingAllocator.cpp: the constants at its top, `round_size`,
 * `roundup_power2_next_division`, `get_allocation_size` and `CUDAAllocatorConfig::roundup_power2_divisions`.
 */
import type { AllocatorSettings } from './settings.js';

/** Number of power-of-two size intervals for `roundup_power2_divisions` (1 MiB … 64 GiB and above). */
export const ROUNDUP_INTERVALS = 16;

/** `kMinBlockSize`: every size is rounded to a multiple of this. */
export const MIN_BLOCK_BYTES = 512;
/** `kSmallSize`: requests up to this go to the small pool. */
export const SMALL_SIZE_BYTES = 1024 * 1024;
/** `kSmallBuffer`: small requests are packed in segments of this size (and expandable small pages). */
export const SMALL_BUFFER_BYTES = 2 * 1024 * 1024;
/**
 * `kLargeBuffer`: requests under 10 MiB share segments of this size (and expandable large pages); also the
 * default `max_non_split_rounding_mb` and the lower bound of `max_split_size_mb`.
 */
export const LARGE_BUFFER_BYTES = 20 * 1024 * 1024;
/** `kMinLargeAlloc`. */
export const MIN_LARGE_ALLOC_BYTES = 10 * 1024 * 1024;
/** `kRoundLarge`: larger segments are rounded up to this. */
export const ROUND_LARGE_BYTES = 2 * 1024 * 1024;

const ceilTo = (n: number, unit: number): number => Math.ceil(n / unit) * unit;
const floorLog2 = (n: number): number => Math.floor(Math.log2(n));

/** Divisions for a size: its power-of-two interval counted from 1 MiB (below is interval 0), capped at 15. */
export function divisionsFor(sizeBytes: number, settings: AllocatorSettings): number {
  const index = Math.min(Math.max(0, floorLog2(sizeBytes) - 20), ROUNDUP_INTERVALS - 1);
  return settings.roundupPower2Divisions[index] ?? 0;
}

/** Rounds up to the next of `divisions` equal steps between the enclosing powers of two. */
function nextDivision(sizeBytes: number, divisions: number): number {
  const floor2 = 2 ** floorLog2(sizeBytes);
  if (floor2 === sizeBytes) return sizeBytes;
  const step = floor2 / 2 ** floorLog2(divisions);
  if (step < 1) return floor2 * 2;
  const below = Math.floor(sizeBytes / step) * step;
  return below === sizeBytes ? sizeBytes : below + step;
}

/** The block size a request gets (`round_size`). */
export function roundSize(requestedBytes: number, settings: AllocatorSettings): number {
  if (requestedBytes < MIN_BLOCK_BYTES) return MIN_BLOCK_BYTES;
  const divisions = divisionsFor(requestedBytes, settings);
  if (divisions > 1 && requestedBytes > MIN_BLOCK_BYTES * divisions) return nextDivision(requestedBytes, divisions);
  return ceilTo(requestedBytes, MIN_BLOCK_BYTES);
}

/** The segment size cudaMalloc is asked for when no cached block fits (`get_allocation_size`). */
export function allocationSize(sizeBytes: number): number {
  if (sizeBytes <= SMALL_SIZE_BYTES) return SMALL_BUFFER_BYTES;
  if (sizeBytes < MIN_LARGE_ALLOC_BYTES) return LARGE_BUFFER_BYTES;
  return ceilTo(sizeBytes, ROUND_LARGE_BYTES);
}

/** Largest size replayed from a file: 1 PiB, far beyond any GPU, and small enough that sums stay exact. */
export const MAX_REQUEST_BYTES = 2 ** 50;

/** A size a trace or snapshot can honestly hold (damaged or crafted files may hold NaN, negatives, 1e300). */
export function isPossibleSize(bytes: number): boolean {
  return Number.isInteger(bytes) && bytes >= 0 && bytes <= MAX_REQUEST_BYTES;
}
