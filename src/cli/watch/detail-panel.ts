/**
 * Enter on a process: its GPU memory over the history as a sparkline with now / min / max, its SM share,
 * and for a run supervised with the companion PyTorch's split (allocated / cached / non-PyTorch).
 */
import { formatBytes, printable, type Sample } from '../../core/index.js';
import type { DiagnoseReport } from '../../core/diagnose/index.js';
import { processUsedSeries, sparkline, trendOf } from '../../core/watch/index.js';
import type { Color } from '../render/style.js';

type Paint = (color: Color, text: string) => string;

/** Lines of the detail panel for `pid` (all its GPUs). */
export function detailPanel(pid: number, report: DiagnoseReport, history: readonly Sample[], columns: number, paint: Paint): string[] {
  const views = report.processes.filter((v) => v.pid === pid);
  if (views.length === 0) return [paint('yellow', `  pid ${pid} is no longer on any GPU (Esc: back)`)];
  const first = views[0]!;
  const lines = [paint('bold', `  pid ${pid}  ${printable(first.user ?? '-')}  ${printable(first.command ?? '?')}`.slice(0, Math.max(20, columns))) + paint('dim', '  (Enter/Esc: back)')];
  for (const v of views) {
    const series = processUsedSeries(history, pid, v.gpuIndex);
    const known = series.filter((x): x is number => x !== null);
    const device = report.devices.find((d) => d.index === v.gpuIndex);
    const spark = sparkline(series, Math.max(10, Math.min(120, columns - 4)), device?.memory.totalBytes ?? null);
    const min = known.length ? Math.min(...known) : null;
    const max = known.length ? Math.max(...known) : null;
    lines.push(`  GPU ${v.gpuIndex ?? '?'}: now ${formatBytes(v.usedBytes)}  min ${formatBytes(min)}  max ${formatBytes(max)}  ${trendOf(series)} over ${known.length} samples  SM ${v.row.smUtilPct === null ? 'n/a' : `${v.row.smUtilPct}%`}`);
    lines.push(`  ${paint('green', spark)}`);
    const split = report.accounting.find((a) => a.gpuIndex === v.gpuIndex)?.pytorch.find((s) => s.pid === pid);
    if (split) {
      lines.push(`  PyTorch: allocated ${formatBytes(split.allocatedBytes)}  reserved ${formatBytes(split.reservedBytes)}  cached ${formatBytes(split.cachedBytes)}  non-PyTorch ${formatBytes(split.nonPytorchBytes)}  alloc retries ${split.numAllocRetries ?? 'n/a'}`);
    } else {
      lines.push(paint('dim', '  PyTorch split: not known (run it under gpumem run to see allocated / cached)'));
    }
  }
  return lines;
}
