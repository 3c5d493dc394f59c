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
  let sameSide = 0;
  while (probes.length < maxProbes && (hi === null || hi.batch - lo.batch > 1)) {
    let next: number;
    if (probes.length === 1) next = 2;
    else if (hi !== null && (sameSide >= 2 || hi.deviceBytes <= lo.deviceBytes)) next = Math.floor((lo.batch + hi.batch) / 2);
    else if (hi !== null) next = lo.batch + Math.floor(((budgetBytes - lo.deviceBytes) * (hi.batch - lo.batch)) / (hi.deviceBytes - lo.deviceBytes));
    else if (slope === null || slope <= 0) next = lo.batch * 2;
    else next = lo.batch + Math.max(1, Math.floor((budgetBytes - lo.deviceBytes) / slope));
    if (hi !== null) next = Math.min(Math.max(next, lo.batch + 1), hi.batch - 1);
    next = Math.min(next, maxBatch);
    if (next <= lo.batch) break;
    const p = await probe(next);
    const grew = (p.deviceBytes - lo.deviceBytes) / (p.batch - lo.batch);
    if (grew > 0) slope = grew;
    // Interpolation that keeps landing on one side of the limit (a curve that bends) falls back to bisection.
    const side = p.fits ? 1 : -1;
    sameSide = probes.length > 2 && side === (probes[probes.length - 2]!.fits ? 1 : -1) ? sameSide + 1 : 1;
    if (p.fits) lo = p;
    else hi = p;
  }
  const fitting = probes.filter((p) => p.fits).sort((a, b) => a.batch - b.batch);
  const [a, b] = fitting.slice(-2);
  const perSample = a && b && b.deviceBytes > a.deviceBytes ? Math.round((b.deviceBytes - a.deviceBytes) / (b.batch - a.batch)) : null;
  return { maxBatch: lo.batch, exact: hi !== null && hi.batch === lo.batch + 1, bytesPerSample: perSample, probes };
}
