/**
 * `gpumem estimate -- python train.py …` and `gpumem estimate --entry pkg.module:make_step`: trace the real
 * training step on fake tensors, replay it, and report the peak by phase, module and category.
 */
import { printable } from '../../core/text.js';
import type { BatchSearchResult, SeqSearchResult } from '../../core/estimate/trace-batch.js';
import { GpumemError } from '../../core/errors.js';
import { formatBytes } from '../../core/units.js';
import { parseStepTrace, type StepTrace } from '../../core/estimate/trace.js';
import { replayStepTrace, sparkline, type AllocatorModel, type ReplayResult } from '../../core/estimate/replay.js';
import type { Budget } from '../../core/estimate/report.js';
import type { TracedFix } from '../../core/estimate/trace-fixes.js';
import { AllocatorSim } from '../../core/allocator/sim.js';
import { parseAllocatorConf } from '../../core/allocator/settings.js';
import { runTracedProgram } from '../../supervise/index.js';
import type { CommandContext } from '../context.js';
import type { EstimateOptions } from '../options/estimate.js';
import { painter } from '../render/style.js';
import { renderRanks, type TracedRank } from './estimate-trace-ranks.js';

// 2: worldSize, largestRank and ranks (estimate --world-size).
export const TRACED_SCHEMA_VERSION = 2;

export interface TracedInputs {
  budget: Budget | null;
  gpuName: string;
  contextBytes: number;
  workspaceBytes: number;
}

// Module names, notes and error text come from the traced program: no terminal control characters.

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

/** Human output of a traced estimate. */
export function renderTraced(r: TracedReport, color: boolean): string {
  const paint = painter(color);
  const out: string[] = [];
  out.push(`${paint('bold', 'traced')}  ${printable(r.command.join(' '))}: ${r.steps} step(s) on fake tensors, torch ${r.torchVersion ?? '?'}, ${r.allocations} GPU allocations`);
  out.push(`${paint('bold', 'peak')}    ${formatBytes(r.peakRequestedBytes)} requested by tensors, in ${r.peakPhase} of step ${r.peakStep}`);
  if (r.peakReservedBytes !== null) {
    const conf = r.allocatorSettings ? ` with ${printable(r.allocatorSettings)}` : ' with default settings';
    out.push(`        caching allocator${conf}: ${formatBytes(r.peakAllocatedBytes)} allocated, ${formatBytes(r.peakReservedBytes)} reserved at most (${r.segmentCount} segments at the end)`);
  } else {
    out.push('        (not replayed through the caching allocator: reserved bytes and rounding slack are not included)');
  }
  out.push(`        + CUDA context ${formatBytes(r.contextBytes)} → about ${formatBytes(r.nvidiaSmiBytes)} in nvidia-smi`);
  const cats = Object.entries(r.byCategory).filter(([, b]) => b > 0).map(([c, b]) => `${c} ${formatBytes(b)}`);
  out.push(`at the peak: ${cats.join(', ')}`);
  for (const m of r.byModule.slice(0, 8)) out.push(`  ${formatBytes(m.bytes).padStart(11)}  ${printable(m.module)}`);
  out.push(`phase peaks: ${r.phasePeaks.map((p) => `${p.phase} ${formatBytes(p.peakRequestedBytes)}`).join(', ')}`);
  out.push(`timeline    ${sparkline(r.timelineBytes)}  (max ${formatBytes(Math.max(0, ...r.timelineBytes))})`);
  out.push(...renderRanks(r, color));
  if (r.fit) {
    const verdict = r.fit.fits ? paint('green', 'fits') : paint('red', 'DOES NOT FIT');
    out.push(`${r.fit.gpu}: ${verdict} (budget ${formatBytes(r.fit.budgetBytes)} = ${formatBytes(r.fit.capacityBytes)} less ${Math.round(r.fit.margin * 100)} % margin)`);
  }
  if (r.batchSearch) {
    const b = r.batchSearch;
    const probes = b.probes.map((p) => `${p.batch} → ${formatBytes(p.deviceBytes)}${p.fits ? '' : ' (too big)'}`).join(', ');
    out.push(`${paint('bold', 'largest batch')} ${b.maxBatch}${b.exact ? '' : ' at least'} (traced: ${probes}${b.bytesPerSample ? `; ${formatBytes(b.bytesPerSample)} per sample` : ''})`);
    if (b.maxBatch > 0) out.push('  the breakdown above is at that batch');
  }
  if (r.seqSearch) {
    const q = r.seqSearch;
    const probes = q.probes.map((p) => `${p.seq} → ${formatBytes(p.deviceBytes)}${p.fits ? '' : ' (too big)'}`).join(', ');
    out.push(`${paint('bold', 'longest sequence')} ${q.maxSeq}${q.exact ? '' : ' at least'} at batch ${q.batch}, in multiples of ${q.multiple} (traced: ${probes}${q.bytesPerToken ? `; ${formatBytes(q.bytesPerToken)} per token` : ''})`);
    if (q.maxSeq > 0) out.push(`  the breakdown above is at --seq ${q.maxSeq}`);
  }
  if (r.fixes) out.push(...renderFixes(r.fixes, color));
  for (const n of r.notes) out.push(`note: ${printable(n)}`);
  return `${out.join('\n')}\n`;
}

/** The ranked fixes of a step that does not fit, one line each, best first. */
export function renderFixes(fixes: readonly TracedFix[], color: boolean, scope = ''): string[] {
  const paint = painter(color);
  const out = [`${paint('bold', 'fixes')}${scope}, best first (derived = the traced allocations rewritten as the fix would change them, not re-traced; traced = the program traced again with the fix):`];
  for (const f of fixes) {
    const verdict = f.fits ? paint('green', 'fits    ') : paint('red', 'too big ');
    out.push(`  ${verdict}${formatBytes(f.deviceBytes).padStart(11)}  ${f.what}${f.basis === 'replayed' ? '' : ` (${f.basis})`}`);
  }
  return out;
}
