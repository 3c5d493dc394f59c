/**
 * GPU activity during a supervised run: per GPU the device utilization and the run's own SM utilization
 * (the sum of its processes' per-process SM %, from nvmlDeviceGetProcessUtilization) at each sample, kept as
 * a time series in the run record, and the under-used finding drawn from it.
 */
import { THRESHOLDS } from '../diagnose/thresholds.js';
import { formatBytes, formatDuration, formatPercent } from '../units.js';

/** One sample of one GPU: device utilization %, the run's SM %, both null where the driver did not say. */
export interface UtilPoint {
  gpuPct: number | null;
  treeSmPct: number | null;
}

/** The series of one GPU the run used, with its means and the memory it had. */
export interface GpuUtilization {
  uuid: string;
  index: number;
  totalBytes: number | null;
  /** Means over the samples that reported each figure (null when none did). */
  meanGpuPct: number | null;
  meanTreeSmPct: number | null;
  /** Samples with a device utilization figure. */
  samples: number;
  spanMs: number;
  /** At most 300 points, each the mean of its bucket of samples. */
  series: Array<{ tMs: number } & UtilPoint>;
}

/** A finding of the run's report: what, the numbers, and the fix. */
export interface RunFinding {
  id: 'under-used-gpu' | 'input-bound' | 'batch-override' | 'blocking-copy' | 'sync-calls' | 'ranks-share-gpu' | 'rank-imbalance' | 'rank-oom-first' | 'nccl-buffers' | 'oom-forecast';
  /** The GPU concerned; null for a finding about a process (step timing). */
  gpuIndex: number | null;
  title: string;
  fix: string;
  details: Record<string, number | boolean | null>;
}

/** An under-used finding needs this much of the run observed: model loading alone reads as idle. */
export const UNDER_USED_MIN_SPAN_MS = 5000;

function meanOf(xs: ReadonlyArray<number | null>): number | null {
  const known = xs.filter((x): x is number => x !== null);
  return known.length === 0 ? null : known.reduce((s, x) => s + x, 0) / known.length;
}

/** Reduces a series to at most `points` entries, each the mean of a bucket of consecutive samples. */
export function downsampleMean(ticks: ReadonlyArray<{ tMs: number } & UtilPoint>, points: number): Array<{ tMs: number } & UtilPoint> {
  if (ticks.length <= points) return ticks.map((t) => ({ ...t }));
  const out: Array<{ tMs: number } & UtilPoint> = [];
  const size = ticks.length / points;
  for (let i = 0; i < points; i++) {
    const bucket = ticks.slice(Math.floor(i * size), Math.floor((i + 1) * size));
    if (bucket.length === 0) continue;
    out.push({ tMs: (bucket[0] as { tMs: number }).tMs, gpuPct: meanOf(bucket.map((t) => t.gpuPct)), treeSmPct: meanOf(bucket.map((t) => t.treeSmPct)) });
  }
  return out;
}

/** Summarises one GPU's raw series (all samples, in order). */
export function summariseUtilization(uuid: string, index: number, totalBytes: number | null, ticks: ReadonlyArray<{ tMs: number } & UtilPoint>, points = 300): GpuUtilization {
  const withGpu = ticks.filter((t) => t.gpuPct !== null);
  return {
    uuid, index, totalBytes,
    meanGpuPct: meanOf(ticks.map((t) => t.gpuPct)),
    meanTreeSmPct: meanOf(ticks.map((t) => t.treeSmPct)),
    samples: withGpu.length,
    spanMs: withGpu.length > 1 ? (withGpu[withGpu.length - 1] as { tMs: number }).tMs - (withGpu[0] as { tMs: number }).tMs : 0,
    series: downsampleMean(ticks, points),
  };
}

/**
 * The under-used GPU finding: mean device utilization at or below the diagnose threshold over at least
 * UNDER_USED_MIN_SPAN_MS, whatever the memory; when the run's peak left most of the GPU free, the fix says
 * how many bytes a larger batch could take.
 */
export function underUsedFinding(u: GpuUtilization, peakBytes: number): RunFinding | null {
  if (u.meanGpuPct === null || u.samples < THRESHOLDS.minUtilSamples || u.spanMs < UNDER_USED_MIN_SPAN_MS) return null;
  if (u.meanGpuPct > THRESHOLDS.lowUtilPct) return null;
  const usedFraction = u.totalBytes ? peakBytes / u.totalBytes : null;
  const roomy = usedFraction !== null && usedFraction < THRESHOLDS.highMemoryFraction && u.totalBytes !== null;
  const sm = u.meanTreeSmPct === null ? '' : ` (the run's own SM ${formatPercent(u.meanTreeSmPct)})`;
  const share = usedFraction === null ? '' : ` (${formatPercent(usedFraction * 100)} of ${formatBytes(u.totalBytes)})`;
  const room = roomy
    ? `; the peak left ${formatBytes((u.totalBytes as number) - peakBytes)} free, so a larger batch fits: find the largest with \`gpumem fit -- CMD {batch}\` or \`gpumem estimate\``
    : '';
  return {
    id: 'under-used-gpu',
    gpuIndex: u.index,
    title: `GPU ${u.index} under-used: ${formatPercent(u.meanGpuPct)} mean utilization${sm} over ${formatDuration(u.spanMs)}, peak ${formatBytes(peakBytes)}${share}`,
    fix: 'the loop waits for input: raise DataLoader num_workers, pin_memory=True, persistent_workers=True, prefetch_factor, ' +
      `move decoding out of __getitem__${room}`,
    details: { meanGpuPct: u.meanGpuPct, meanTreeSmPct: u.meanTreeSmPct, samples: u.samples, spanMs: u.spanMs, peakBytes, usedFraction, largerBatchFits: roomy },
  };
}
