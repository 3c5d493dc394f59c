/**
 * A simulation of PyTorch's native CUDA caching allocator for one device (`DeviceCachingAllocator` in
 * c10/cuda/CUDACachingAllocator.cpp): the same pools, size rounding, best-fit search, splitting, coalescing,
 * cache release on a failed cudaMalloc, garbage collection and expandable segments, with the statistics
 * PyTorch keeps. Device memory is a number (`capacityBytes`): a cudaMalloc or page mapping that would take the
 * reserved total above it fails, as the real one would with that much memory free for this process.
 */
import { Block, Pool } from './blocks.js';
import { optionExists } from './versions.js';
import { allocationSize, LARGE_BUFFER_BYTES, MIN_BLOCK_BYTES, roundSize, SMALL_SIZE_BYTES } from './sizes.js';
import { defaultAllocatorSettings, type AllocatorSettings } from './settings.js';
import { mapForRequest } from './expandable.js';
import { installSegment, listSegments, type SeedSegment } from './segments.js';
import { collectGarbage, releaseOversize, releasePool } from './release.js';

export interface AllocatorSimOptions {
  settings?: AllocatorSettings;
  /** Device memory the allocator may reserve in all; unlimited when left out. */
  capacityBytes?: number;
  /** `torch.__version__` the run used, e.g. "2.3.1"; selects version-dependent rules. */
  version?: string;
  /** `set_per_process_memory_fraction` as bytes: the limit that also switches garbage collection on. */
  memoryFractionBytes?: number;
  /** Chooses the address of a new segment (replays use the real ones); a fresh synthetic address otherwise. */
  segmentAddress?: (sizeBytes: number, expandable: boolean) => number | null;
  /** Called on every segment event, as PyTorch's trace records them. */
  onSegment?: (action: 'segment_alloc' | 'segment_free' | 'segment_map' | 'segment_unmap', address: number, sizeBytes: number) => void;
}

export interface AllocatorSimStats {
  allocatedBytes: number;
  reservedBytes: number;
  peakAllocatedBytes: number;
  peakReservedBytes: number;
  requestedBytes: number;
  numAllocRetries: number;
  numOoms: number;
  segmentCount: number;
}

export interface SimSegment {
  address: number;
  sizeBytes: number;
  stream: number;
  pool: 'small' | 'large';
  expandable: boolean;
  blocks: Array<{ offset: number; sizeBytes: number; allocated: boolean; requestedBytes: number }>;
}

const SYNTHETIC_BASE = 2 ** 46;

export class AllocatorSim {
  readonly settings: AllocatorSettings;
  readonly capacityBytes: number;
  readonly version: string | null;
  /** @internal shared with expandable.ts */
  readonly small = new Pool(true);
  /** @internal */
  readonly large = new Pool(false);
  /** @internal live allocations by id */
  readonly live = new Map<number, Block>();
  private readonly fractionBytes: number;
  /** Garbage collection acts only with a memory fraction set (`set_fraction` in PyTorch). */
  private readonly gcOn: boolean;
  private readonly roundupOn: boolean;
  /** Releases before 2.6 always allow an oversize block at most kLargeBuffer larger than the request. */
  private readonly nonSplitRoundingBytes: number;
  private nextSynthetic = SYNTHETIC_BASE;
  allocatedBytes = 0;
  reservedBytes = 0;
  requestedBytes = 0;
  peakAllocatedBytes = 0;
  peakReservedBytes = 0;
  numAllocRetries = 0;
  numOoms = 0;
  /** Allocated bytes right after the request that last raised the reserved peak. */
  allocatedAtPeakReservedBytes = 0;
  /** Request size (rounded) of the last failed alloc. */
  lastOomBytes = 0;

  constructor(private readonly options: AllocatorSimOptions = {}) {
    this.settings = options.settings ?? defaultAllocatorSettings();
    this.capacityBytes = options.capacityBytes ?? Infinity;
    this.version = options.version ?? null;
    this.nonSplitRoundingBytes = optionExists('max_non_split_rounding_mb', this.version) ? this.settings.maxNonSplitRoundingBytes : LARGE_BUFFER_BYTES;
    this.fractionBytes = options.memoryFractionBytes ?? Infinity;
    this.gcOn = this.fractionBytes !== Infinity && this.settings.garbageCollectionThreshold > 0;
    this.roundupOn = this.settings.roundupPower2Divisions.some((d) => d > 1);
  }


