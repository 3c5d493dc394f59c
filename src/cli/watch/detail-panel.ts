/**
 * Enter on a process: per GPU its memory over the history (sparkline with now / min / max and trend), its SM
 * share and the GPU's utilisation over the same samples, its host CPU % and RSS, and for a run supervised with
 * the companion PyTorch's split (allocated / cached / non-PyTorch), the step timing (step time, data-wait
 * share, samples/s) and the OOM forecast.
 */
import { formatBytes, printable, type Sample } from '../../core/index.js';
import { describeSteps, INPUT_BOUND_SHARE, type StepSummary } from '../../core/companion/index.js';
import type { DiagnoseReport } from '../../core/diagnose/index.js';
import { deviceUtilSeries, processSeries, processUsedSeries, rowOf, sparkline, trendOf } from '../../core/watch/index.js';
import type { Color } from '../render/style.js';
import { forecastLine, type MemoryForecast } from '../../core/forecast/index.js';

type Paint = (color: Color, text: string) => string;

/** now / mean / max of a % series, "n/a" parts where nothing is known. */
function pctFigures(series: readonly (number | null)[]): string {
  const known = series.filter((x): x is number => x !== null);
  if (known.length === 0) return 'n/a';
  const mean = known.reduce((s, x) => s + x, 0) / known.length;
  const now = series[series.length - 1];
  return `now ${now === null || now === undefined ? 'n/a' : `${now}%`}  mean ${Math.round(mean)}%  max ${Math.max(...known)}%`;
}

/** The step-timing line of a supervised run, or why there is none. */
function stepsLine(steps: StepSummary | null | undefined, paint: Paint): string {
  if (!steps) return paint('dim', '  steps: not known (a loop run under gpumem run with the companion reports step time, data wait and samples/s)');
  const bound = steps.dataWaitShare !== null && steps.dataWaitShare >= INPUT_BOUND_SHARE ? paint('yellow', '  input-bound') : '';
  return `  steps: ${describeSteps(steps)}${bound}`;
}

/** One line per CUDA device of the OOM forecast, yellow when it warns; nothing before the first step record. */
function forecastLines(forecasts: readonly MemoryForecast[] | undefined, paint: Paint): string[] {
  return (forecasts ?? []).map((f) => {
    const line = forecastLine(`cuda:${f.device}`, f);
    if (line === null) return paint('dim', `  forecast: cuda:${f.device}: flat at step ${f.step} (no growth, no periodic spike)`);
    return f.warnings.length > 0 ? paint('yellow', `  ${line}`) : `  ${line}`;
  });
}

/**
 * Lines of the detail panel for `pid` (all its GPUs). `steps` is the companion's step summary of the pid when
 * it runs under `gpumem run`, `forecasts` its OOM forecast per device; `sample` is the newest sample (its CPU % and RSS).
 */
export function detailPanel(
  pid: number, report: DiagnoseReport, history: readonly Sample[], columns: number, paint: Paint, sample?: Sample, steps?: StepSummary | null,
  forecasts?: readonly MemoryForecast[],
): string[] {
  const views = report.processes.filter((v) => v.pid === pid);
  if (views.length === 0) return [paint('yellow', `  pid ${pid} is no longer on any GPU (Esc: back)`)];
  const first = views[0]!;
  const lines = [paint('bold', `  pid ${pid}  ${printable(first.user ?? '-')}  ${printable(first.command ?? '?')}`.slice(0, Math.max(20, columns))) + paint('dim', '  (Enter/Esc: back)')];
  const host = (sample ? rowOf(sample, pid, null)?.host : null) ?? first.row.host;
  const cpu = host?.cpuPct === null || host?.cpuPct === undefined ? 'n/a' : `${host.cpuPct}% of a core`;
  lines.push(`  host: CPU ${cpu}  RSS ${formatBytes(host?.rssBytes ?? null)}`);
  // Room for the label (12) and "now 100%  mean 100%  max 100%" (29) beside the sparkline.
  const width = Math.max(10, Math.min(120, columns - 42));
  for (const v of views) {
    const series = processUsedSeries(history, pid, v.gpuIndex);
    const known = series.filter((x): x is number => x !== null);
    const device = report.devices.find((d) => d.index === v.gpuIndex);
    const min = known.length ? Math.min(...known) : null;
    const max = known.length ? Math.max(...known) : null;
    lines.push(`  GPU ${v.gpuIndex ?? '?'}: now ${formatBytes(v.usedBytes)}  min ${formatBytes(min)}  max ${formatBytes(max)}  ${trendOf(series)} over ${known.length} samples`);
    lines.push(`  ${paint('green', sparkline(series, Math.max(10, Math.min(120, columns - 4)), device?.memory.totalBytes ?? null))}`);
    const sm = processSeries(history, pid, v.gpuIndex, (p) => p.smUtilPct);
    lines.push(`  SM share  ${paint('cyan', sparkline(sm, width, 100))}  ${pctFigures(sm)}`);
    if (v.gpuIndex !== null) {
      const util = deviceUtilSeries(history, v.gpuIndex);
      lines.push(`  GPU util  ${paint('cyan', sparkline(util, width, 100))}  ${pctFigures(util)}`);
    }
    const split = report.accounting.find((a) => a.gpuIndex === v.gpuIndex)?.pytorch.find((s) => s.pid === pid);
    if (split) {
      lines.push(`  PyTorch: allocated ${formatBytes(split.allocatedBytes)}  reserved ${formatBytes(split.reservedBytes)}  cached ${formatBytes(split.cachedBytes)}  non-PyTorch ${formatBytes(split.nonPytorchBytes)}  alloc retries ${split.numAllocRetries ?? 'n/a'}`);
    } else {
      lines.push(paint('dim', '  PyTorch split: not known (run it under gpumem run to see allocated / cached)'));
    }
  }
  lines.push(stepsLine(steps, paint));
  lines.push(...forecastLines(forecasts, paint));
  return lines;
}
