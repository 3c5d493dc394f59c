/**
 * The OOM forecast of supervised PyTorch loops on /metrics (docs/training-loop.md), from the forecast each
 * process's live companion entry carries: the growth of what each step leaves behind, the steps left before it
 * reaches the limit, the headroom of the next periodic spike, and how many warnings the forecast gives. A flat
 * run has no growth and no spike series: an absent series means "nothing seen", never 0.
 */
import type { MemoryForecast } from '../../core/forecast/forecast.js';
import type { MetricDef, Row } from './define.js';
import { PROCESS_LABELS } from './process-series.js';

/** One row per forecast (process and CUDA device), on the GPU its companion named for that device. */
function forecastRows(value: (f: MemoryForecast) => number | null | undefined): MetricDef['rows'] {
  return (snapshot, c) => {
    const rows: Row[] = [];
    for (const p of snapshot.companion) {
      for (const f of p.forecast ?? []) {
        const v = value(f);
        if (v === null || v === undefined || !Number.isFinite(v)) continue;
        const uuid = p.devices.find((d) => d.device === f.device)?.gpuUuid ?? '';
        const labels = c.processes.labelsFor(p.pid, uuid);
        if (labels !== null) rows.push([labels, v]);
      }
    }
    return rows;
  };
}

export const FORECAST_METRICS: readonly MetricDef[] = [
  {
    name: 'gpumem_forecast_growth_bytes_per_step', type: 'gauge', labels: PROCESS_LABELS,
    help: 'Steady growth of what each training step of a supervised process leaves allocated, in bytes per step (absent when none is seen).',
    rows: forecastRows((f) => f.growth?.bytesPerStep),
  },
  {
    name: 'gpumem_forecast_oom_steps', type: 'gauge', labels: PROCESS_LABELS,
    help: 'Training steps until that growth brings the step peak to the memory PyTorch can reach (absent without growth or a known limit).',
    rows: forecastRows((f) => f.growth?.stepsLeft),
  },
  {
    name: 'gpumem_forecast_spike_headroom_bytes', type: 'gauge', labels: PROCESS_LABELS,
    help: 'Memory left at the peak of the next periodic spike (an evaluation every N steps); negative: it will not fit (absent without periodic spikes).',
    rows: forecastRows((f) => f.spikes?.headroomBytes),
  },
  {
    name: 'gpumem_forecast_warnings', type: 'gauge', labels: PROCESS_LABELS,
    help: 'Warnings the OOM forecast gives now for a supervised process and GPU (growth reaching the limit soon, a spike that will not fit); 0: none.',
    rows: forecastRows((f) => f.warnings.length),
  },
];
