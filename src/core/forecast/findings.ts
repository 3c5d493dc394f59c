/** The OOM forecast as run findings: one per device whose forecast, at the attempt's end, saw an OOM ahead. */
import type { RunFinding } from '../run/utilization.js';
import { formatBytes } from '../units.js';
import type { MemoryForecast } from './forecast.js';

/** Findings for `pid` from its forecasts (none for a flat run, or for growth still far from the limit). */
export function forecastFindings(pid: number, forecasts: readonly MemoryForecast[]): RunFinding[] {
  return forecasts.filter((f) => f.warnings.length > 0).map((f) => {
    const g = f.warnings.includes('growth') ? f.growth : null;
    const s = f.warnings.includes('spike') ? f.spikes : null;
    const title = g
      ? `pid ${pid} cuda:${f.device}: memory grows ${formatBytes(g.bytesPerStep)} a step and runs out at step ${g.oomAtStep}`
      : `pid ${pid} cuda:${f.device}: the spike every ${s?.everySteps} steps will not fit at step ${s?.failsAtStep}`;
    const fix = g
      ? 'find the tensor kept across steps (accumulate `loss.item()`, not `loss`; detach what is logged or appended to a list); ' +
        '`gpumem run --snapshot-on-oom` names the allocation sites in the snapshot'
      : 'free memory before the evaluation or checkpoint (smaller evaluation batch, `torch.no_grad()`, drop references to the training batch), or use a smaller training batch';
    return {
      id: 'oom-forecast', gpuIndex: null, title, fix,
      details: {
        pid, device: f.device, step: f.step, limitBytes: f.limitBytes,
        bytesPerStep: f.growth?.bytesPerStep ?? null, oomAtStep: f.growth?.oomAtStep ?? null,
        everySteps: f.spikes?.everySteps ?? null, nextSpikeStep: f.spikes?.nextStep ?? null, failingSpikeStep: f.spikes?.failsAtStep ?? null, spikeHeadroomBytes: f.spikes?.headroomBytes ?? null,
      },
    } satisfies RunFinding;
  });
}
