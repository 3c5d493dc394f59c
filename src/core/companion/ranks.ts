/**
 * The ranks of a distributed job under `gpumem run`: which processes are ranks (the companion's `rank`
 * message: the launcher's RANK/LOCAL_RANK/WORLD_SIZE, or torch.distributed once initialised), the GPU each
 * held memory on (NVML, per pid), and per rank the peaks that decide whether it fits — PyTorch's allocated
 * and reserved, NVML's total and the part outside PyTorch — with its step time and data wait.
 */
import type { GpuProcess } from '../types.js';
import type { MemorySplit } from './split.js';
import type { CompanionProcessState, CompanionState } from './state.js';
import { summariseSteps } from './steps.js';

/** What NVML showed of one pid over an attempt: per GPU its largest figure, and its largest non-PyTorch part. */
export interface PidPeaks {
  /** GPU uuid → NVML index (when the sample named it) and the largest usedBytes seen (null when never given). */
  gpus: Map<string, { gpuIndex: number | null; maxUsedBytes: number | null }>;
  /** Largest NVML total over all GPUs in one sample. */
  maxProcessBytes: number | null;
  /** Largest non-PyTorch part (NVML process total − reserved) in one sample, summed over GPUs. */
  maxNonPytorchBytes: number | null;
}

/** Per pid, what `foldRankSample` kept. */
export type RankPeaks = Map<number, PidPeaks>;

function maxOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

/**
 * Folds one monitor sample into `peaks` (mutating it): `processes` are the tree's NVML rows, `splits` the
 * companion's split of the same sample. Every GPU process of the tree is kept, rank or not (a rank's hello
 * may arrive after its memory): the report picks the ranks at the end.
 */
export function foldRankSample(peaks: RankPeaks, processes: readonly GpuProcess[], splits: readonly MemorySplit[]): void {
  const totals = new Map<number, number | null>();
  for (const p of processes) {
    let entry = peaks.get(p.pid);
    if (!entry) {
      entry = { gpus: new Map(), maxProcessBytes: null, maxNonPytorchBytes: null };
      peaks.set(p.pid, entry);
    }
    if (p.gpuUuid !== null) {
      const prev = entry.gpus.get(p.gpuUuid);
      entry.gpus.set(p.gpuUuid, { gpuIndex: p.gpuIndex ?? prev?.gpuIndex ?? null, maxUsedBytes: maxOf(prev?.maxUsedBytes ?? null, p.usedBytes) });
    }
    const before = totals.has(p.pid) ? (totals.get(p.pid) ?? null) : 0;
    totals.set(p.pid, before === null || p.usedBytes === null ? null : before + p.usedBytes);
  }
  for (const [pid, total] of totals) {
    const entry = peaks.get(pid) as PidPeaks;
    entry.maxProcessBytes = maxOf(entry.maxProcessBytes, total);
  }
  const nonPytorch = new Map<number, number>();
  for (const s of splits) if (s.nonPytorchBytes !== null) nonPytorch.set(s.pid, (nonPytorch.get(s.pid) ?? 0) + s.nonPytorchBytes);
  for (const [pid, bytes] of nonPytorch) {
    const entry = peaks.get(pid);
    if (entry) entry.maxNonPytorchBytes = maxOf(entry.maxNonPytorchBytes, bytes);
  }
}

/** One rank's line of the report (docs/distributed.md). Sizes are bytes, null where nothing said. */
export interface RankSummary {
  pid: number;
  rank: number | null;
  localRank: number | null;
  worldSize: number | null;
  /** The process group's backend ("nccl", "gloo"); null before init_process_group or when only the environment spoke. */
  backend: string | null;
  /** Where the rank number came from: the launcher's environment, or torch.distributed. */
  rankSource: 'env' | 'torch.distributed';
  /** GPUs it held memory on (NVML), else the CUDA devices its allocator reserved memory on. */
  gpus: Array<{ gpuUuid: string; gpuIndex: number | null }>;
  /** Highest `allocated_bytes.all.peak` / `reserved_bytes.all.peak` over the attempt, summed over its devices. */
  peakAllocatedBytes: number | null;
  peakReservedBytes: number | null;
  /** Largest NVML total of the process in one sample. */
  peakProcessBytes: number | null;
  /** Largest NVML total − reserved in one sample: CUDA context, workspaces, NCCL buffers. */
  peakNonPytorchBytes: number | null;
  steps: number | null;
  meanStepMs: number | null;
  meanDataWaitMs: number | null;
  /** Time (ms since the epoch, the rank's clock) of its first OOM report, and the CUDA ordinal; null without one. */
  firstOomTimeMs: number | null;
  oomDevice: number | null;
  /** Whether the rank said goodbye (a normal interpreter exit; a rank ended by a signal does not). */
  ended: boolean;
}

/**
 * True when `p` is a helper of a rank rather than a rank: its parent (hello's ppid) is a process of the run
 * with the same rank number — a spawned DataLoader worker inherits its rank's environment.
 */
function helperOfRank(p: CompanionProcessState, state: CompanionState): boolean {
  const ppid = p.hello?.ppid ?? null;
  const parent = ppid === null ? undefined : state.get(ppid);
  return parent?.rank !== null && parent?.rank !== undefined && parent.rank.rank === p.rank?.rank;
}

function sumKnown(values: Array<number | null>): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}

/** Each rank of the attempt, by rank number then pid; empty when no process named a rank. */
export function rankSummaries(state: CompanionState, peaks: RankPeaks): RankSummary[] {
  const out: RankSummary[] = [];
  for (const p of state.values()) {
    if (!p.rank || helperOfRank(p, state)) continue;
    const seen = peaks.get(p.pid);
    const gpus = seen && seen.gpus.size > 0
      ? [...seen.gpus].map(([gpuUuid, g]) => ({ gpuUuid, gpuIndex: g.gpuIndex }))
      : [...p.devices.values()].filter((d) => d.gpuUuid !== null && (d.maxPeakReservedBytes ?? 0) > 0).map((d) => ({ gpuUuid: d.gpuUuid as string, gpuIndex: null }));
    const devices = [...p.devices.values()];
    const steps = p.steps ? summariseSteps(p.steps) : null;
    const firstOom = p.ooms.reduce<CompanionProcessState['ooms'][number] | null>((a, o) => (a === null || o.timeMs < a.timeMs ? o : a), null);
    out.push({
      pid: p.pid, rank: p.rank.rank, localRank: p.rank.localRank, worldSize: p.rank.worldSize, backend: p.rank.backend, rankSource: p.rank.source,
      gpus,
      peakAllocatedBytes: sumKnown(devices.map((d) => d.maxPeakAllocatedBytes)),
      peakReservedBytes: sumKnown(devices.map((d) => d.maxPeakReservedBytes)),
      peakProcessBytes: seen?.maxProcessBytes ?? null,
      peakNonPytorchBytes: seen?.maxNonPytorchBytes ?? null,
      steps: steps?.steps ?? null, meanStepMs: steps?.meanStepMs ?? null, meanDataWaitMs: steps?.meanDataWaitMs ?? null,
      firstOomTimeMs: firstOom?.timeMs ?? null, oomDevice: firstOom?.device ?? null,
      ended: p.ended,
    });
  }
  return out.sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity) || a.pid - b.pid);
}

/** "rank 1 (pid 4242)", or "pid 4242" for a process that named no rank number. */
export function rankName(r: Pick<RankSummary, 'rank' | 'pid'>): string {
  return r.rank === null ? `pid ${r.pid}` : `rank ${r.rank} (pid ${r.pid})`;
}
