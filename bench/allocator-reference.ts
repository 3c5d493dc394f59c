/**
 * A straightforward reference allocator for the speed comparison: the same rules as src/core/allocator for the
 * default settings (pools, rounding, best fit by stream/size/address, splitting, coalescing), written the
 * obvious way: one array of every block, scanned linearly for each request and each free.
 */
import { allocationSize, MIN_BLOCK_BYTES, roundSize, SMALL_SIZE_BYTES, defaultAllocatorSettings } from '../src/core/allocator/index.js';

interface RefBlock { address: number; size: number; segment: number; allocated: boolean; small: boolean; stream: number }

export class ReferenceAllocator {
  private blocks: RefBlock[] = [];
  private readonly live = new Map<number, RefBlock>();
  private nextAddress = 2 ** 40;
  private nextSegment = 0;
  reservedBytes = 0;
  private readonly settings = defaultAllocatorSettings();

  alloc(id: number, requested: number, stream = 0): void {
    const size = roundSize(requested, this.settings);
    const small = size <= SMALL_SIZE_BYTES;
    let best: RefBlock | null = null;
    for (const b of this.blocks) {
      if (b.allocated || b.small !== small || b.stream !== stream || b.size < size) continue;
      if (!best || b.size < best.size || (b.size === best.size && b.address < best.address)) best = b;
    }
    if (!best) {
      const segBytes = allocationSize(size);
      best = { address: this.nextAddress, size: segBytes, segment: this.nextSegment++, allocated: false, small, stream };
      this.nextAddress += segBytes + 2 ** 21;
      this.reservedBytes += segBytes;
      this.blocks.push(best);
    }
    const rest = best.size - size;
    if (small ? rest >= MIN_BLOCK_BYTES : rest > SMALL_SIZE_BYTES) {
      this.blocks.push({ ...best, address: best.address + size, size: rest });
      best.size = size;
    }
    best.allocated = true;
    this.live.set(id, best);
  }

  free(id: number): void {
    const b = this.live.get(id);
    if (!b) return;
    this.live.delete(id);
    b.allocated = false;
    for (const n of [...this.blocks]) {
      if (n === b || n.allocated || n.segment !== b.segment) continue;
      if (n.address + n.size === b.address) {
        b.address = n.address;
        b.size += n.size;
        this.blocks.splice(this.blocks.indexOf(n), 1);
      } else if (b.address + b.size === n.address) {
        b.size += n.size;
        this.blocks.splice(this.blocks.indexOf(n), 1);
      }
    }
  }
}
