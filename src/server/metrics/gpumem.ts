/**
 * gpumem's own metrics, `gpumem_`-prefixed with the unit in the name: per-process GPU memory, PyTorch's
 * allocator numbers for supervised runs, findings, runs and OOMs from the history.
 */
import type { MetricDef, Row } from './define.js';
import { PROCESS_LABELS } from './process-series.js';

export { commandName } from './process-series.js';

type TorchStat = 'allocatedBytes' | 'reservedBytes' | 'peakAllocatedBytes' | 'peakReservedBytes' | 'numOoms';

function torchRows(stat: TorchStat): MetricDef['rows'] {
  return (s, c) => {
    const rows: Row[] = [];
    for (const p of s.companion) {
      for (const d of p.devices) {
        const v = d.stats[stat];
        const labels = v === null ? null : c.processes.labelsFor(p.pid, d.gpuUuid);
        if (v !== null && labels !== null) rows.push([labels, v]);
      }
    }
    return rows;
  };
}

export const GPUMEM_METRICS: readonly MetricDef[] = [
  {
    name: 'gpumem_process_gpu_memory_bytes', type: 'gauge', labels: PROCESS_LABELS,
    help: 'GPU memory a process holds on a GPU (nvidia-smi --query-compute-apps used_memory), in bytes.',
    rows: (_s, c) => c.processes.rows.filter((r) => r.process.usedBytes !== null).map((r): Row => [r.labels, r.process.usedBytes as number]),
  },
  {
    name: 'gpumem_pytorch_allocated_bytes', type: 'gauge', labels: PROCESS_LABELS,
    help: 'PyTorch allocated_bytes.all.current of a supervised process on a GPU, in bytes.',
    rows: torchRows('allocatedBytes'),
  },
  {
    name: 'gpumem_pytorch_reserved_bytes', type: 'gauge', labels: PROCESS_LABELS,
    help: 'PyTorch reserved_bytes.all.current (allocated plus cached) of a supervised process on a GPU, in bytes.',
    rows: torchRows('reservedBytes'),
  },
  {
    name: 'gpumem_pytorch_peak_allocated_bytes', type: 'gauge', labels: PROCESS_LABELS,
    help: 'PyTorch allocated_bytes.all.peak of a supervised process on a GPU, in bytes.',
    rows: torchRows('peakAllocatedBytes'),
  },
  {
    name: 'gpumem_pytorch_peak_reserved_bytes', type: 'gauge', labels: PROCESS_LABELS,
    help: 'PyTorch reserved_bytes.all.peak of a supervised process on a GPU, in bytes.',
    rows: torchRows('peakReservedBytes'),
  },
  {
    name: 'gpumem_pytorch_ooms_total', type: 'counter', labels: PROCESS_LABELS,
    help: 'PyTorch num_ooms of a supervised process on a GPU: out-of-memory errors it raised.',
    rows: torchRows('numOoms'),
  },
  {
    name: 'gpumem_history_oom_events_total', type: 'counter', labels: [],
    help: 'Out-of-memory events recorded over every run in the history.',
    rows: (s) => (s.runs ? [[{}, s.runs.oomEvents]] : []),
  },
  {
    name: 'gpumem_runs', type: 'gauge', labels: ['state'],
    help: 'Supervised runs in the history by state (running, ok, failed, signal).',
    rows: (s) => (s.runs ? Object.entries(s.runs.byStatus).map(([state, n]): Row => [{ state }, n]) : []),
  },
  {
    name: 'gpumem_findings', type: 'gauge', labels: ['rule', 'severity'],
    help: 'Findings of the latest diagnosis by rule and severity (gpumem diagnose).',
    rows: (s) => {
      const counts = new Map<string, Row>();
      for (const f of s.findings) {
        const key = `${f.id}\u0000${f.severity}`;
        const row = counts.get(key) ?? [{ rule: f.id, severity: f.severity }, 0];
        row[1]++;
        counts.set(key, row);
      }
      return [...counts.values()];
    },
  },
  {
    name: 'gpumem_sample_timestamp_seconds', type: 'gauge', labels: [],
    help: 'When the GPU sample behind these values was taken, in seconds since the epoch.',
    rows: (s) => [[{}, s.sample.timeMs / 1000]],
  },
];
