/**
 * Step timing of one process, from the companion's cumulative `steps` message: the mean step, the share of
 * it spent waiting for the next batch, samples per second, the batch size seen against the one asked, and the
 * two findings drawn from them (input-bound, batch override).
 */
import type { RunFinding } from '../run/utilization.js';
import { formatPercent } from '../units.js';
import type { StepsMessage } from './messages.js';
import {
  blockingCopyFinding, summariseCompute, summariseCopies, summariseSyncs, syncCallsFinding, type ComputeSummary, type CopySummary, type SyncSummary,
} from './transfers.js';

/** The DataLoader the loop fetched its latest batch from, as its iterator saw it (null figures: torch did not say). */
export interface LoaderSettings {
  numWorkers: number | null;
  pinMemory: boolean | null;
  persistentWorkers: boolean | null;
  prefetchFactor: number | null;
}

/**
 * Step timing of one process, summarised: what the run report keeps per process
 * (`plugins.companion.processes[].steps`), what the live companion file publishes for `gpumem doctor`,
 * `diagnose`, `watch` and `serve`, and what the history keeps per run. Stable: fields are only ever added,
 * as nullable or optional ones (docs/companion.md, "Step timing").
 */
export interface StepSummary {
  steps: number;
  meanStepMs: number | null;
  /** Null also when steps are bounded by optimizer.step() (no DataLoader: the wait is not known). */
  meanDataWaitMs: number | null;
  /** Data wait over step time, 0..1; null before the first complete step, or without a DataLoader. */
  dataWaitShare: number | null;
  /** Samples per second of step time; null when the batches showed no first dimension. */
  samplesPerSec: number | null;
  /** Tokens per second of step time (2-D integer `input_ids`, padding included); null when the batches showed none. */
  tokensPerSec?: number | null;
  batchSeen: number | null;
  batchMin: number | null;
  batchMax: number | null;
  batchAsked: number | null;
  /** What bounds a step: DataLoader fetches or `optimizer.step()`; null from older companions (DataLoader). */
  boundary?: 'dataloader' | 'optimizer' | null;
  /** The DataLoader's settings (num_workers, pin_memory, …); null from companions that do not send them. */
  loader?: LoaderSettings | null;
  /** CPU cores the process may run on; null when unknown. */
  cpuCount?: number | null;
  /** Host-to-device copies per step; null without copy timing (older companions). */
  copies?: CopySummary | null;
  /** Synchronising calls per step; null without copy timing (older companions). */
  syncs?: SyncSummary | null;
  /** GPU time per forward, backward and optimizer step (CUDA events, one step in `everySteps`); null without CUDA. */
  compute?: ComputeSummary | null;
}

/** At or above this share of step time spent waiting for data, the run is input-bound. */
export const INPUT_BOUND_SHARE = 0.3;
/** Fewer steps than this say nothing about a training loop (warm-up, a validation pass). */
export const MIN_STEPS = 5;

/** Reduces the cumulative totals to means and shares. */
export function summariseSteps(m: StepsMessage): StepSummary {
  const has = m.steps > 0 && m.stepMs > 0;
  const waitKnown = has && m.boundary !== 'optimizer';
  return {
    steps: m.steps,
    meanStepMs: has ? m.stepMs / m.steps : null,
    meanDataWaitMs: waitKnown ? m.dataWaitMs / m.steps : null,
    dataWaitShare: waitKnown ? m.dataWaitMs / m.stepMs : null,
    // Samples of the completed steps only: the first fetch starts the clock, its batch is in no step.
    samplesPerSec: has && m.batchSeen !== null ? ((m.samples * m.steps) / (m.steps + 1)) / (m.stepMs / 1000) : null,
    tokensPerSec: has && m.tokens !== undefined && m.tokens !== null ? ((m.tokens * m.steps) / (m.steps + 1)) / (m.stepMs / 1000) : null,
    batchSeen: m.batchSeen, batchMin: m.batchMin, batchMax: m.batchMax, batchAsked: m.batchAsked,
    boundary: m.boundary ?? null, loader: m.loader ?? null, cpuCount: m.cpuCount ?? null, copies: summariseCopies(m), syncs: summariseSyncs(m),
    compute: summariseCompute(m),
  };
}

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isNumberOrNull = (v: unknown): boolean => v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0);
const isBoolOrNull = (v: unknown): boolean => v === null || typeof v === 'boolean';

