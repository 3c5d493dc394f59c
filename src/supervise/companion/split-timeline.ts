/**
 * The tree's PyTorch allocated and reserved bytes per GPU over an attempt, bounded however long it runs:
 * past 4000 raw points the series is halved (each pair's maximum kept), and the report gets at most 300
 * points, each the maximum of its stretch, so a short spike is never averaged away (like the memory
 * timeline beside it).
 */
import type { SplitPoint } from '../../core/companion/report.js';
import type { GpuSplit } from '../../core/companion/split.js';
import { downsampleMax } from '../monitor.js';

const RAW_MAX = 4000;
const POINTS = 300;

export class SplitTimeline {
  private ticks: Array<{ tMs: number; bytes: Record<string, number> }> = [];

  /** Notes one monitor tick's split per GPU; GPUs without PyTorch numbers are left out of the point. */
  note(tMs: number, gpus: readonly GpuSplit[]): void {
    const bytes: Record<string, number> = {};
    let any = false;
    for (const g of gpus) {
      if (g.allocatedBytes !== null) (bytes[`a ${g.gpuUuid}`] = g.allocatedBytes), (any = true);
      if (g.reservedBytes !== null) (bytes[`r ${g.gpuUuid}`] = g.reservedBytes), (any = true);
    }
    if (!any) return;
    this.ticks.push({ tMs, bytes });
    if (this.ticks.length > RAW_MAX) this.ticks = downsampleMax(this.ticks, RAW_MAX / 2);
  }

  /** At most `points` points, oldest first. */
  list(points = POINTS): SplitPoint[] {
    return downsampleMax(this.ticks, points).map((t) => {
      const point: SplitPoint = { tMs: t.tMs, allocatedBytes: {}, reservedBytes: {} };
      for (const [key, value] of Object.entries(t.bytes)) {
        const uuid = key.slice(2);
        if (key.startsWith('a ')) point.allocatedBytes[uuid] = value;
        else point.reservedBytes[uuid] = value;
      }
      return point;
    });
  }
}
