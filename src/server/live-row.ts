/** The compact per-sample numbers the page's charts plot: a few dozen bytes per GPU, kept for many samples. */
import type { Sample } from '../core/types.js';

export interface LiveRow {
  timeMs: number;
  devices: Array<{ index: number; usedBytes: number | null; totalBytes: number | null; gpuPct: number | null; memoryPct: number | null }>;
}

/** The chart numbers of one sample. */
export function liveRow(sample: Sample): LiveRow {
  return {
    timeMs: sample.timeMs,
    devices: sample.devices.map((d) => ({
      index: d.index, usedBytes: d.memory.usedBytes, totalBytes: d.memory.totalBytes, gpuPct: d.utilization.gpuPct, memoryPct: d.utilization.memoryPct,
    })),
  };
}
