/**
 * The page's views of stored runs: two runs side by side (peaks, durations, step timing, OOMs, cleanup
 * verdicts), the PyTorch split of a run and its step timing per process. Stored reports are read defensively (older reports lack fields): a missing value
 * shows as "–", never as 0. Sizes and durations are formatted by core/units.
 */
import { formatBytes, formatDuration, formatPercent } from '../core/index.js';
import { describeSteps, type StepSummary } from '../core/companion/index.js';
import type { StoredAttempt, StoredRunReport } from '../core/run/index.js';
import type { RunRow } from '../store/index.js';
import { runsView } from './view.js';

type Stored = { run: RunRow; report: StoredRunReport | null };

function attemptsOf(report: StoredRunReport | null): StoredAttempt[] {
  return report?.attempts ?? [];
}

const stepMs = (ms: number | null): string => (ms === null ? '–' : `${ms.toFixed(1)} ms`);
const share = (fraction: number | null): string => (fraction === null ? '–' : formatPercent(fraction * 100));
const perSec = (rate: number | null): string => (rate === null ? '–' : rate.toFixed(1));
const size = (bytes: number | null | undefined): string => (typeof bytes === 'number' ? formatBytes(bytes) : '–');

/** The cleanup verdict of an attempt, in words. */
function cleanupVerdict(a: StoredAttempt): string {
  const c = a.cleanup;
  if (!c) return '–';
  const parts: string[] = [];
  const left = c.leftovers.length;
  parts.push(left === 0 ? 'no leftovers' : `${left} leftover process${left === 1 ? '' : 'es'}`);
  if (c.memoryReleased === false) parts.push('memory not released');
  const held = c.heldByNothing.reduce((sum, h) => sum + h.bytes, 0);
  if (held > 0) parts.push(`${formatBytes(held)} held by nothing`);
  return parts.join(', ');
}

/** Per attempt, per GPU: the tree's peak and the PyTorch peaks when the companion ran. */
function peakText(a: StoredAttempt): string {
  const peaks = a.peaks.map((p) => `GPU ${p.index ?? '?'} ${size(p.peakBytes)}`);
  return peaks.length > 0 ? peaks.join(', ') : '–';
}

/** [label, run A, run B] rows comparing two runs; per-attempt rows name the attempt. */
export function compareView(a: Stored, b: Stored): [string, string, string][] {
  const [ra, rb] = runsView([a.run, b.run]);
  const rows: [string, string, string][] = [
    ['command', ra!.command!, rb!.command!],
    ['started (UTC)', ra!.started!, rb!.started!],
    ['status', ra!.status!, rb!.status!],
    ['duration', ra!.duration!, rb!.duration!],
    ['peak (all GPUs, max over attempts)', ra!.peak!, rb!.peak!],
    ['retries', String(a.run.retries), String(b.run.retries)],
    ['step time (training loop, last attempt)', stepMs(a.run.meanStepMs), stepMs(b.run.meanStepMs)],
    ['data-wait share of step time', share(a.run.dataWaitShare), share(b.run.dataWaitShare)],
    ['samples/s', perSec(a.run.samplesPerSec), perSec(b.run.samplesPerSec)],
  ];
  const aa = attemptsOf(a.report);
  const ab = attemptsOf(b.report);
  const count = (list: StoredAttempt[], f: (x: StoredAttempt) => number): string => String(list.reduce((s, x) => s + f(x), 0));
  const caught = (x: StoredAttempt): number => x.ooms.length + (x.plugins.companion?.unprintedOoms.length ?? 0);
  rows.push(['OOMs (printed + caught)', count(aa, caught), count(ab, caught)]);
  for (let i = 0; i < Math.max(aa.length, ab.length); i += 1) {
    const x = aa[i];
    const y = ab[i];
    const n = i + 1;
    rows.push([`attempt ${n}: duration`, x?.durationMs == null ? '–' : formatDuration(x.durationMs), y?.durationMs == null ? '–' : formatDuration(y.durationMs)]);
    rows.push([`attempt ${n}: peak per GPU`, x ? peakText(x) : '–', y ? peakText(y) : '–']);
    rows.push([`attempt ${n}: PyTorch peak allocated / reserved`, x ? pytorchPeaks(x) : '–', y ? pytorchPeaks(y) : '–']);
    rows.push([`attempt ${n}: cleanup`, x ? cleanupVerdict(x) : '–', y ? cleanupVerdict(y) : '–']);
  }
  return rows;
}