function validLoader(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return isNumberOrNull(o.numWorkers) && isBoolOrNull(o.pinMemory) && isBoolOrNull(o.persistentWorkers) && isNumberOrNull(o.prefetchFactor);
}

const COPY_FIGURES = ['countPerStep', 'bytesPerStep', 'msPerStep', 'blockingBytesPerStep', 'blockingMsPerStep', 'pageableBytesPerStep'];

function validFigures(v: unknown, keys: readonly string[]): boolean {
  if (v === undefined || v === null) return true;
  return typeof v === 'object' && keys.every((k) => typeof (v as Record<string, unknown>)[k] === 'number' && isNumberOrNull((v as Record<string, unknown>)[k]));
}

function validCompute(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  const o = v as Record<string, unknown>;
  return validFigures(v, ['forwardCount', 'backwardCount', 'optimizerCount', 'everySteps']) &&
    ['forwardMs', 'backwardMs', 'optimizerMs'].every((k) => isNumberOrNull(o[k]));
}

function validSyncs(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (!validFigures(v, ['stepShare', 'callsPerStep', 'msPerStep'])) return false;
  const kinds = (v as { byKind?: unknown }).byKind;
  return typeof kinds === 'object' && kinds !== null && Object.values(kinds).every((n) => typeof n === 'number' && isNumberOrNull(n));
}

/** Whether `v` has the shape of a StepSummary (read back from a file another gpumem wrote). */
export function validStepSummary(v: unknown): v is StepSummary {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  const figures = ['meanStepMs', 'meanDataWaitMs', 'dataWaitShare', 'samplesPerSec', 'batchSeen', 'batchMin', 'batchMax', 'batchAsked'];
  if (o.tokensPerSec !== undefined && !isNumberOrNull(o.tokensPerSec)) return false;
  if (o.boundary !== undefined && o.boundary !== null && o.boundary !== 'dataloader' && o.boundary !== 'optimizer') return false;
  return isCount(o.steps) && figures.every((k) => isNumberOrNull(o[k])) && validLoader(o.loader) &&
    (o.cpuCount === undefined || isNumberOrNull(o.cpuCount)) && validFigures(o.copies, COPY_FIGURES) && validSyncs(o.syncs) && validCompute(o.compute);
}

/** "num_workers 2 on 16 cores, pin_memory off": what the loop's DataLoader is set to, or '' when unknown. */
function loaderWords(s: StepSummary): string {
  const l = s.loader;
  if (!l) return '';
  const parts: string[] = [];
  if (l.numWorkers !== null) parts.push(`num_workers ${l.numWorkers}${s.cpuCount ? ` on ${s.cpuCount} cores` : ''}`);
  if (l.pinMemory !== null) parts.push(`pin_memory ${l.pinMemory ? 'on' : 'off'}`);
  if (l.persistentWorkers !== null && l.numWorkers) parts.push(`persistent_workers ${l.persistentWorkers ? 'on' : 'off'}`);
  if (l.prefetchFactor !== null && l.numWorkers) parts.push(`prefetch_factor ${l.prefetchFactor}`);
  return parts.join(', ');
}

/** The input-bound fix, concrete where the DataLoader's settings are known. */
function inputBoundFix(s: StepSummary): string {
  const l = s.loader;
  const steps: string[] = [];
  const workers = l?.numWorkers ?? null;
  if (workers !== null && s.cpuCount && workers + 1 < s.cpuCount) {
    steps.push(`raise DataLoader num_workers from ${workers} (up to ${s.cpuCount - 1}, the free cores)`);
  } else if (workers !== null && s.cpuCount) {
    // More workers than cores only adds switching: the work per sample has to shrink instead.
    steps.push(`the ${workers} workers already use all ${s.cpuCount} cores: make loading cheaper`);
  } else steps.push('raise DataLoader num_workers (up to the free cores)');
  if (l?.pinMemory !== true) steps.push('pin_memory=True');
  if (l?.persistentWorkers !== true) steps.push('persistent_workers=True');
  steps.push('a larger prefetch_factor');
  return `${steps.join(', ')}, and move decoding and augmentation out of __getitem__ or onto the GPU`;
}

