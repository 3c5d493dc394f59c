/**
 * Fragmentation: memory PyTorch holds in partly used segments that it cannot hand out for this request.
 * When that amount alone could have served the request (or is large next to what is allocated), changing
 * the allocator's segment policy fixes the OOM without shrinking anything.
 */
import { allocConfVariable, b, expandableOn, pct, unallocatedOf, MiB, type CauseRule } from './helpers.js';

export const fragmentation: CauseRule = (event, context) => {
  const unallocated = unallocatedOf(event);
  const req = event.requestedBytes;
  const allocated = event.allocatedByPytorchBytes;
  if (!unallocated || req === null) return null;
  const covers = unallocated.bytes >= req;
  // What PyTorch's hint says: with expandable segments the cached pieces and the free memory can serve the request together.
  const free = event.freeBytes;
  const withFree = free !== null && unallocated.bytes + free >= req;
  // Under a memory fraction that the request would cross, growing is not allowed: the limit is the cause then.
  const capped = event.allowedBytes !== null && (allocated ?? 0n) + req > event.allowedBytes;
  const large = allocated !== null && allocated > 0n && unallocated.bytes * 4n >= allocated && unallocated.bytes >= 256n * MiB;
  if (!covers && !large && !withFree) return null;
  const already = expandableOn(context);
  const variable = allocConfVariable(event);
  // \u2264 is '≤', escaped because the command's bundle is ASCII (scripts/bundle-cli.mjs).
  const modern = event.era === null || !/^1\.|^\u22640/.test(event.era.version);
  const how = unallocated.derived
    ? `reserved in total ${b(event.reservedTotalBytes)} − allocated ${b(allocated)} = ${b(unallocated.bytes)} (±10 MiB from rounding)`
    : `${b(unallocated.bytes)} reserved by PyTorch but unallocated`;
  const detail =
    `${how}, ${covers ? `enough for the ${b(req)} request on its own` : withFree ? `which with the ${b(free)} free covers the ${b(req)} request` : `${pct(unallocated.bytes, allocated ?? 1n)} of the ${b(allocated)} allocated`}: ` +
    'free memory is split into pieces too small for the request.';
  let fix: string;
  if (event.family === 'pytorch-xpu') {
    fix = `Call torch.xpu.empty_cache() between phases so the ${b(unallocated.bytes)} of cached pieces go back to the device, and keep tensor shapes fixed (pad variable-length batches).`;
  } else if (already) {
    fix = `expandable_segments is already on (${context.allocConf ?? ''}); keep shapes fixed (pad variable-length batches) and call torch.cuda.empty_cache() between train and eval to return the ${b(unallocated.bytes)}.`;
  } else if (modern) {
    fix = `Set ${variable}=expandable_segments:True (merge with any value you already use) so the ${b(unallocated.bytes)} can grow into one segment; or keep shapes fixed (pad variable-length batches).`;
  } else {
    fix = `This PyTorch predates expandable segments: set ${variable}=max_split_size_mb:128 so large blocks are not split, or upgrade to PyTorch ≥ 2.1 and set ${variable}=expandable_segments:True.`;
  }
  return {
    id: 'fragmentation',
    // Ranked first (above other processes and a full device) when the memory to serve the request is there.
    score: already ? (covers ? 60 : 55) : (covers || withFree) && !capped ? 92 : covers ? 85 : 55,
    title: covers
      ? 'Fragmentation: PyTorch already holds enough free memory, but in pieces'
      : withFree ? 'Fragmentation: free plus cached memory covers the request, but not in one piece' : 'Fragmentation: a large share of reserved memory is unusable',
    evidence: {
      reservedUnallocatedBytes: unallocated.bytes,
      derived: unallocated.derived,
      requestedBytes: req,
      allocatedByPytorchBytes: allocated,
      expandableSegmentsOn: already,
      freeBytes: free,
      freePlusUnallocatedCovers: withFree,
    },
    detail,
    fix,
  };
};