function pytorchPeaks(a: StoredAttempt): string {
  const gpus = a.plugins.companion?.gpus ?? [];
  if (gpus.length === 0) return 'no PyTorch numbers (run without the companion)';
  return gpus.map((g) => `GPU ${g.gpuIndex ?? '?'} ${size(g.peakAllocatedBytes)} / ${size(g.peakReservedBytes)}`).join(', ');
}

/** A PyTorch split the history keeps: per attempt and GPU, at the tree's peak. */
export interface SplitView {
  attempt: number;
  gpu: string;
  /** Seconds since the attempt's start of the sample the split is taken at. */
  atS: number | null;
  allocatedBytes: number | null;
  reservedBytes: number | null;
  text: string;
}

/** The PyTorch splits of a run at each GPU's peak (the series over time is in the run's samples). */
export function splitView(report: StoredRunReport | null): SplitView[] {
  return attemptsOf(report).flatMap((a) => (a.plugins.companion?.gpus ?? []).map((g) => ({
    attempt: a.attempt,
    gpu: g.gpuIndex === null || g.gpuIndex === undefined ? (g.gpuUuid ?? '?') : `GPU ${g.gpuIndex}`,
    atS: typeof g.atMs === 'number' ? g.atMs / 1000 : null,
    allocatedBytes: g.allocatedBytes,
    reservedBytes: g.reservedBytes,
    text: `at the peak (${typeof g.atMs === 'number' ? formatDuration(g.atMs) : '–'} in): process tree ${size(g.treeBytes)} on the GPU, PyTorch reserved ${size(g.reservedBytes)}, allocated ${size(g.allocatedBytes)}; allocator peaks ${size(g.peakAllocatedBytes)} allocated / ${size(g.peakReservedBytes)} reserved`,
  })));
}

/** Whether any attempt of a stored run kept the PyTorch split over time (runs recorded before it did not). */
export function hasSplitTimeline(report: StoredRunReport | null): boolean {
  return attemptsOf(report).some((a) => (a.plugins.companion?.splitTimeline?.length ?? 0) > 0);
}

/** The step timing the history keeps for one process of one attempt, with the figures in words. */
export interface StepsView {
  attempt: number;
  pid: number | null;
  steps: number;
  meanStepMs: number | null;
  dataWaitShare: number | null;
  samplesPerSec: number | null;
  tokensPerSec: number | null;
  text: string;
}

const figure = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/**
 * Step timing of every process of every attempt that took steps, from the stored report. Reports from
 * before step timing, or of runs without the companion, give none; fields an older companion did not send
 * are null, never 0.
 */
export function stepsView(report: StoredRunReport | null): StepsView[] {
  return attemptsOf(report).flatMap((a) => (a.plugins.companion?.processes ?? []).flatMap((p) => {
    const s = p.steps;
    const steps = figure(s?.steps);
    if (!s || steps === null || steps === 0) return [];
    const summary: StepSummary = {
      steps, meanStepMs: figure(s.meanStepMs), meanDataWaitMs: figure(s.meanDataWaitMs), dataWaitShare: figure(s.dataWaitShare),
      samplesPerSec: figure(s.samplesPerSec), tokensPerSec: figure(s.tokensPerSec), batchSeen: figure(s.batchSeen), batchMin: figure(s.batchMin),
      batchMax: figure(s.batchMax), batchAsked: figure(s.batchAsked), boundary: s.boundary === 'optimizer' ? 'optimizer' : null,
    };
    return [{
      attempt: a.attempt, pid: figure(p.pid), steps, meanStepMs: summary.meanStepMs, dataWaitShare: summary.dataWaitShare,
      samplesPerSec: summary.samplesPerSec, tokensPerSec: summary.tokensPerSec ?? null, text: describeSteps(summary),
    }];
  }));
}
