/**
 * The per-GPU PyTorch summary of a supervised run: for each GPU, the split of the run's memory at the
 * sample where the process tree held the most (NVML tree total = allocated + reserved-unallocated +
 * non-PyTorch + tree processes without a companion), plus the run-wide allocator peaks, retries and OOMs.
 * Taking the split at the tree's peak answers "what was that peak made of"; the allocator's own peaks
 * (which see between samples) are reported beside it.
 */
import type { MemorySplit } from './split.js';
import type { CompanionState } from './state.js';

export interface PytorchGpuSummary {
  gpuUuid: string;
  /** NVML index of the GPU, when the sample named it. */
  gpuIndex: number | null;
  /** Processes with companion statistics on this GPU at that sample. */
  pids: number[];
  /** Ms since the attempt started of the sample the split is taken from. */
  atMs: number;
  /** NVML: the whole process tree's memory on this GPU at that sample. */
  treeBytes: number;
  /** NVML: Σ of the processes with companion statistics (null when the driver gave no figure for one). */
  processUsedBytes: number | null;
  /** PyTorch `allocated_bytes.all.current`, Σ over those processes. */
  allocatedBytes: number | null;
  /** PyTorch `reserved_bytes.all.current`, Σ. */
  reservedBytes: number | null;
  /** reserved − allocated: cached by PyTorch, usable by this process only. */
  unallocatedBytes: number | null;
  /** NVML process total − reserved: CUDA context, cuBLAS/cuDNN workspaces, NCCL, other libraries. */
  nonPytorchBytes: number | null;
  /** treeBytes − processUsedBytes: tree processes without a companion (DataLoader workers that touched CUDA…). */
  otherProcessesBytes: number | null;
  /** Highest `allocated_bytes.all.peak` / `reserved_bytes.all.peak` any process reported (between samples too). */
  peakAllocatedBytes: number | null;
  peakReservedBytes: number | null;
  /** `num_alloc_retries` (cache flushes to satisfy an allocation), Σ of each process's highest. */
  numAllocRetries: number | null;
  /** Out-of-memory errors on this GPU: Σ of `num_ooms`, or the OOM reports when that is higher. */
  numOoms: number | null;
}

function sum(values: Array<number | null>): number | null {
  return values.some((v) => v === null) ? null : values.reduce<number>((a, b) => a + (b as number), 0);
}

/**
 * Folds one monitor sample into the per-GPU summaries (mutating `best`): a GPU's entry is replaced when
 * the tree holds strictly more there than at the kept sample, so on a plateau the first sample is kept.
 * `rows` are the splits of this sample (`splitProcesses`), `treeBytes` the tree's NVML total per GPU UUID.
 */
export function foldPytorchSample(
  best: Map<string, PytorchGpuSummary>,
  tMs: number,
  rows: readonly MemorySplit[],
  treeBytes: Readonly<Record<string, number>>,
  indexOf: (uuid: string) => number | null,
): void {
  const byGpu = new Map<string, MemorySplit[]>();
  for (const r of rows) if (r.gpuUuid !== null) byGpu.set(r.gpuUuid, [...(byGpu.get(r.gpuUuid) ?? []), r]);
  for (const [uuid, splits] of byGpu) {
    const tree = treeBytes[uuid] ?? 0;
    const prev = best.get(uuid);
    if (prev && tree <= prev.treeBytes) continue;
    const allocated = sum(splits.map((s) => s.allocatedBytes));
    const reserved = sum(splits.map((s) => s.reservedBytes));
    const used = sum(splits.map((s) => s.processUsedBytes));
    best.set(uuid, {
      gpuUuid: uuid,
      gpuIndex: indexOf(uuid),
      pids: splits.map((s) => s.pid),
      atMs: tMs,
      treeBytes: tree,
      processUsedBytes: used,
      allocatedBytes: allocated,
      reservedBytes: reserved,
      unallocatedBytes: sum(splits.map((s) => s.cachedBytes)),
      nonPytorchBytes: sum(splits.map((s) => s.nonPytorchBytes)),
      otherProcessesBytes: used === null ? null : tree - used,
      peakAllocatedBytes: null,
      peakReservedBytes: null,
      numAllocRetries: null,
      numOoms: null,
    });
  }
}

function maxOrNull(values: Array<number | null>): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : Math.max(...known);
}

/**
 * Completes the summaries with what the companion saw over the whole attempt (peaks, retries, OOMs per
 * GPU UUID). A GPU with companion statistics but no sample where NVML saw the tree on it gets an entry
 * too, its NVML parts null, so an allocator peak is never dropped.
 */
export function finishPytorchSummary(best: ReadonlyMap<string, PytorchGpuSummary>, state: CompanionState): PytorchGpuSummary[] {
  const out = new Map<string, PytorchGpuSummary>();
  for (const [uuid, s] of best) out.set(uuid, { ...s });
  const per = new Map<string, { alloc: Array<number | null>; reserved: Array<number | null>; retries: Array<number | null>; ooms: Array<number | null> }>();
  for (const p of state.values()) {
    for (const d of p.devices.values()) {
      if (d.gpuUuid === null) continue;
      const acc = per.get(d.gpuUuid) ?? { alloc: [], reserved: [], retries: [], ooms: [] };
      acc.alloc.push(d.maxPeakAllocatedBytes);
      acc.reserved.push(d.maxPeakReservedBytes);
      acc.retries.push(d.maxNumAllocRetries);
      const reports = p.oomReportsByDevice.get(d.device) ?? 0;
      acc.ooms.push(d.latest.numOoms === null ? (reports > 0 ? reports : null) : Math.max(d.latest.numOoms, reports));
      per.set(d.gpuUuid, acc);
    }
  }
  for (const [uuid, acc] of per) {
    const s = out.get(uuid) ?? {
      gpuUuid: uuid, gpuIndex: null, pids: [], atMs: 0, treeBytes: 0, processUsedBytes: null, allocatedBytes: null,
      reservedBytes: null, unallocatedBytes: null, nonPytorchBytes: null, otherProcessesBytes: null,
      peakAllocatedBytes: null, peakReservedBytes: null, numAllocRetries: null, numOoms: null,
    };
    s.peakAllocatedBytes = maxOrNull(acc.alloc);
    s.peakReservedBytes = maxOrNull(acc.reserved);
    s.numAllocRetries = acc.retries.every((v) => v === null) ? null : acc.retries.reduce<number>((a, b) => a + (b ?? 0), 0);
    s.numOoms = acc.ooms.every((v) => v === null) ? null : acc.ooms.reduce<number>((a, b) => a + (b ?? 0), 0);
    out.set(uuid, s);
  }
  return [...out.values()].sort((a, b) => (a.gpuIndex ?? 1e9) - (b.gpuIndex ?? 1e9) || a.gpuUuid.localeCompare(b.gpuUuid));
}
