/**
 * The traced estimate's report (`gpumem estimate -- python train.py …`, `--entry`): one training step traced on
 * fake tensors, replayed through the caching-allocator simulator, and set against the GPU's budget.
 */
import type { BatchSearchResult, SeqSearchResult } from './trace-batch.js';
import type { StepTrace } from './trace.js';
import { replayStepTrace, type AllocatorModel, type ReplayResult } from './replay.js';
import type { Budget } from './report.js';
import type { TracedFix } from './trace-fixes.js';
import type { TracedRank } from './traced-ranks.js';
import { AllocatorSim } from '../allocator/sim.js';
import { parseAllocatorConf } from '../allocator/settings.js';

// 2: worldSize, largestRank and ranks (estimate --world-size).
export const TRACED_SCHEMA_VERSION = 2;
/** Version of the per-stage document (`estimate --stages … -- CMD`). */
export const TRACED_STAGES_SCHEMA_VERSION = 1;

export interface TracedInputs {
  budget: Budget | null;
  gpuName: string;
  contextBytes: number;
  workspaceBytes: number;
}

/**
 * The caching-allocator simulator with the run's settings: --alloc-conf, else the PYTORCH_CUDA_ALLOC_CONF /
 * PYTORCH_ALLOC_CONF the program would inherit. Unlimited capacity, so the peak it reserves is measured
 * rather than cut off; the budget is compared afterwards.
 */
export function allocatorModel(confText: string | null, torchVersion: string | null): AllocatorSim {
  const version = torchVersion?.split('+')[0] ?? undefined;
  const settings = confText ? parseAllocatorConf(confText, { version: version ?? null }) : undefined;
  return new AllocatorSim({ ...(settings ? { settings } : {}), ...(version ? { version } : {}) });
}

export interface TracedReport {
  schemaVersion: number;
  kind: 'trace';
  command: string[];
  torchVersion: string | null;
  steps: number;
  allocations: number;
  peakRequestedBytes: number;
  peakPhase: string;
  peakStep: number;
  peakAllocatedBytes: number | null;
  peakReservedBytes: number | null;
  allocatorSettings: string | null;
  numAllocRetries: number | null;
  segmentCount: number | null;
  contextBytes: number;
  workspaceBytes: number;
  nvidiaSmiBytes: number;
  byCategory: ReplayResult['peakByCategory'];
  byModule: ReplayResult['peakByModule'];
  phasePeaks: ReplayResult['phasePeaks'];
  timelineBytes: number[];
  fit: null | { gpu: string; capacityBytes: number; margin: number; budgetBytes: number; fits: boolean };
  /** With `{batch}` in the command and --gpu: the traced probes and the largest batch that fits. */
  batchSearch: null | BatchSearchResult;
  /** With `{seq}` in the command, --gpu and no --seq: the traced probes and the longest sequence that fits at `batch`. */
  seqSearch: null | (SeqSearchResult & { batch: number });
  /** When it does not fit: each fix replayed or derived from the trace, best first. */
  fixes: null | TracedFix[];
  notes: string[];
  /** Ranks of the job (--world-size; 1 for a single process). */
  worldSize: number;
  /** With --world-size N > 1: the rank whose trace this report is (the largest), and every traced rank. */
  largestRank: number | null;
  ranks: null | TracedRank[];
}

/** Builds the report from a parsed trace (pure apart from the allocator model it is given). */
export function buildTracedReport(trace: StepTrace, command: string[], inputs: TracedInputs, allocator: AllocatorModel | null, allocatorSettings: string | null = null): TracedReport {
  const r = replayStepTrace(trace, { workspaceBytes: inputs.workspaceBytes }, allocator);
  const reserved = r.allocator?.peakReservedBytes ?? null;
  const device = (reserved ?? r.peakRequestedBytes) + inputs.contextBytes;
  const budgetBytes = inputs.budget ? Math.floor(inputs.budget.capacityBytes * (1 - inputs.budget.margin)) : null;
  return {
    schemaVersion: TRACED_SCHEMA_VERSION,
    kind: 'trace',
    command,
    torchVersion: trace.torchVersion,
    steps: trace.stepsDone,
    allocations: r.allocations,
    peakRequestedBytes: r.peakRequestedBytes,
    peakPhase: r.peakPhase,
    peakStep: r.peakStep + 1,
    peakAllocatedBytes: r.allocator?.peakAllocatedBytes ?? null,
    peakReservedBytes: reserved,
    allocatorSettings,
    numAllocRetries: r.allocator?.numAllocRetries ?? null,
    segmentCount: r.allocator?.segmentCount ?? null,
    contextBytes: inputs.contextBytes,
    workspaceBytes: inputs.workspaceBytes,
    nvidiaSmiBytes: device,
    byCategory: r.peakByCategory,
    byModule: r.peakByModule,
    phasePeaks: r.phasePeaks,
    timelineBytes: r.timelineBytes,
    fit: inputs.budget && budgetBytes !== null
      ? { gpu: inputs.budget.gpu, capacityBytes: inputs.budget.capacityBytes, margin: inputs.budget.margin, budgetBytes, fits: device <= budgetBytes }
      : null,
    batchSearch: null,
    seqSearch: null,
    fixes: null,
    notes: trace.notes,
    worldSize: 1,
    largestRank: null,
    ranks: null,
  };
}

/** `gpumem estimate --stages …` with {stage} in the command: the fix for the first stage that breaks. */
export interface StageFix {
  stage: string;
  batch: number;
  accumulation: number;
  effectiveBatch: number;
  search: BatchSearchResult;
}

export interface TracedStagesReport {
  schemaVersion: typeof TRACED_STAGES_SCHEMA_VERSION;
  kind: 'trace-stages';
  stages: Array<{ name: string; report: TracedReport; fits: boolean | null; growth: Array<{ category: string; deltaBytes: number }> }>;
  fix: StageFix | null;
}
