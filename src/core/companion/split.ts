/**
 * Splitting a process's GPU memory with the companion's numbers — the "nvidia-smi says 45 GB, PyTorch says
 * 2 GB" question answered exactly:
 *   NVML process total = allocated (live tensors) + cached (reserved − allocated) + non-PyTorch
 * where non-PyTorch = NVML process total − reserved is the CUDA context, cuBLAS/cuDNN workspaces, NCCL
 * buffers and any other library's memory. Each part is exact when both numbers come from the same moment;
 * the companion and NVML are sampled separately, so the sample times are kept for the reader to judge.
 */
import type { GpuProcess, Unavailable } from '../types.js';
import type { AllocatorStats } from './messages.js';
import type { CompanionState } from './state.js';

export interface MemorySplit {
  pid: number;
  gpuUuid: string | null;
  /** NVML's figure for the process on this GPU (nvidia-smi "Processes: GPU Memory Usage"). */
  processUsedBytes: number | null;
  /** PyTorch `allocated_bytes.all.current`. */
  allocatedBytes: number | null;
  /** PyTorch `reserved_bytes.all.current`. */
  reservedBytes: number | null;
  /** reserved − allocated: held by PyTorch's cache; free for this process, not for others. */
  cachedBytes: number | null;
  /** NVML process total − reserved. */
  nonPytorchBytes: number | null;
  /** `num_alloc_retries`: cache flushes to satisfy an allocation; a warning sign before an OOM. */
  numAllocRetries: number | null;
  unavailable: Unavailable;
}

/**
 * Splits one process's memory on one GPU given its NVML total and the companion's statistics for the
 * same GPU. Every part that cannot be computed is null with its reason; a negative non-PyTorch part
 * (NVML read before PyTorch grew) is refused rather than shown as a wrong number.
 */
export function splitProcessMemory(
  pid: number,
  gpuUuid: string | null,
  processUsedBytes: number | null,
  stats: AllocatorStats | null,
): MemorySplit {
  const unavailable: Unavailable = {};
  const allocated = stats?.allocatedBytes ?? null;
  const reserved = stats?.reservedBytes ?? null;
  if (!stats) {
    for (const f of ['allocatedBytes', 'reservedBytes', 'cachedBytes', 'numAllocRetries']) {
      unavailable[f] = 'no PyTorch companion statistics for this process on this GPU';
    }
  }
  let cached: number | null = null;
  if (allocated !== null && reserved !== null) cached = reserved - allocated;
  else if (stats) unavailable.cachedBytes = 'the running torch does not report allocated and reserved bytes';
  let nonPytorch: number | null = null;
  if (processUsedBytes === null) {
    unavailable.nonPytorchBytes = 'the driver does not report this process\'s memory';
  } else if (reserved === null) {
    unavailable.nonPytorchBytes = stats
      ? 'the running torch does not report reserved bytes'
      : 'no PyTorch companion statistics for this process on this GPU';
  } else if (processUsedBytes < reserved) {
    unavailable.nonPytorchBytes = 'NVML\'s process total is below PyTorch\'s reserved bytes: the two were read at different moments';
  } else {
    nonPytorch = processUsedBytes - reserved;
  }
  return {
    pid,
    gpuUuid,
    processUsedBytes,
    allocatedBytes: allocated,
    reservedBytes: reserved,
    cachedBytes: cached,
    nonPytorchBytes: nonPytorch,
    numAllocRetries: stats?.numAllocRetries ?? null,
    unavailable,
  };
}

/**
 * Splits every GPU process that has companion statistics for its GPU (matched by pid and GPU UUID).
 * Processes without a companion are left out: the caller keeps showing their NVML total alone.
 */
export function splitProcesses(processes: readonly GpuProcess[], state: CompanionState): MemorySplit[] {
  const rows: MemorySplit[] = [];
  for (const proc of processes) {
    const companion = state.get(proc.pid);
    if (!companion) continue;
    const device = [...companion.devices.values()].find((d) => d.gpuUuid !== null && d.gpuUuid === proc.gpuUuid);
    if (!device) continue;
    rows.push(splitProcessMemory(proc.pid, proc.gpuUuid, proc.usedBytes, device.latest));
  }
  return rows;
}

export interface GpuSplit {
  gpuUuid: string;
  pids: number[];
  processUsedBytes: number | null;
  allocatedBytes: number | null;
  reservedBytes: number | null;
  nonPytorchBytes: number | null;
  numAllocRetries: number | null;
}

function sum(values: Array<number | null>): number | null {
  return values.some((v) => v === null) ? null : values.reduce<number>((a, b) => a + (b as number), 0);
}

/**
 * Sums `splitProcesses` per GPU: what the supervisor's live view and report show as allocated / reserved /
 * non-PyTorch per GPU. A sum with any unknown part is null (never a partial total).
 */
export function splitByGpu(splits: readonly MemorySplit[]): GpuSplit[] {
  const byGpu = new Map<string, MemorySplit[]>();
  for (const s of splits) {
    if (s.gpuUuid === null) continue;
    byGpu.set(s.gpuUuid, [...(byGpu.get(s.gpuUuid) ?? []), s]);
  }
  return [...byGpu.entries()].map(([gpuUuid, rows]) => ({
    gpuUuid,
    pids: rows.map((r) => r.pid),
    processUsedBytes: sum(rows.map((r) => r.processUsedBytes)),
    allocatedBytes: sum(rows.map((r) => r.allocatedBytes)),
    reservedBytes: sum(rows.map((r) => r.reservedBytes)),
    nonPytorchBytes: sum(rows.map((r) => r.nonPytorchBytes)),
    numAllocRetries: sum(rows.map((r) => r.numAllocRetries)),
  }));
}
