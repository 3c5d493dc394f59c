/**
 * What the companion contributes to a supervised attempt's report (`plugins.companion`, docs/run.md and
 * docs/companion.md): per process its allocator figures and OOM captures, the memory split at the last tick
 * and at the tree's peak, the OOMs no printed message matched, and the snapshots written.
 */
import type { SnapshotOomAnswer } from '../allocator/oom-answer.js';
import type { OomMessage } from './messages.js';
import type { AllocatorAtOom } from './oom-event.js';
import type { GpuSplit, MemorySplit } from './split.js';
import type { CompanionState } from './state.js';
import type { CompanionDrops } from './intake.js';
import { stepFindings, summariseSteps, type StepSummary } from './steps.js';
import type { RunFinding } from '../run/utilization.js';
import type { PytorchGpuSummary } from './summary.js';
import type { RankSummary } from './ranks.js';
import type { MemoryForecast } from '../forecast/forecast.js';

export const COMPANION_REPORT_SCHEMA_VERSION = 1;

/** One point of the PyTorch split over time: ms since the attempt started, bytes per GPU uuid. */
export interface SplitPoint {
  tMs: number;
  allocatedBytes: Record<string, number>;
  reservedBytes: Record<string, number>;
}

/** What the plugin stores under `plugins.companion` of an attempt's report (docs/run.md, docs/companion.md). */
export interface CompanionReport {
  schemaVersion: number;
  processes: Array<{
    pid: number;
    torchVersion: string | null;
    ended: boolean;
    devices: Array<{
      device: number;
      gpuUuid: string | null;
      allocatedBytes: number | null;
      reservedBytes: number | null;
      maxPeakAllocatedBytes: number | null;
      maxPeakReservedBytes: number | null;
      numAllocRetries: number | null;
      numOoms: number | null;
    }>;
    ooms: OomMessage[];
    oomExceptions: string[];
    /** OOM reports beyond the ones kept in `ooms` (a program catching OOMs in a loop): counted, not stored. */
    oomsNotKept: number;
    companionErrors: Record<string, string>;
    droppedMessages: number;
    /** Why the process could not use CUDA, with the likely cause; absent or null when it could. */
    noCuda?: string | null;
    /** Step timing from the DataLoader iterator; null when the program fetched no batch through one. */
    steps?: StepSummary | null;
    /**
     * The OOM forecast per CUDA device at the attempt's end, from the per-step memory (docs/training-loop.md);
     * absent when the process recorded no step, and in reports written before it existed.
     */
    forecast?: MemoryForecast[];
  }>;
  /**
   * Per rank of a distributed job: its rank number, GPU, peaks, non-PyTorch bytes, step time and data wait
   * (docs/distributed.md). Absent when no process named a rank, and in reports written before it existed.
   */
  ranks?: RankSummary[];
  /** Findings from the step timing and the ranks; the run adds them to `findings`. */
  findings?: RunFinding[];
  /** The split at the last monitor tick that had both NVML and companion numbers. */
  lastSplit: { processes: MemorySplit[]; gpus: GpuSplit[] } | null;
  /** Per GPU: the split at the tree's peak, with the allocator's peaks, retries and OOMs over the attempt. */
  gpus: PytorchGpuSummary[];
  /**
   * PyTorch allocated and reserved bytes of the tree per GPU uuid over the attempt (at most 300 points, each
   * the maximum of its stretch of samples); absent from reports written before it existed.
   */
  splitTimeline?: SplitPoint[];
  /** OOMs the allocator saw that no printed message matched (the program caught them without printing). */
  unprintedOoms: AllocatorAtOom[];
  /** Memory snapshots written on OOM, for `gpumem snapshot FILE`. */
  snapshots: string[];
  /**
   * Per snapshot, what the allocator simulation says about its OOM (absent in reports written before this
   * field existed, and when no snapshot was written).
   */
  snapshotAnswers?: SnapshotOomAnswer[];
  /** Lines from the channel that could not be read. */
  problems: string[];
  /**
   * What the channel sent that was not kept (docs/companion.md, "Limits"): messages naming a pid outside the
   * run, beyond a per-kind cap or the total, texts cut, and problem lines past the first 32. Absent when
   * everything was kept, and in reports written before the limits existed.
   */
  notKept?: CompanionDrops & { problemLines: number };
}

/** Builds the report from the state (exported for tests and for `gpumem runs show`). */
export function companionReport(
  state: CompanionState,
  lastSplit: CompanionReport['lastSplit'],
  problems: string[],
  gpus: PytorchGpuSummary[] = [],
  unprintedOoms: AllocatorAtOom[] = [],
): CompanionReport {
  const processes = [...state.values()];
  return {
    schemaVersion: COMPANION_REPORT_SCHEMA_VERSION,
    processes: processes.map((p) => ({
      pid: p.pid,
      torchVersion: p.hello?.torchVersion ?? null,
      ended: p.ended,
      devices: [...p.devices.values()].map((d) => ({
        device: d.device,
        gpuUuid: d.gpuUuid,
        allocatedBytes: d.latest.allocatedBytes,
        reservedBytes: d.latest.reservedBytes,
        maxPeakAllocatedBytes: d.maxPeakAllocatedBytes,
        maxPeakReservedBytes: d.maxPeakReservedBytes,
        numAllocRetries: d.maxNumAllocRetries,
        numOoms: d.latest.numOoms,
      })),
      ooms: p.ooms,
      oomExceptions: p.oomExceptions,
      oomsNotKept: p.oomsNotKept,
      companionErrors: Object.fromEntries(p.errors),
      droppedMessages: p.droppedMessages,
      noCuda: p.noCuda,
      steps: p.steps ? summariseSteps(p.steps) : null,
    })),
    findings: processes.flatMap((p) => {
      if (!p.steps) return [];
      return stepFindings(p.pid, summariseSteps(p.steps));
    }),
    lastSplit,
    gpus,
    unprintedOoms,
    snapshots: processes.flatMap((p) => p.ooms.map((o) => o.snapshotPath).filter((s): s is string => s !== null)),
    problems,
  };
}
