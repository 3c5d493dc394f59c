/**
 * Per-device totals and fragmentation from a snapshot's segments. Reserved is the sum of segment sizes
 * (what nvidia-smi attributes to the allocator); allocated, active and requested come from the blocks, so
 * they equal `torch.cuda.memory_stats()` at the moment of the snapshot: allocated = active_allocated blocks,
 * active = allocated + active_pending_free, requested = what callers asked for before 512-byte rounding.
 */
import { nameRecord } from '../records.js';
import type { SnapshotSegment } from './model.js';
import { SiteTally, type SiteTotal } from './sites.js';
import { MiB } from '../units.js';

export interface PoolFragmentation {
  /** `segment_pool_id` ("0,0" default pool; null in files before it existed). */
  poolId: string | null;
  segmentType: string;
  stream: number;
  reservedBytes: number;
  freeBytes: number;
  largestFreeBytes: number;
  freeBlockCount: number;
}

export interface DeviceSummary {
  device: number;
  reservedBytes: number;
  allocatedBytes: number;
  activeBytes: number;
  /** Null when any active block lacks requested_size (2.0-era files without history). */
  requestedBytes: number | null;
  /** allocated − requested: bytes lost to rounding block sizes up. */
  roundingSlackBytes: number | null;
  pendingFreeBytes: number;
  /** Free bytes inside reserved segments (inactive blocks): reserved but unallocated. */
  inactiveBytes: number;
  segmentCount: number;
  blockCount: number;
  /** Blocks in state active_allocated (blockCount counts every block, free ones included). */
  allocatedBlockCount: number;
  segmentsByType: Record<string, { count: number; bytes: number }>;
  expandable: { count: number; bytes: number };
  pools: PoolFragmentation[];
}

export interface RequestFit {
  requestBytes: number;
  /** The block size the allocator looks for: the request rounded up to 512 bytes. */
  roundedBytes: number;
  segmentType: 'small' | 'large';
  /** True when some free block of that pool type could hold the request. */
  fits: boolean;
  freeBytes: number;
  largestFreeBytes: number;
  /** Free bytes in blocks too small for the request: reserved memory that cannot serve it. */
  unusableFreeBytes: number;
  /** Size of the new segment cudaMalloc would be asked for when nothing fits. */
  newSegmentBytes: number;
}

/** Device indices present in the segments, ascending. */
export function devicesOf(segments: readonly SnapshotSegment[]): number[] {
  return [...new Set(segments.map((s) => s.device))].sort((a, b) => a - b);
}

/** Totals and per-pool fragmentation for one device. */
export function summarizeDevice(segments: readonly SnapshotSegment[], device: number): DeviceSummary {
  const s: DeviceSummary = {
    device, reservedBytes: 0, allocatedBytes: 0, activeBytes: 0, requestedBytes: 0, roundingSlackBytes: null,
    pendingFreeBytes: 0, inactiveBytes: 0, segmentCount: 0, blockCount: 0, allocatedBlockCount: 0, segmentsByType: nameRecord(),
    expandable: { count: 0, bytes: 0 }, pools: [],
  };
  const pools = new Map<string, PoolFragmentation>();
  let requestedKnown = true;
  for (const seg of segments) {
    if (seg.device !== device) continue;
    s.reservedBytes += seg.totalBytes;
    s.segmentCount++;
    const byType = (s.segmentsByType[seg.segmentType] ??= { count: 0, bytes: 0 });
    byType.count++;
    byType.bytes += seg.totalBytes;
    if (seg.isExpandable) {
      s.expandable.count++;
      s.expandable.bytes += seg.totalBytes;
    }
    const key = `${seg.poolId}|${seg.segmentType}|${seg.stream}`;
    let pool = pools.get(key);
    if (!pool) {
      pool = { poolId: seg.poolId, segmentType: seg.segmentType, stream: seg.stream, reservedBytes: 0, freeBytes: 0, largestFreeBytes: 0, freeBlockCount: 0 };
      pools.set(key, pool);
    }
    pool.reservedBytes += seg.totalBytes;
    for (const b of seg.blocks) {
      s.blockCount++;
      if (b.state === 'inactive') {
        s.inactiveBytes += b.sizeBytes;
        pool.freeBytes += b.sizeBytes;
        pool.freeBlockCount++;
        pool.largestFreeBytes = Math.max(pool.largestFreeBytes, b.sizeBytes);
        continue;
      }
      s.activeBytes += b.sizeBytes;
      if (b.state === 'active_allocated') {
        s.allocatedBytes += b.sizeBytes;
        s.allocatedBlockCount++;
      }
      else if (b.state === 'active_pending_free') s.pendingFreeBytes += b.sizeBytes;
      if (b.requestedBytes === null) requestedKnown = false;
      else (s.requestedBytes as number) += b.requestedBytes;
    }
  }
  if (!requestedKnown) s.requestedBytes = null;
  s.roundingSlackBytes = s.requestedBytes === null ? null : s.activeBytes - s.requestedBytes;
  s.pools = [...pools.values()].sort((a, b) => b.reservedBytes - a.reservedBytes);
  return s;
}

/**
 * Could a request of `requestBytes` be served from memory already reserved on `device`? Answers "why did a
 * 600 MiB request fail with 1.45 GiB reserved but unallocated": the free bytes are split into blocks that are
 * each smaller than the request. Blocks of every stream of the request's pool type are counted.
 */
export function fitRequest(segments: readonly SnapshotSegment[], device: number, requestBytes: number): RequestFit {
  const roundedBytes = requestBytes < 512 ? 512 : Math.ceil(requestBytes / 512) * 512;
  const segmentType = roundedBytes <= MiB ? 'small' : 'large';
  let freeBytes = 0;
  let largestFreeBytes = 0;
  let unusableFreeBytes = 0;
  for (const seg of segments) {
    if (seg.device !== device || seg.segmentType !== segmentType) continue;
    for (const b of seg.blocks) {
      if (b.state !== 'inactive') continue;
      freeBytes += b.sizeBytes;
      largestFreeBytes = Math.max(largestFreeBytes, b.sizeBytes);
      if (b.sizeBytes < roundedBytes) unusableFreeBytes += b.sizeBytes;
    }
  }
  const newSegmentBytes = segmentType === 'small' ? 2 * MiB : roundedBytes < 10 * MiB ? 20 * MiB : Math.ceil(roundedBytes / (2 * MiB)) * 2 * MiB;
  return { requestBytes, roundedBytes, segmentType, fits: largestFreeBytes >= roundedBytes, freeBytes, largestFreeBytes, unusableFreeBytes, newSegmentBytes };
}

/** Live (active) bytes on `device` grouped by allocation site, from the snapshot's blocks. */
export function sitesOfSegments(segments: readonly SnapshotSegment[], device: number | null): SiteTotal[] {
  const tally = new SiteTally();
  for (const seg of segments) {
    if (device !== null && seg.device !== device) continue;
    for (const b of seg.blocks) if (b.state !== 'inactive') tally.add(b.frames, b.sizeBytes);
  }
  return tally.list();
}
