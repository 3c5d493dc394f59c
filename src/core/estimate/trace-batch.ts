/**
 * The largest batch that fits, found with traced steps: each probe traces the program at one batch and
 * replays it through the allocator simulator, so the figure includes rounding and segment slack at that
 * batch. Memory grows about linearly with the batch, so after batches 1 and 2 the next probe is the
 * extrapolated limit, then the bracket is narrowed by interpolation; a handful of probes settles it.
 */

export interface BatchProbe {
  batch: number;
  deviceBytes: number;
  fits: boolean;
}

export interface BatchSearchResult {
  /** Largest batch seen to fit (0: not even batch 1). */
  maxBatch: number;
  /** True when maxBatch + 1 was probed and does not fit (or maxBatch is 0). */
  exact: boolean;
  /** Extra bytes per sample, from the two largest fitting probes (null when memory did not grow). */
  bytesPerSample: number | null;
  probes: BatchProbe[];
}

/** Searches the largest batch whose `measure(batch)` stays within `budgetBytes`, with at most `maxProbes` probes. */
export async function searchMaxBatch(measure: (batch: number) => Promise<number>, budgetBytes: number, maxProbes = 5, maxBatch = 1 << 20): Promise<BatchSearchResult> {
  const probes: BatchProbe[] = [];
  const probe = async (batch: number): Promise<BatchProbe> => {
    const deviceBytes = await measure(batch);
    const p = { batch, deviceBytes, fits: deviceBytes <= budgetBytes };
    probes.push(p);
    return p;
  };
  const one = await probe(1);
  if (!one.fits) return { maxBatch: 0, exact: true, bytesPerSample: null, probes };
  let lo = one;
  let hi: BatchProbe | null = null;
  let slope: number | null = null;
  while (probes.length < maxProbes && (hi === null || hi.batch - lo.batch > 1)) {
    let next: number;
    if (probes.length === 1) next = 2;
    else if (slope === null || slope <= 0) next = hi ? Math.floor((lo.batch + hi.batch) / 2) : lo.batch * 2;
    else next = lo.batch + Math.max(1, Math.floor((budgetBytes - lo.deviceBytes) / slope));
    if (hi !== null) next = Math.min(Math.max(next, lo.batch + 1), hi.batch - 1);
    next = Math.min(next, maxBatch);
    if (next <= lo.batch) break;
    const p = await probe(next);
    const grew = (p.deviceBytes - lo.deviceBytes) / (p.batch - lo.batch);
    if (grew > 0) slope = grew;
    if (p.fits) lo = p;
    else hi = p;
    // Right at the extrapolated limit: check the batch above it once, to know the answer is exact.
    if (p.fits && hi === null && slope !== null && lo.deviceBytes + slope > budgetBytes && probes.length < maxProbes) {
      const above = await probe(lo.batch + 1);
      if (above.fits) lo = above;
      else hi = above;
    }
  }
  const fitting = probes.filter((p) => p.fits).sort((a, b) => a.batch - b.batch);
  const [a, b] = fitting.slice(-2);
  const perSample = a && b && b.deviceBytes > a.deviceBytes ? Math.round((b.deviceBytes - a.deviceBytes) / (b.batch - a.batch)) : null;
  return { maxBatch: lo.batch, exact: hi !== null && hi.batch === lo.batch + 1, bytesPerSample: perSample, probes };
}
