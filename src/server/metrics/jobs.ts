/**
 * Per-process metrics a fleet needs beyond the raw numbers: each supervised process's memory split into what
 * PyTorch allocated, what its caching allocator holds unallocated and what is not PyTorch's at all (CUDA
 * context, cuBLAS/NCCL workspaces, other allocators); whether the job a process belongs to has ended; and how
 * many process rows the cardinality cap left out.
 */
import { splitProcessMemory } from '../../core/companion/index.js';
import type { MetricDef, Row } from './define.js';
import { PROCESS_LABELS } from './process-series.js';

const SPLIT_LABELS = [...PROCESS_LABELS, 'part'];

export const JOB_METRICS: readonly MetricDef[] = [
  {
    name: 'gpumem_process_memory_split_bytes', type: 'gauge', labels: SPLIT_LABELS,
    help: 'A supervised process\'s GPU memory by part, in bytes: part="pytorch_allocated" (allocated_bytes.all.current), "pytorch_cached" (reserved_bytes.all.current minus allocated: held by the caching allocator, free for PyTorch), "non_pytorch" (used_memory minus reserved: CUDA context, library workspaces, other allocators). The three add up to the process\'s used memory; a part that cannot be computed has no sample.',
    rows: (s, c) => {
      const used = new Map<string, number>();
      for (const r of c.processes.rows) if (r.process.usedBytes !== null) used.set(`${r.process.pid}\u0000${r.process.gpuUuid}`, r.process.usedBytes);
      const rows: Row[] = [];
      for (const p of s.companion) {
        for (const d of p.devices) {
          const labels = c.processes.labelsFor(p.pid, d.gpuUuid);
          if (labels === null) continue;
          // The same split as `gpumem diagnose`: a part it cannot compute (the driver read before PyTorch grew) has no sample.
          const split = splitProcessMemory(p.pid, d.gpuUuid, used.get(`${p.pid}\u0000${d.gpuUuid}`) ?? null, d.stats);
          const parts: Array<[string, number | null]> = [['pytorch_allocated', split.allocatedBytes], ['pytorch_cached', split.cachedBytes], ['non_pytorch', split.nonPytorchBytes]];
          for (const [part, bytes] of parts) if (bytes !== null) rows.push([{ ...labels, part }, bytes]);
        }
      }
      return rows;
    },
  },
  {
    name: 'gpumem_process_job_ended', type: 'gauge', labels: PROCESS_LABELS,
    help: '1 when the process still holds GPU memory although its job has ended: the gpumem run that started it is over (its supervisor is gone), or its launcher is gone and it did nothing during the diagnosis window (gpumem diagnose, rule orphans); 0 otherwise.',
    rows: (s, c) => c.processes.rows.map((r): Row => [r.labels, s.jobEnded.has(r.process.pid) ? 1 : 0]),
  },
  {
    name: 'gpumem_process_series_dropped_total', type: 'counter', labels: [],
    help: 'Processes left out of the per-process metrics by the cap (gpumem serve --metrics-max-processes), each counted once per stretch it stays out.',
    rows: (_s, c) => [[{}, c.droppedTotal]],
  },
];
