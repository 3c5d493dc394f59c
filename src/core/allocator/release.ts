/**
 * Giving cached memory back: `release_available_cached_blocks` (oversize segments, with max_split_size set),
 * `release_blocks` (every unsplit cached segment; free pages of expandable segments) and
 * `garbage_collect_cached_blocks` of c10/cuda/CUDACachingAllocator.cpp.
 */
import type { Block, Pool } from './blocks.js';
import { releaseExpandable } from './expandable.js';
import type { AllocatorSim } from './sim.js';

/** `release_available_cached_blocks`: with max_split_size set, frees oversize cached segments for the request. */
export function releaseOversize(sim: AllocatorSim, pool: Pool, stream: number, size: number): boolean {
  const maxSplit = sim.settings.maxSplitSizeBytes;
  if (maxSplit === Infinity) return false;
  const list = pool.free.get(stream);
  if (!list) return false;
  const key = Math.max(size, maxSplit);
  let i = list.lowerBound(key, -Infinity);
  const single = list.items[i];
  // One cached segment large enough: free it. Expandable blocks are never freed here (newer releases skip
  // them explicitly; freeing one would cut a live expandable segment apart).
  if (single && !single.segment.expandable) {
    sim.release(single);
    return true;
  }
  let released = 0;
  for (i = Math.min(i, list.items.length) - 1; i >= 0 && released < key; i--) {
    const b = list.items[i] as Block;
    if (b.sizeBytes < maxSplit) break;
    if (b.segment.expandable) continue;
    released += b.sizeBytes;
    sim.release(b);
  }
  return released >= key;
}

/** `release_blocks`: frees unsplit cached segments and unmaps the free pages of expandable ones. */
export function releasePool(sim: AllocatorSim, pool: Pool): void {
  const toUnmap: Block[] = [];
  for (const b of pool.freeInOrder()) {
    if (b.segment.expandable) toUnmap.push(b);
    else if (!b.prev && !b.next) sim.release(b);
  }
  for (const b of toUnmap) releaseExpandable(sim, b);
}

/** `garbage_collect_cached_blocks`: frees the oldest unsplit large cached segments above the threshold. */
export function collectGarbage(sim: AllocatorSim, fractionBytes: number): void {
  const threshold = Math.floor(sim.settings.garbageCollectionThreshold * fractionBytes);
  if (sim.reservedBytes <= threshold) return;
  const target = sim.reservedBytes - threshold;
  const pool = sim.large;
  const age = (b: Block): number => pool.freeSearches - b.gcBase;
  let totalAge = 0;
  let count = 0;
  for (const b of pool.freeInOrder()) {
    if (!b.isSplit() && !b.segment.expandable) {
      totalAge += age(b);
      count++;
    }
  }
  let reclaimed = 0;
  let freed = true;
  while (reclaimed < target && freed && count > 0) {
    const ageThreshold = totalAge / count;
    freed = false;
    for (const b of pool.freeInOrder()) {
      if (!b.isSplit() && !b.segment.expandable && age(b) >= ageThreshold) {
        freed = true;
        reclaimed += b.sizeBytes;
        totalAge -= age(b);
        count--;
        sim.release(b);
      }
    }
  }
}
