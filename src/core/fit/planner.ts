/**
 * The fit planner: find the largest batch that fits with as few real runs as possible, and never report a
 * batch that was not run. Two probe runs give a line memory = fixed + perSample × batch; the line predicts
 * the largest batch under the target; one run verifies it. When the verification disagrees with the line
 * (memory is not linear: cuDNN algorithm choice, allocator segments, OOM below the reading), a third point
 * refits the line near the target and bisection closes the remaining gap (reference §5, §7.5: predict first,
 * then verify in fresh processes, as DeepSpeed's autotuner and OTX do).
 */
import { GpumemError } from '../errors.js';

export interface Measurement {
  /** The run finished its steps. */
  ok: boolean;
  /** Peak GPU memory of the run's process tree; null when it could not be read. */
  peakBytes: number | null;
  /** The run died of CUDA out-of-memory. */
  oom: boolean;
}

export type Measure = (batch: number) => Promise<Measurement>;

export type RunReason = 'probe' | 'verify' | 'refit' | 'bisect';

export interface FitRun {
  batch: number;
  reason: RunReason;
  ok: boolean;
  oom: boolean;
  peakBytes: number | null;
  /** What the line predicted for this batch when it was chosen (null for probes). */
  predictedBytes: number | null;
  /** True when the run finished and its peak is within the target. */
  fits: boolean;
}

export interface FitLine {
  fixedBytes: number;
  perSampleBytes: number;
}

export interface FitOptions {
  /** Bytes a run may peak at: target fill × free memory at start. */
  targetBytes: number;
  /** The two probe batch sizes (ascending, distinct). */
  probes: [number, number];
  /** Largest batch ever tried. */
  maxBatch: number;
  /** Stop after this many runs in total. */
  maxRuns: number;
  /** Relative error between predicted and measured peak above which the line is not trusted. */
  tolerance: number;
  /** Stop bisecting when the gap (hi − lo) is at most this share of hi. */
  resolution: number;
}

export const DEFAULT_FIT_OPTIONS: Omit<FitOptions, 'targetBytes'> = {
  probes: [2, 4],
  maxBatch: 65536,
  maxRuns: 10,
  tolerance: 0.03,
  resolution: 0.02,
};

export interface FitResult {
  /** Largest batch that ran and stayed within the target; null when not even the smallest probe did. */
  batch: number | null;
  /** Peak measured at `batch`. */
  peakBytes: number | null;
  targetBytes: number;
  /** The line fitted through every run that finished (least squares). */
  line: FitLine | null;
  /** The first prediction, and how far the verification run was from it (percent of measured). */
  predictedBatch: number | null;
  predictionErrorPct: number | null;
  /** Smallest batch known not to fit (OOM or over target); null if none was seen. */
  firstFailingBatch: number | null;
  runs: FitRun[];
  /** Why the search stopped. */
  stopReason: string;
}

/** Least-squares line through (batch, peak) points; null with fewer than two distinct batches. */
export function fitLine(points: ReadonlyArray<{ batch: number; peakBytes: number }>): FitLine | null {
  const n = points.length;
  if (n < 2) return null;
  const mx = points.reduce((a, p) => a + p.batch, 0) / n;
  const my = points.reduce((a, p) => a + p.peakBytes, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.batch - mx) ** 2, 0);
  if (sxx === 0) return null;
  const sxy = points.reduce((a, p) => a + (p.batch - mx) * (p.peakBytes - my), 0);
  const perSampleBytes = sxy / sxx;
  return { fixedBytes: Math.round(my - perSampleBytes * mx), perSampleBytes: Math.round(perSampleBytes) };
}

/** Largest batch the line puts at or under `targetBytes`, clamped to [1, maxBatch]. */
export function predictBatch(line: FitLine, targetBytes: number, maxBatch: number): number {
  if (line.perSampleBytes <= 0) return maxBatch;
  return Math.max(1, Math.min(maxBatch, Math.floor((targetBytes - line.fixedBytes) / line.perSampleBytes)));
}

/**
 * Runs the search. `measure` runs the real command (or a simulation) at a batch size. Throws a GpumemError
 * when a run fails for a reason other than OOM or reports no memory, because no line can be fitted then.
 */
