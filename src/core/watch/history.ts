/** Series over the live sampler's history: a device's used memory, a process's memory, and its trend. */
import type { Device, GpuProcess, Sample } from '../types.js';
import { rowOnGpu } from '../diagnose/index.js';

/** The row of `pid` on GPU `gpuIndex` (any GPU when null) in `sample`, found through the per-sample index. */
export function rowOf(sample: Sample, pid: number, gpuIndex: number | null): GpuProcess | undefined {
  return rowOnGpu(sample, pid, gpuIndex);
}

/** GPU `gpuIndex` of a sample: devices are listed by index, so look there first (this runs per GPU per sample drawn). */
function deviceOf(sample: Sample, gpuIndex: number): Device | undefined {
  const atIndex = sample.devices[gpuIndex];
  return atIndex?.index === gpuIndex ? atIndex : sample.devices.find((d) => d.index === gpuIndex);
}

/**
 * Used bytes of each GPU in `gpuIndices` in each sample (null where unknown or the GPU is absent), by GPU index:
 * one pass over the samples for every GPU, since the device panel draws a series per GPU on every frame.
 */
export function deviceUsedSeries(samples: readonly Sample[], gpuIndices: readonly number[]): Map<number, (number | null)[]> {
  const out = new Map<number, (number | null)[]>();
  for (const g of gpuIndices) out.set(g, new Array<number | null>(samples.length).fill(null));
  for (let i = 0; i < samples.length; i++) {
    for (const d of (samples[i] as Sample).devices) {
      const series = out.get(d.index);
      if (series !== undefined) series[i] = d.memory.usedBytes;
    }
  }
  return out;
}

/** Utilisation of GPU `gpuIndex` in each sample, % (null where unknown or the GPU is absent). */
export function deviceUtilSeries(samples: readonly Sample[], gpuIndex: number): (number | null)[] {
  const out = new Array<number | null>(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = deviceOf(samples[i] as Sample, gpuIndex)?.utilization.gpuPct ?? null;
  return out;
}

/** One number of pid `pid`'s row on GPU `gpuIndex` in each sample (null: not there or not reported). */
export function processSeries(samples: readonly Sample[], pid: number, gpuIndex: number | null, pick: (row: GpuProcess) => number | null): (number | null)[] {
  return samples.map((s) => {
    const row = rowOf(s, pid, gpuIndex);
    return row ? pick(row) : null;
  });
}

/** Bytes pid `pid` held on GPU `gpuIndex` in each sample (null: not there or not reported). */
export function processUsedSeries(samples: readonly Sample[], pid: number, gpuIndex: number | null): (number | null)[] {
  return processSeries(samples, pid, gpuIndex, (p) => p.usedBytes);
}

export type Trend = 'growing' | 'shrinking' | 'steady' | 'unknown';

/**
 * Growing or shrinking when the newest value differs from the oldest known one by more than
 * `toleranceBytes` (default 64 MiB: the caching allocator grows in blocks of 2–20 MiB, so smaller moves are noise).
 */
export function trendOf(series: readonly (number | null)[], toleranceBytes = 64 * 1024 * 1024): Trend {
  const known = series.filter((v): v is number => v !== null);
  if (known.length < 2) return 'unknown';
  const delta = (known[known.length - 1] as number) - (known[0] as number);
  return delta > toleranceBytes ? 'growing' : delta < -toleranceBytes ? 'shrinking' : 'steady';
}

/**
 * The trend of pid `pid`'s memory on GPU `gpuIndex` over `samples`: trendOf(processUsedSeries(…)), reading
 * only the samples up to the oldest and from the newest known value instead of the whole series (40 rows on
 * screen × 60 samples at 10 Hz were the largest part of drawing the panel).
 */
export function processTrend(samples: readonly Sample[], pid: number, gpuIndex: number | null, toleranceBytes = 64 * 1024 * 1024): Trend {
  let first = -1;
  let oldest = 0;
  for (let i = 0; i < samples.length && first < 0; i++) {
    const used = rowOf(samples[i] as Sample, pid, gpuIndex)?.usedBytes;
    if (used !== null && used !== undefined) [first, oldest] = [i, used];
  }
  if (first < 0) return 'unknown';
  for (let i = samples.length - 1; i > first; i--) {
    const used = rowOf(samples[i] as Sample, pid, gpuIndex)?.usedBytes;
    if (used === null || used === undefined) continue;
    const delta = used - oldest;
    return delta > toleranceBytes ? 'growing' : delta < -toleranceBytes ? 'shrinking' : 'steady';
  }
  return 'unknown';
}

const BLOCKS = '▁▂▃▄▅▆▇█';

/**
 * A sparkline of the newest `width` values scaled to `maxValue` (a device's total, so heights compare across
 * GPUs); unknown values are spaces. Always `width` characters, left-padded with spaces.
 */
export function sparkline(series: readonly (number | null)[], width: number, maxValue: number | null): string {
  const tail = series.slice(-width);
  const top = maxValue && maxValue > 0 ? maxValue : Math.max(1, ...tail.map((v) => v ?? 0));
  const chars = tail.map((v) => (v === null ? ' ' : BLOCKS[Math.min(7, Math.max(0, Math.round((v / top) * 7)))]));
  return ' '.repeat(Math.max(0, width - chars.length)) + chars.join('');
}

/**
 * The samples of the last `spanMs` (to the newest sample's time) thinned evenly to at most `count`, the
 * oldest and the newest always kept: a findings window long enough to hold two /proc re-reads of every
 * process, for the cost of `count` samples.
 */
export function thinWindow(samples: readonly Sample[], spanMs: number, count: number): Sample[] {
  const newest = samples[samples.length - 1];
  if (newest === undefined) return [];
  let from = samples.length - 1;
  while (from > 0 && newest.timeMs - (samples[from - 1] as Sample).timeMs <= spanMs) from--;
  const inSpan = samples.slice(from);
  if (inSpan.length <= count) return inSpan;
  const out: Sample[] = [];
  for (let k = 0; k < count; k++) out.push(inSpan[Math.round((k * (inSpan.length - 1)) / (count - 1))] as Sample);
  return out;
}
