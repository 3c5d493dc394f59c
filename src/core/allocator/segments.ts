/**
 * The segment view of the simulation: segments as a snapshot lists them (`snapshot()` in
 * c10/cuda/CUDACachingAllocator.cpp reports one segment per cudaMalloc and one per contiguous mapped range of
 * an expandable segment), and installing a segment that existed before a replay began.
 */
import { Block, type SegmentRef } from './blocks.js';
import type { AllocatorSim, SimSegment } from './sim.js';
import { SMALL_BUFFER_BYTES } from './sizes.js';

/** A segment and the allocations live in it, addresses absolute. */
export interface SeedSegment {
  address: number;
  sizeBytes: number;
  stream: number;
  allocations: Array<{ id: number; address: number; sizeBytes: number; requestedBytes: number }>;
}

/** Installs `segment` into `sim`: its allocations live, the space between them free blocks. */
export function installSegment(sim: AllocatorSim, segment: SeedSegment): void {
  const pool = segment.sizeBytes <= SMALL_BUFFER_BYTES ? sim.small : sim.large;
  const ref: SegmentRef = { address: segment.address, sizeBytes: segment.sizeBytes, expandable: null };
  const end = segment.address + segment.sizeBytes;
  const parts: Block[] = [];
  let cursor = segment.address;
  for (const a of [...segment.allocations].sort((x, y) => x.address - y.address)) {
    if (a.address < cursor || a.address + a.sizeBytes > end || sim.live.has(a.id)) continue;
    if (a.address > cursor) parts.push(new Block(cursor, a.address - cursor, segment.stream, pool, ref));
    const b = new Block(a.address, a.sizeBytes, segment.stream, pool, ref);
    b.allocated = true;
    b.requestedBytes = a.requestedBytes;
    sim.live.set(a.id, b);
    sim.allocatedBytes += b.sizeBytes;
    sim.requestedBytes += a.requestedBytes;
    parts.push(b);
    cursor = a.address + a.sizeBytes;
  }
  if (cursor < end) parts.push(new Block(cursor, end - cursor, segment.stream, pool, ref));
  for (let i = 0; i < parts.length; i++) {
    const b = parts[i] as Block;
    b.prev = parts[i - 1] ?? null;
    b.next = parts[i + 1] ?? null;
    if (!b.allocated) pool.insertFree(b);
  }
  sim.reservedBytes += segment.sizeBytes;
  sim.peakReservedBytes = Math.max(sim.peakReservedBytes, sim.reservedBytes);
  sim.peakAllocatedBytes = Math.max(sim.peakAllocatedBytes, sim.allocatedBytes);
}

/** Every segment of `sim`, by address. */
export function listSegments(sim: AllocatorSim): SimSegment[] {
  const all: Block[] = [...sim.live.values()];
  for (const pool of [sim.small, sim.large]) for (const list of pool.free.values()) all.push(...list.items);
  all.sort((a, b) => a.address - b.address);
  const out: SimSegment[] = [];
  let current: SimSegment | null = null;
  let end = -1;
  let ref: SegmentRef | null = null;
  for (const b of all) {
    if (!current || b.segment !== ref || b.address !== end || (!b.segment.expandable && b.prev === null)) {
      current = { address: b.address, sizeBytes: 0, stream: b.stream, pool: b.pool.isSmall ? 'small' : 'large', expandable: b.segment.expandable !== null, blocks: [] };
      out.push(current);
      ref = b.segment;
    }
    current.blocks.push({ offset: b.address - current.address, sizeBytes: b.sizeBytes, allocated: b.allocated, requestedBytes: b.allocated ? b.requestedBytes : 0 });
    current.sizeBytes += b.sizeBytes;
    end = b.address + b.sizeBytes;
  }
  return out;
}
