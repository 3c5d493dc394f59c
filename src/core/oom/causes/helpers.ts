/**
 * Shared arithmetic for cause rules: bigint byte maths, the derived reserved-but-unallocated amount for
 * messages that print only the reserved total, and the one way numbers are written into sentences.
 */
import { formatBytes, formatPercent } from '../../units.js';
import type { Cause, OomContext, OomEvent } from '../types.js';

/** A cause rule: pure, returns null when its evidence is absent. */
export type CauseRule = (event: OomEvent, context: OomContext) => Cause | null;

export const MiB = 1n << 20n;
export const GiB = 1n << 30n;

/** Bytes as text for a sentence ("1.25 GiB"). */
export function b(bytes: bigint | null): string {
  return formatBytes(bytes);
}

/** Reserved-but-unallocated: printed (v1, v4+), or derived from v2/v3's reserved total − allocated. */
export function unallocatedOf(event: OomEvent): { bytes: bigint; derived: boolean } | null {
  if (event.reservedUnallocatedBytes !== null) return { bytes: event.reservedUnallocatedBytes, derived: false };
  if (event.reservedTotalBytes !== null && event.allocatedByPytorchBytes !== null) {
    const diff = event.reservedTotalBytes - event.allocatedByPytorchBytes;
    return diff >= 0n ? { bytes: diff, derived: true } : null;
  }
  return null;
}

/** How much more the request needed than the driver had free; null when unknown or not short. */
export function shortfallOf(event: OomEvent): bigint | null {
  if (event.requestedBytes === null || event.freeBytes === null) return null;
  const short = event.requestedBytes - event.freeBytes;
  return short > 0n ? short : null;
}

/** `part / whole` as a percentage with no decimals ("37%"); "n/a" when whole is 0. */
export function pct(part: bigint, whole: bigint): string {
  // Per mille in bigint first: byte counts can exceed 2^53, so the ratio is taken before leaving bigint.
  return formatPercent(whole <= 0n ? null : Number((part * 1000n) / whole) / 10);
}

/** The allocator-config variable to set for this event's build (what its own hint names). */
export function allocConfVariable(event: OomEvent): string {
  if (event.hintVariable) return event.hintVariable;
  return event.family === 'pytorch-hip' ? 'PYTORCH_HIP_ALLOC_CONF' : 'PYTORCH_CUDA_ALLOC_CONF';
}

/** True when the run's allocator config already turns expandable segments on. */
export function expandableOn(context: OomContext): boolean {
  return /expandable_segments\s*:\s*true/i.test(context.allocConf ?? '');
}
