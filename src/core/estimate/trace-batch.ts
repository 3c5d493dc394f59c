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

/**
 * Where the parabola through `lo`, `hi` and a third probe crosses the budget, rounded down, when it crosses
 * inside the bracket (lo + 1 when it crosses just above lo); null otherwise. Memory that grows with the square of the size (attention scores over
 * the sequence) is then hit in one probe, where the straight line through lo and hi keeps landing short.
 */
function quadraticCrossing(lo: BatchProbe, hi: BatchProbe, probes: readonly BatchProbe[], budgetBytes: number): number | null {
  // The first two probes (sizes 1 and 2) differ by little more than allocator rounding: a curvature read from
  // them is noise, so the parabola waits until the lower end of the bracket has moved past them.
  if (lo === probes[0] || lo === probes[1]) return null;
  const third = probes.filter((p) => p !== lo && p !== hi).sort((a, b) => Math.abs(a.batch - lo.batch) - Math.abs(b.batch - lo.batch))[0];
  if (!third) return null;
  const [x0, x1, x2] = [third.batch, lo.batch, hi.batch];
  const [y0, y1, y2] = [third.deviceBytes, lo.deviceBytes, hi.deviceBytes];
  // Newton's divided differences: y = y0 + d01 (x - x0) + c (x - x0)(x - x1).
  const d01 = (y1 - y0) / (x1 - x0);
  const c = ((y2 - y1) / (x2 - x1) - d01) / (x2 - x0);
  if (!Number.isFinite(c) || c <= 0) return null;
  // c x² + b x + k = 0 with the budget moved over.
  const b = d01 - c * (x0 + x1);
  const k = y0 - d01 * x0 + c * x0 * x1 - budgetBytes;
  const disc = b * b - 4 * c * k;
  if (disc < 0) return null;
  const x = Math.floor((-b + Math.sqrt(disc)) / (2 * c));
  // Landing on lo itself says lo is the limit: the size above it proves or refutes that.
  if (x === lo.batch && lo.batch + 1 < hi.batch) return lo.batch + 1;
  return x > lo.batch && x < hi.batch ? x : null;
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
  let crossing: number | null;
  while (probes.length < maxProbes && (hi === null || hi.batch - lo.batch > 1)) {
    let next: number;
    if (probes.length === 1) next = 2;
    else if (hi !== null && hi.deviceBytes > lo.deviceBytes && (crossing = quadraticCrossing(lo, hi, probes, budgetBytes)) !== null) next = crossing;
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

/** Sequence lengths are searched in multiples of this (tensor-core friendly lengths, and 7 probes settle it). */
export const SEQ_MULTIPLE = 64;

export interface SeqProbe {
  seq: number;
  deviceBytes: number;
  fits: boolean;
}

export interface SeqSearchResult {
  /** Largest multiple of `multiple` seen to fit (0: not even `multiple`). */
  maxSeq: number;
  /** True when maxSeq + multiple was probed and does not fit (or maxSeq is 0). */
  exact: boolean;
  multiple: number;
  /** Extra bytes per token of sequence, from the two longest fitting probes (null when memory did not grow). */
  bytesPerToken: number | null;
  probes: SeqProbe[];
}

/**
 * Searches the longest sequence (a multiple of `multiple`) whose `measure(seq)` stays within `budgetBytes`,
 * by the batch search over the number of multiples: memory grows linearly with the sequence where attention
 * keeps no score matrix and quadratically where it does, and the search falls back to bisection where
 * interpolation keeps landing on one side.
 */
export async function searchMaxSeq(measure: (seq: number) => Promise<number>, budgetBytes: number, maxProbes = 5, multiple = SEQ_MULTIPLE, maxSeq = 1 << 22): Promise<SeqSearchResult> {
  const r = await searchMaxBatch((units) => measure(units * multiple), budgetBytes, maxProbes, Math.max(1, Math.floor(maxSeq / multiple)));
  return {
    maxSeq: r.maxBatch * multiple,
    exact: r.exact,
    multiple,
    bytesPerToken: r.bytesPerSample === null ? null : Math.round(r.bytesPerSample / multiple),
    probes: r.probes.map((p) => ({ seq: p.batch * multiple, deviceBytes: p.deviceBytes, fits: p.fits })),
  };
}
