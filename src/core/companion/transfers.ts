/**
 * Host-to-device copies, synchronising calls and GPU time per phase (CUDA events) of one process's training
 * loop, per step, from the companion's `steps` message, and the two findings drawn from the first two: copies the host waits for (pageable
 * memory, `non_blocking=False`) and a call that waits for the GPU every step (`.item()`, `.cpu()`, …).
 */
import type { RunFinding } from '../run/utilization.js';
import { formatBytes, formatPercent } from '../units.js';
import type { StepsMessage } from './messages.js';

/** Copies per completed step (means). Bytes are rounded to whole bytes. */
export interface CopySummary {
  countPerStep: number;
  bytesPerStep: number;
  msPerStep: number;
  blockingBytesPerStep: number;
  blockingMsPerStep: number;
  /** Blocking copy time over step time, 0..1; null when the step time is 0. */
  blockingShare: number | null;
  pageableBytesPerStep: number;
}

/** Synchronising calls per completed step. */
export interface SyncSummary {
  /** Share of the completed steps with at least one synchronising call, 0..1. */
  stepShare: number;
  callsPerStep: number;
  msPerStep: number;
  /** Calls per step by kind: "item", "cpu", "tolist", "synchronize". */
  byKind: Record<string, number>;
}

/** Mean GPU time per call of each phase over the timed steps (CUDA events); null where none was read. */
export interface ComputeSummary {
  forwardMs: number | null;
  backwardMs: number | null;
  optimizerMs: number | null;
  /** Calls read per phase, and one step in `everySteps` is timed. */
  forwardCount: number;
  backwardCount: number;
  optimizerCount: number;
  everySteps: number;
}

/** Means per call of the CUDA-event totals, or null without them or before any was read. */
export function summariseCompute(m: StepsMessage): ComputeSummary | null {
  const c = m.compute;
  if (!c || c.forwardCount + c.backwardCount + c.optimizerCount === 0) return null;
  const mean = (total: number, n: number): number | null => (n > 0 ? total / n : null);
  return {
    forwardMs: mean(c.forwardMs, c.forwardCount), backwardMs: mean(c.backwardMs, c.backwardCount), optimizerMs: mean(c.optimizerMs, c.optimizerCount),
    forwardCount: c.forwardCount, backwardCount: c.backwardCount, optimizerCount: c.optimizerCount, everySteps: c.everySteps,
  };
}

/** At or above this share of step time in blocking copies, the copies are worth making asynchronous. */
export const BLOCKING_COPY_SHARE = 0.05;
/** A synchronising call in at least this share of the steps is "every step". */
export const SYNC_EVERY_STEP_SHARE = 0.9;

/** Means per step of the copy totals, or null without copy timing or completed steps. */
export function summariseCopies(m: StepsMessage): CopySummary | null {
  const c = m.copies;
  if (!c || m.steps === 0) return null;
  return {
    countPerStep: c.count / m.steps, bytesPerStep: Math.round(c.bytes / m.steps), msPerStep: c.ms / m.steps,
    blockingBytesPerStep: Math.round(c.blockingBytes / m.steps), blockingMsPerStep: c.blockingMs / m.steps,
    blockingShare: m.stepMs > 0 ? Math.min(1, c.blockingMs / m.stepMs) : null, pageableBytesPerStep: Math.round(c.pageableBytes / m.steps),
  };
}

/** Means per step of the synchronising calls, or null without copy timing or completed steps. */
export function summariseSyncs(m: StepsMessage): SyncSummary | null {
  const s = m.syncs;
  if (!s || m.steps === 0) return null;
  const kinds = Object.entries(s.byKind);
  const byKind: Record<string, number> = {};
  for (const [kind, v] of kinds) byKind[kind] = v.count / m.steps;
  return {
    stepShare: Math.min(1, s.steps / m.steps),
    callsPerStep: kinds.reduce((n, [, v]) => n + v.count, 0) / m.steps,
    msPerStep: kinds.reduce((n, [, v]) => n + v.ms, 0) / m.steps,
    byKind,
  };
}

const KIND_CALL: Record<string, string> = { item: '.item()', cpu: '.cpu()', tolist: '.tolist()', synchronize: 'torch.cuda.synchronize()' };

/** Blocking copies: they took at least BLOCKING_COPY_SHARE of step time over at least `minSteps` steps. */
export function blockingCopyFinding(pid: number, steps: number, c: CopySummary | null | undefined, minSteps: number): RunFinding | null {
  if (!c || steps < minSteps || c.blockingShare === null || c.blockingShare < BLOCKING_COPY_SHARE) return null;
  const pageable = c.pageableBytesPerStep > 0;
  return {
    id: 'blocking-copy',
    gpuIndex: null,
    title: `pid ${pid} copies ${formatBytes(c.blockingBytesPerStep)} per step to the GPU blocking` +
      `${pageable ? ` (${formatBytes(c.pageableBytesPerStep)} from pageable memory)` : ' (non_blocking=False)'}: ` +
      `${c.blockingMsPerStep.toFixed(1)} ms, ${formatPercent(c.blockingShare * 100)} of step time`,
    fix: pageable
      ? 'pin_memory=True in the DataLoader and .to(device, non_blocking=True): the copy then overlaps the previous step\'s kernels instead of holding the host'
      : 'the batches are pinned already: .to(device, non_blocking=True) lets the copy overlap the previous step\'s kernels instead of holding the host',
    details: {
      pid, steps, blockingBytesPerStep: c.blockingBytesPerStep, blockingMsPerStep: c.blockingMsPerStep, blockingShare: c.blockingShare,
      pageableBytesPerStep: c.pageableBytesPerStep, bytesPerStep: c.bytesPerStep,
    },
  };
}

/** Synchronising calls in (nearly) every step over at least `minSteps` steps. */
export function syncCallsFinding(pid: number, steps: number, s: SyncSummary | null | undefined, minSteps: number): RunFinding | null {
  if (!s || steps < minSteps || s.stepShare < SYNC_EVERY_STEP_SHARE) return null;
  const kinds = Object.entries(s.byKind).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${KIND_CALL[k] ?? k} ${n.toFixed(1)}`);
  return {
    id: 'sync-calls',
    gpuIndex: null,
    title: `pid ${pid} makes the host wait for the GPU every step: ${s.callsPerStep.toFixed(1)} synchronising calls per step ` +
      `(${kinds.join(', ')}), ${s.msPerStep.toFixed(1)} ms waiting`,
    fix: 'each .item(), .cpu(), .tolist() or synchronize() holds the host until every queued kernel has run, so the next step cannot be queued meanwhile: ' +
      'keep running sums on the GPU (total += loss.detach()) and read them every N steps, and log every N steps',
    details: { pid, steps, syncStepShare: s.stepShare, callsPerStep: s.callsPerStep, msPerStep: s.msPerStep },
  };
}