/** "20 steps of 40.0 ms, 62% waiting for data, 2400.0 samples/s, batch 96 (asked 128)": the step figures in words. */
export function describeSteps(s: StepSummary): string {
  const parts = [`${s.steps} ${s.boundary === 'optimizer' ? 'optimizer steps' : 'steps'} of ${(s.meanStepMs ?? 0).toFixed(1)} ms`];
  if (s.dataWaitShare !== null) parts.push(`${formatPercent(s.dataWaitShare * 100)} waiting for data`);
  if (s.samplesPerSec !== null) parts.push(`${s.samplesPerSec.toFixed(1)} samples/s`);
  if (s.tokensPerSec !== undefined && s.tokensPerSec !== null) parts.push(`${s.tokensPerSec.toFixed(0)} tokens/s`);
  const c = s.compute;
  if (c) {
    const phase = (name: string, v: number | null): string | null => (v === null ? null : `${name} ${v.toFixed(1)}`);
    const gpu = [phase('forward', c.forwardMs), phase('backward', c.backwardMs), phase('optimizer', c.optimizerMs)].filter((x) => x !== null);
    if (gpu.length > 0) parts.push(`GPU ms: ${gpu.join(', ')}`);
  }
  if (s.batchSeen !== null) parts.push(`batch ${s.batchSeen}${s.batchAsked !== null ? ` (asked ${s.batchAsked})` : ''}`);
  return parts.join(', ');
}

/** Input-bound: the loop waited for data at least INPUT_BOUND_SHARE of step time over at least MIN_STEPS steps. */
export function inputBoundFinding(pid: number, s: StepSummary): RunFinding | null {
  if (s.steps < MIN_STEPS || s.dataWaitShare === null || s.dataWaitShare < INPUT_BOUND_SHARE) return null;
  return {
    id: 'input-bound',
    gpuIndex: null,
    title: `pid ${pid} is input-bound: the loop waited for data ${formatPercent(s.dataWaitShare * 100)} of step time ` +
      `(${(s.meanDataWaitMs ?? 0).toFixed(1)} ms of ${(s.meanStepMs ?? 0).toFixed(1)} ms per step over ${s.steps} steps)` +
      (loaderWords(s) ? `; ${loaderWords(s)}` : ''),
    fix: inputBoundFix(s),
    details: {
      pid, steps: s.steps, dataWaitShare: s.dataWaitShare, meanStepMs: s.meanStepMs, meanDataWaitMs: s.meanDataWaitMs,
      numWorkers: s.loader?.numWorkers ?? null, cpuCount: s.cpuCount ?? null,
    },
  };
}

/** Batch override: `--batch` asked for one size and the loop's batches had another (the last, smaller batch aside). */
export function batchOverrideFinding(pid: number, s: StepSummary): RunFinding | null {
  if (s.batchAsked === null || s.batchSeen === null || s.batchSeen === s.batchAsked) return null;
  return {
    id: 'batch-override',
    gpuIndex: null,
    title: `pid ${pid}: batch size asked ${s.batchAsked}, used ${s.batchSeen}`,
    fix: 'the program sets its own batch size: read it from {batch} or the GPUMEM_BATCH variable instead of a fixed value or a config default',
    details: { pid, batchAsked: s.batchAsked, batchSeen: s.batchSeen, batchMin: s.batchMin, batchMax: s.batchMax },
  };
}

/** Every finding the step timing of one process supports, in the order reports list them. */
export function stepFindings(pid: number, s: StepSummary): RunFinding[] {
  return [
    inputBoundFinding(pid, s), batchOverrideFinding(pid, s), blockingCopyFinding(pid, s.steps, s.copies, MIN_STEPS),
    syncCallsFinding(pid, s.steps, s.syncs, MIN_STEPS),
  ].filter((f): f is RunFinding => f !== null);
}
