/**
 * The allocator's bookkeeping: blocks linked to their neighbours within a segment, and the free lists of a
 * pool ordered as `BlockComparatorSize` orders them (stream, then size, then address) and the unmapped
 * lists of expandable segments ordered as `BlockComparatorAddress` (stream, then address). A free list is
 * one sorted array per stream: the comparator puts the stream first and every search stays inside one.
 */

/** An expandable segment: reserved address space mapped in pages of `pageBytes`. */
export interface ExpandableSegment {
  address: number;
  sizeBytes: number;
  pageBytes: number;
  stream: number;
}

/** A cudaMalloc'ed segment (null `expandable`) or the expandable segment a block lies in. */
export interface SegmentRef {
  address: number;
  sizeBytes: number;
  expandable: ExpandableSegment | null;
}

export class Block {
  prev: Block | null = null;
  next: Block | null = null;
  allocated = false;
  /** False only for the unmapped address space of an expandable segment. */
  mapped = true;
  requestedBytes = 0;
  /** The pool's free-list search count when the block became free (the garbage collector's age). */
  gcBase = 0;
  /** Allocated but `free_requested` already seen: counted as free by the statistics, not yet reusable. */
  freeRequested = false;
  constructor(
    public address: number,
    public sizeBytes: number,
    readonly stream: number,
    readonly pool: Pool,
    readonly segment: SegmentRef,
  ) {}

  isSplit(): boolean {
    return this.prev !== null || this.next !== null;
  }
}

/** Blocks of one stream, sorted by (size, address) or by address alone. */
export class SortedBlocks {
  readonly items: Block[] = [];
  constructor(private readonly bySize: boolean) {}

  /** Index of the first block not below (size, address); size is ignored when sorted by address. */
  lowerBound(sizeBytes: number, address: number): number {
    const items = this.items;
    let lo = 0;
    let hi = items.length;
    if (this.bySize) {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const b = items[mid] as Block;
        if (b.sizeBytes < sizeBytes || (b.sizeBytes === sizeBytes && b.address < address)) lo = mid + 1;
        else hi = mid;
      }
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((items[mid] as Block).address < address) lo = mid + 1;
        else hi = mid;
      }
    }
    return lo;
  }

  // Shifting by hand: splice allocates a result array on every call and dominated the profile.
  insert(block: Block): void {
    const items = this.items;
    const at = this.lowerBound(block.sizeBytes, block.address);
    items.push(block);
    for (let j = items.length - 1; j > at; j--) items[j] = items[j - 1] as Block;
    items[at] = block;
  }

  remove(block: Block): void {
    const i = this.lowerBound(block.sizeBytes, block.address);
    if (this.items[i] !== block) throw new Error('allocator simulation: block missing from its free list');
    this.removeAt(i);
  }

  removeAt(i: number): void {
    const items = this.items;
    for (let j = i; j < items.length - 1; j++) items[j] = items[j + 1] as Block;
    items.pop();
  }
}

/** A block pool (`BlockPool`): free mapped blocks and unmapped expandable address space, per stream. */
export class Pool {
  readonly free = new Map<number, SortedBlocks>();
  readonly unmapped = new Map<number, SortedBlocks>();
  /** `get_free_blocks_call_count`, counted only while garbage collection is on. */
  freeSearches = 0;
  constructor(readonly isSmall: boolean) {}

  freeOf(stream: number): SortedBlocks {
    let list = this.free.get(stream);
    if (!list) this.free.set(stream, (list = new SortedBlocks(true)));
    return list;
  }

  unmappedOf(stream: number): SortedBlocks {
    let list = this.unmapped.get(stream);
    if (!list) this.unmapped.set(stream, (list = new SortedBlocks(false)));
    return list;
  }

  /** `insert_into_blocks`: a free block enters the list with its age reset. */
  insertFree(block: Block): void {
    block.gcBase = this.freeSearches;
    this.freeOf(block.stream).insert(block);
  }

  /** Every free mapped block in comparator order: streams ascending, then size, then address. */
  freeInOrder(): Block[] {
    const streams = [...this.free.keys()].sort((a, b) => a - b);
    return streams.flatMap((s) => [...(this.free.get(s) as SortedBlocks).items]);
  }
}