  /** Allocates `sizeBytes` for `id`; false when the request fails after every cache release (an OOM). */
  alloc(id: number, sizeBytes: number, stream = 0): boolean {
    if (this.live.has(id)) throw new Error(`allocator simulation: id ${id} is already allocated`);
    // Without power-of-two roundup the rounding is plain 512-byte steps; skip the interval lookup.
    const size = this.roundupOn ? roundSize(sizeBytes, this.settings) : sizeBytes <= MIN_BLOCK_BYTES ? MIN_BLOCK_BYTES : Math.ceil(sizeBytes / MIN_BLOCK_BYTES) * MIN_BLOCK_BYTES;
    const pool = size <= SMALL_SIZE_BYTES ? this.small : this.large;
    const segmentBytes = allocationSize(size);
    let block = this.findFree(pool, stream, size);
    if (!block) {
      if (this.gcOn) collectGarbage(this, this.fractionBytes);
      block =
        this.newBlock(pool, stream, size, segmentBytes, false) ??
        (releaseOversize(this, pool, stream, size) ? this.newBlock(pool, stream, size, segmentBytes, false) : null) ??
        (this.emptyCache(), this.newBlock(pool, stream, size, segmentBytes, true));
    }
    if (!block) {
      this.numOoms++;
      this.lastOomBytes = size;
      return false;
    }
    if (this.shouldSplit(block, size)) {
      const head = new Block(block.address, size, stream, pool, block.segment);
      head.prev = block.prev;
      if (head.prev) head.prev.next = head;
      head.next = block;
      block.prev = head;
      block.address += size;
      block.sizeBytes -= size;
      pool.insertFree(block);
      block = head;
    }
    block.allocated = true;
    block.requestedBytes = sizeBytes;
    this.live.set(id, block);
    this.allocatedBytes += block.sizeBytes;
    this.requestedBytes += sizeBytes;
    if (this.allocatedBytes > this.peakAllocatedBytes) this.peakAllocatedBytes = this.allocatedBytes;
    if (this.reservedBytes === this.peakReservedBytes) this.allocatedAtPeakReservedBytes = this.allocatedBytes;
    return true;
  }

  /** `free_requested`: the statistics drop now; the block is reused only after free(). */
  requestFree(id: number): void {
    const block = this.live.get(id);
    if (!block || block.freeRequested) return;
    block.freeRequested = true;
    this.allocatedBytes -= block.sizeBytes;
    this.requestedBytes -= block.requestedBytes;
  }

  /** Frees `id` (`free_block`): the block returns to its pool, merged with free neighbours. */
  free(id: number): void {
    const block = this.live.get(id);
    if (!block) return;
    if (!block.freeRequested) {
      this.allocatedBytes -= block.sizeBytes;
      this.requestedBytes -= block.requestedBytes;
    }
    this.live.delete(id);
    block.allocated = false;
    block.freeRequested = false;
    const pool = block.pool;
    this.merge(block, block.prev, pool);
    this.merge(block, block.next, pool);
    pool.insertFree(block);
  }

  /**
   * Installs a cudaMalloc'ed segment that existed before the simulation started, with the allocations live in
   * it; the space between them becomes free blocks, merged as the allocator keeps them.
   */
  seedSegment(segment: SeedSegment): void {
    installSegment(this, segment);
  }

  /** Address of a live allocation, or null. */
  addressOf(id: number): number | null {
    return this.live.get(id)?.address ?? null;
  }

  /** `release_cached_blocks` (torch.cuda.empty_cache): frees every unsplit cached segment, unmaps free pages. */
  emptyCache(): void {
    releasePool(this, this.large);
    releasePool(this, this.small);
  }

  stats(): AllocatorSimStats {
    return {
      allocatedBytes: this.allocatedBytes,
      reservedBytes: this.reservedBytes,
      peakAllocatedBytes: this.peakAllocatedBytes,
      peakReservedBytes: this.peakReservedBytes,
      requestedBytes: this.requestedBytes,
      numAllocRetries: this.numAllocRetries,
      numOoms: this.numOoms,
      segmentCount: this.segments().length,
    };
  }

  /** Segments as a snapshot lists them: one per cudaMalloc, one per contiguous mapped range of an expandable segment. */
  segments(): SimSegment[] {
    return listSegments(this);
  }