export async function planFit(measure: Measure, options: FitOptions): Promise<FitResult> {
  const o = options;
  const runs: FitRun[] = [];
  let lo: number | null = null; // largest batch that fit
  let hi: number | null = null; // smallest batch that did not
  const run = async (batch: number, reason: RunReason, predictedBytes: number | null): Promise<FitRun> => {
    const m = await measure(batch);
    if (!m.ok && !m.oom) {
      throw new GpumemError('CHILD_FAILED', `the command failed at batch ${batch} without running out of memory`, {
        hint: 'run it once by hand with that batch; fit needs a command that finishes its steps',
        details: { batch },
      });
    }
    if (m.ok && m.peakBytes === null) {
      throw new GpumemError('FAILED', `no GPU memory reading for the run at batch ${batch}`, {
        hint: 'the GPU source reports no per-process memory here; try --source smi, or run as the GPU processes\' user',
      });
    }
    const fits = m.ok && (m.peakBytes as number) <= o.targetBytes;
    const r: FitRun = { batch, reason, ok: m.ok, oom: m.oom, peakBytes: m.peakBytes, predictedBytes, fits };
    runs.push(r);
    if (fits) lo = Math.max(lo ?? 0, batch);
    else hi = Math.min(hi ?? Infinity, batch);
    return r;
  };
  const finished = (): Array<{ batch: number; peakBytes: number }> =>
    runs.filter((r) => r.ok && r.peakBytes !== null).map((r) => ({ batch: r.batch, peakBytes: r.peakBytes as number }));
  const result = (stopReason: string, predictedBatch: number | null, errorPct: number | null): FitResult => {
    const best = lo === null ? null : runs.find((r) => r.batch === lo && r.fits) ?? null;
    return {
      batch: lo,
      peakBytes: best ? best.peakBytes : null,
      targetBytes: o.targetBytes,
      line: fitLine(finished()),
      predictedBatch,
      predictionErrorPct: errorPct,
      firstFailingBatch: hi,
      runs,
      stopReason,
    };
  };

  // Probes: never above --max-batch (with a limit of 1 there is only batch 1 to run), then back off by
  // halving while the small probe itself does not fit.
  let b2 = Math.min(o.probes[1], o.maxBatch);
  let b1 = Math.min(o.probes[0], Math.max(1, b2 - 1));
  if (b2 === 1) {
    const only = await run(1, 'probe', null);
    return result(only.fits ? 'batch 1 is the largest allowed (--max-batch 1)' : 'even batch 1 does not fit the target', null, null);
  }
  for (;;) {
    const r = await run(b1, 'probe', null);
    if (r.fits) break;
    if (b1 === 1) return result('even batch 1 does not fit the target', null, null);
    b2 = b1;
    b1 = Math.max(1, Math.floor(b1 / 2));
    if (runs.length >= o.maxRuns) return result('run limit reached while backing off', null, null);
  }
  const r2 = await run(b2, 'probe', null);
  if (!r2.fits) return bisect(b1, b2, 'the second probe does not fit; bisecting between the probes', null, null);

  const line = fitLine(finished()) as FitLine;
  const predicted = predictBatch(line, o.targetBytes, o.maxBatch);
  if (predicted <= b2) return result('the probes already reach the target', predicted, null);
  const predictedBytes = line.fixedBytes + line.perSampleBytes * predicted;
  const v = await run(predicted, 'verify', predictedBytes);
  const errorPct = v.peakBytes !== null && v.ok ? ((predictedBytes - v.peakBytes) / v.peakBytes) * 100 : null;
  const agrees = errorPct !== null && Math.abs(errorPct) <= o.tolerance * 100;
  if (v.fits && (agrees || predicted >= o.maxBatch)) return result('the prediction was verified', predicted, errorPct);

  // Disagreement: refit through the points nearest the target and try once more, then bisect.
  const near = finished().sort((a, b) => b.batch - a.batch).slice(0, 2);
  const refit = fitLine(near);
  if (refit && runs.length < o.maxRuns) {
    const third = predictBatch(refit, o.targetBytes, o.maxBatch);
    const lower = lo ?? 0;
    const upper = hi ?? o.maxBatch + 1;
    if (third > lower && third < upper) await run(third, 'refit', refit.fixedBytes + refit.perSampleBytes * third);
  }
  return bisect(lo ?? 1, hi ?? o.maxBatch, 'bisected after the line disagreed with the verification', predicted, errorPct);

  async function bisect(_lo: number, _hi: number, reason: string, predictedBatch: number | null, errorPct: number | null): Promise<FitResult> {
    while (lo !== null && hi !== null && hi - lo > Math.max(1, Math.floor(o.resolution * hi)) && runs.length < o.maxRuns) {
      await run(Math.floor((lo + hi) / 2), 'bisect', null);
    }
    if (lo !== null && hi === null && runs.length < o.maxRuns && lo < o.maxBatch) {
      // Everything fitted and the line still undershoots: nothing above was tried; stop at the verified one.
      return result('verified; larger batches not tried (line disagreed)', predictedBatch, errorPct);
    }
    return result(runs.length >= o.maxRuns ? `${reason}; run limit reached` : reason, predictedBatch, errorPct);
  }
}
