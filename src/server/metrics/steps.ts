/**
 * Step timing of supervised PyTorch loops on /metrics, from the step summary each process's live companion
 * entry carries (docs/companion.md, "Step timing"): a step is the time between two successive DataLoader
 * fetches, the data wait the part of it spent inside the fetch. The gauges are means over every step so far;
 * the two counters let PromQL take a recent mean: rate(gpumem_step_seconds_total[5m]) /
 * rate(gpumem_steps_total[5m]).
 */
import type { StepSummary } from '../../core/companion/steps.js';
import type { MetricDef, Row } from './define.js';
import { PROCESS_LABELS } from './process-series.js';

/** One row per GPU the process's companion reported (the per-process labels of gpumem_pytorch_*), or one without a GPU. */
function stepRows(value: (s: StepSummary) => number | null | undefined): MetricDef['rows'] {
  return (snapshot, c) => {
    const rows: Row[] = [];
    for (const p of snapshot.companion) {
      if (!p.steps) continue;
      const v = value(p.steps);
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      const gpus = p.devices.length > 0 ? p.devices.map((d) => d.gpuUuid) : [''];
      for (const uuid of gpus) {
        const labels = c.processes.labelsFor(p.pid, uuid);
        if (labels !== null) rows.push([labels, v]);
      }
    }
    return rows;
  };
}

const seconds = (ms: number | null): number | null => (ms === null ? null : ms / 1000);

export const STEP_METRICS: readonly MetricDef[] = [
  {
    name: 'gpumem_step_seconds', type: 'gauge', labels: PROCESS_LABELS,
    help: 'Mean training step time of a supervised process (between successive DataLoader fetches, waits included) over its steps so far, in seconds.',
    rows: stepRows((s) => seconds(s.meanStepMs)),
  },
  {
    name: 'gpumem_data_wait_ratio', type: 'gauge', labels: PROCESS_LABELS,
    help: 'Share of a supervised process\'s step time spent waiting for the next batch (inside the DataLoader fetch), 0 to 1, over its steps so far.',
    rows: stepRows((s) => s.dataWaitShare),
  },
  {
    name: 'gpumem_samples_per_second', type: 'gauge', labels: PROCESS_LABELS,
    help: 'Samples (the batches\' first dimension) per second of step time of a supervised process, over its steps so far.',
    rows: stepRows((s) => s.samplesPerSec),
  },
  {
    name: 'gpumem_tokens_per_second', type: 'gauge', labels: PROCESS_LABELS,
    help: 'Tokens (elements of 2-D integer input_ids, padding included) per second of step time of a supervised process, over its steps so far.',
    rows: stepRows((s) => s.tokensPerSec),
  },
  {
    name: 'gpumem_steps_total', type: 'counter', labels: PROCESS_LABELS,
    help: 'Training steps a supervised process completed (DataLoader fetches after the first).',
    rows: stepRows((s) => s.steps),
  },
  {
    name: 'gpumem_step_seconds_total', type: 'counter', labels: PROCESS_LABELS,
    help: 'Total step time of a supervised process over its completed steps, in seconds.',
    rows: stepRows((s) => (s.meanStepMs === null ? null : (s.meanStepMs * s.steps) / 1000)),
  },
  {
    name: 'gpumem_data_wait_seconds_total', type: 'counter', labels: PROCESS_LABELS,
    help: 'Total time a supervised process waited for batches over its completed steps, in seconds.',
    rows: stepRows((s) => (s.meanDataWaitMs === null ? null : (s.meanDataWaitMs * s.steps) / 1000)),
  },
];