  /** @internal A fresh address range for a new segment. */
  segmentAddressFor(sizeBytes: number, expandable: boolean): number {
    const chosen = this.options.segmentAddress?.(sizeBytes, expandable);
    if (chosen !== null && chosen !== undefined) return chosen;
    const address = this.nextSynthetic;
    this.nextSynthetic += Math.ceil(sizeBytes / 2 ** 21) * 2 ** 21 + 2 ** 21;
    return address;
  }

  /** @internal Reserve `bytes` more, or false when the device has no room. */
  reserve(bytes: number): boolean {
    if (this.reservedBytes + bytes > this.capacityBytes || this.reservedBytes + bytes > this.fractionBytes) return false;
    this.reservedBytes += bytes;
    if (this.reservedBytes > this.peakReservedBytes) this.peakReservedBytes = this.reservedBytes;
    return true;
  }

  /** @internal */
  unreserve(bytes: number): void {
    this.reservedBytes -= bytes;
  }

  /** @internal */
  segmentEvent(action: 'segment_alloc' | 'segment_free' | 'segment_map' | 'segment_unmap', address: number, sizeBytes: number): void {
    this.options.onSegment?.(action, address, sizeBytes);
  }

  /** `get_free_block`: best fit by (stream, size), with the expandable and oversize rules. */
  private findFree(pool: Pool, stream: number, size: number): Block | null {
    if (this.gcOn) pool.freeSearches++;
    const list = pool.free.get(stream);
    if (!list) return null;
    const items = list.items;
    let i = list.lowerBound(size, -Infinity);
    if (i >= items.length) return null;
    let found = items[i] as Block;
    if (found.segment.expandable) {
      if (this.settings.expandableSegments) {
        // Best fit counts the unmapped space right after a block as part of it.
        const grown = (b: Block): number => b.sizeBytes + (b.next && !b.next.mapped ? b.next.sizeBytes : 0);
        while (found.segment.expandable && i + 1 < items.length && grown(items[i + 1] as Block) < grown(found)) found = items[++i] as Block;
      } else {
        do i++;
        while (i < items.length && (items[i] as Block).segment.expandable);
        if (i >= items.length) return null;
        found = items[i] as Block;
      }
    }
    const maxSplit = this.settings.maxSplitSizeBytes;
    if (size < maxSplit && found.sizeBytes >= maxSplit) return null;
    if (size >= maxSplit && found.sizeBytes >= size + this.nonSplitRoundingBytes) return null;
    list.removeAt(i);
    return found;
  }

  private shouldSplit(block: Block, size: number): boolean {
    const remaining = block.sizeBytes - size;
    if (block.pool.isSmall || this.settings.expandableSegments) return remaining >= MIN_BLOCK_BYTES;
    return size < this.settings.maxSplitSizeBytes && remaining > SMALL_SIZE_BYTES;
  }

  /** `alloc_block`: a new segment (or newly mapped pages) for the request, out of the pool's free list. */
  private newBlock(pool: Pool, stream: number, size: number, segmentBytes: number, isRetry: boolean): Block | null {
    if (isRetry) this.numAllocRetries++;
    if (this.settings.expandableSegments) return mapForRequest(this, pool, stream, size);
    if (!this.reserve(segmentBytes)) return null;
    const address = this.segmentAddressFor(segmentBytes, false);
    this.segmentEvent('segment_alloc', address, segmentBytes);
    return new Block(address, segmentBytes, stream, pool, { address, sizeBytes: segmentBytes, expandable: null });
  }

  /** @internal `try_merge_blocks`: absorbs a free neighbour with the same mapping into `dst`. */
  merge(dst: Block, src: Block | null, pool: Pool): void {
    if (!src || src.allocated || dst.mapped !== src.mapped) return;
    if (src.mapped) pool.freeOf(src.stream).remove(src);
    else pool.unmappedOf(src.stream).remove(src);
    if (dst.prev === src) {
      dst.address = src.address;
      dst.prev = src.prev;
      if (dst.prev) dst.prev.next = dst;
    } else {
      dst.next = src.next;
      if (dst.next) dst.next.prev = dst;
    }
    dst.sizeBytes += src.sizeBytes;
  }

  /** @internal `release_block`: cudaFree of a whole cached segment. */
  release(block: Block): void {
    block.pool.freeOf(block.stream).remove(block);
    this.unreserve(block.sizeBytes);
    this.segmentEvent('segment_free', block.address, block.sizeBytes);
  }
}
