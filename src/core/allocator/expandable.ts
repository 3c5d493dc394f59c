/**
 * Expandable segments (`expandable_segments:True`): one large reserved address range per stream and pool,
 * backed by physical pages (2 MiB for the small pool, 20 MiB for the large pool) that are mapped when a
 * request needs them and unmapped when the cache is released. Follows `find_expandable_block`,
 * `try_allocate_expandable_block`, `map_block`, `unmap_block` and `release_blocks` of
 * c10/cuda/CUDACachingAllocator.cpp.
 */
import { Block, type ExpandableSegment, type Pool, type SegmentRef } from './blocks.js';
import { LARGE_BUFFER_BYTES, SMALL_BUFFER_BYTES } from './sizes.js';
import type { AllocatorSim } from './sim.js';

/** Address space of one expandable segment when the device's size is unknown (PyTorch reserves 1⅛ × the GPU). */
const DEFAULT_SPACE_BYTES = 2 ** 40;

const allocatable = (b: Block | null): b is Block => b !== null && !b.allocated;

/** `find_expandable_block`: the lowest unmapped range (with a free block just before it) that can hold `size`. */
function findRoom(sim: AllocatorSim, pool: Pool, stream: number, size: number): Block {
  const roomFrom = (start: Block): boolean => {
    let bytes = 0;
    for (let b: Block | null = start; bytes < size && allocatable(b); b = b.next) bytes += b.sizeBytes;
    return bytes >= size;
  };
  for (const u of pool.unmappedOf(stream).items) {
    const c = allocatable(u.prev) ? u.prev : u;
    if (roomFrom(c)) return c;
  }
  const pageBytes = pool.isSmall ? SMALL_BUFFER_BYTES : LARGE_BUFFER_BYTES;
  const space = sim.capacityBytes === Infinity ? DEFAULT_SPACE_BYTES : sim.capacityBytes + sim.capacityBytes / 8;
  const sizeBytes = Math.ceil(space / pageBytes) * pageBytes;
  const address = sim.segmentAddressFor(sizeBytes, true);
  const segment: ExpandableSegment = { address, sizeBytes, pageBytes, stream };
  const ref: SegmentRef = { address, sizeBytes, expandable: segment };
  const whole = new Block(address, sizeBytes, stream, pool, ref);
  whole.mapped = false;
  pool.unmappedOf(stream).insert(whole);
  return whole;
}

/** `map_block`: maps the pages under the first `size` bytes of an unmapped block; false when memory runs out. */
function mapBlock(sim: AllocatorSim, block: Block, size: number): boolean {
  const seg = block.segment.expandable as ExpandableSegment;
  const first = Math.floor((block.address - seg.address) / seg.pageBytes);
  const end = Math.ceil((block.address + size - seg.address) / seg.pageBytes);
  const mappedBytes = (end - first) * seg.pageBytes;
  if (mappedBytes === 0 || !sim.reserve(mappedBytes)) return false;
  const pool = block.pool;
  pool.unmappedOf(block.stream).remove(block);
  block.mapped = true;
  if (mappedBytes < block.sizeBytes) {
    const rest = new Block(block.address + mappedBytes, block.sizeBytes - mappedBytes, block.stream, pool, block.segment);
    rest.mapped = false;
    rest.prev = block;
    rest.next = block.next;
    if (rest.next) rest.next.prev = rest;
    block.next = rest;
    pool.unmappedOf(block.stream).insert(rest);
    block.sizeBytes = mappedBytes;
  }
  sim.merge(block, block.prev, pool);
  sim.merge(block, block.next, pool);
  pool.insertFree(block);
  sim.segmentEvent('segment_map', block.address, mappedBytes);
  return true;
}

/** `try_allocate_expandable_block`: maps enough pages for `size` and takes the block out of the free list. */
export function mapForRequest(sim: AllocatorSim, pool: Pool, stream: number, size: number): Block | null {
  let candidate = findRoom(sim, pool, stream, size);
  if (!candidate.mapped && !mapBlock(sim, candidate, Math.min(candidate.sizeBytes, size))) return null;
  while (candidate.sizeBytes < size) {
    const next = candidate.next;
    // The request is larger than the segment's whole address space: as cuMemCreate would, fail.
    if (!next || next.allocated) return null;
    if (!mapBlock(sim, next, Math.min(size - candidate.sizeBytes, next.sizeBytes))) return null;
    candidate = next;
  }
  pool.freeOf(stream).remove(candidate);
  return candidate;
}

/** `unmap_block` (+ `release_expandable_segment`): gives back the whole free pages inside a free block. */
export function releaseExpandable(sim: AllocatorSim, block: Block): void {
  const seg = block.segment.expandable as ExpandableSegment;
  const first = Math.ceil((block.address - seg.address) / seg.pageBytes);
  const end = Math.floor((block.address + block.sizeBytes - seg.address) / seg.pageBytes);
  if (first >= end) return;
  const pool = block.pool;
  pool.freeOf(block.stream).remove(block);
  const start = seg.address + first * seg.pageBytes;
  const bytes = (end - first) * seg.pageBytes;
  const before = start - block.address;
  if (before > 0) {
    const b = new Block(block.address, before, block.stream, pool, block.segment);
    b.prev = block.prev;
    if (b.prev) b.prev.next = b;
    b.next = block;
    block.prev = b;
    pool.insertFree(b);
  }
  const after = block.sizeBytes - before - bytes;
  if (after > 0) {
    const a = new Block(start + bytes, after, block.stream, pool, block.segment);
    a.next = block.next;
    if (a.next) a.next.prev = a;
    a.prev = block;
    block.next = a;
    pool.insertFree(a);
  }
  block.address = start;
  block.sizeBytes = bytes;
  block.mapped = false;
  sim.merge(block, block.prev, pool);
  sim.merge(block, block.next, pool);
  pool.unmappedOf(block.stream).insert(block);
  sim.unreserve(bytes);
  sim.segmentEvent('segment_unmap', start, bytes);
  // A segment with nothing mapped is dropped altogether.
  if (!block.prev && !block.next) pool.unmappedOf(block.stream).remove(block);
}
