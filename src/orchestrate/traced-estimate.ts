/**
 * The traced estimate's flow (`gpumem estimate -- python train.py …` or `--entry`, and the measurement behind
 * `gpumem run --batch auto`): trace the training step on fake tensors (each rank that can differ, with a world
 * size), replay it through the caching-allocator simulator, price the fixes of a step that does not fit (one more
 * trace for activation checkpointing), and search the largest batch or the longest sequence that fits, or trace
 * each stage. It takes plain values and returns the report; it prints nothing.
 */
import { GpumemError } from '../core/errors.js';
import { optionExists } from '../core/allocator/versions.js';
import {
  allocatorModel, buildTracedReport, checkpointingFix, combineRanks, insertFix, parseStepTrace, rankTracedFixes, representativeRanks,
  searchMaxBatch, searchMaxSeq, SEQ_MULTIPLE, type StepTrace, type TracedInputs, type TracedReport, type TracedStagesReport,
} from '../core/estimate/index.js';
import { printable } from '../core/text.js';
import { runTracedProgram, substitute, type TraceRunOptions } from '../supervise/index.js';
import { traceStopped, untraceable } from './traced-failure.js';
import { traceStages } from './traced-stages.js';

// Each probe is a full trace (tens of seconds for a large model); seven settle the usual curves.
const MAX_PROBES = 7;

/**
 * What the traced program is run with (python, steps, timeout, environment, the fake GPU's size; its name is
 * `inputs.gpuName`), and what to estimate.
 */
export interface TracedEstimateOptions extends Omit<TraceRunOptions, 'command' | 'checkpoint' | 'torchVersion' | 'world' | 'gpuName'> {
  /** The command as given, {batch}, {seq}, {stage} and {accum} unfilled; null with `entry`. */
  command: string[] | null;
  /** The budget, CUDA context and cuBLAS workspace each report is built with. */
  inputs: TracedInputs;
  /** The allocator settings the run will have (already checked by the caller), or null for the defaults. */
  allocConf: string | null;
  /** The PyTorch release the program will run on, when it is not the traced one. */
  torchVersion: string | null;
  worldSize: number;
  /** GPUs a sharding fix spreads the states over. */
  shardGpus: number;
  /** The batch that fills {batch} when it is not searched, and the batch of a sequence search. */
  batch: number;
  /** The length that fills {seq}; null when the command has none or it is searched. */
  seq: number | null;
  /** With {stage} in the command: the stages to trace, in order. */
  stages: string[] | null;
  /** The command has {batch}: search the largest batch that fits the budget (for stages: the first that breaks). */
  searchBatch: boolean;
  /** Search the longest {seq} that fits the budget at `batch`. */
  searchSeq: boolean;
  /** Keep the trace of each reported step, by its command, for a page of timelines. */
  keepTraces: boolean;
}

export type TracedEstimate =
  | { kind: 'trace'; report: TracedReport; traces: Map<string, StepTrace> }
  | { kind: 'trace-stages'; report: TracedStagesReport; traces: Map<string, StepTrace> };

type Traced = TracedReport & { trace: StepTrace; runTorch: string | null };

/**
 * Traces the step as the options ask and returns the report. Errors of the traced program are GpumemErrors
 * marked `untraceable` in their details (with the tracer's words in `traceError` when it stopped).
 */
export async function estimateTraced(o: TracedEstimateOptions & { stages: null }): Promise<Extract<TracedEstimate, { kind: 'trace' }>>;
export async function estimateTraced(o: TracedEstimateOptions): Promise<TracedEstimate>;
export async function estimateTraced(o: TracedEstimateOptions): Promise<TracedEstimate> {
  const shownCommand = o.entry !== null ? [`--entry ${o.entry}`] : o.command ?? [];
  const conf = o.allocConf;
  const { inputs } = o;
  const traces = new Map<string, StepTrace>();
  const traceRank = async (argv: string[] | null, checkpoint: boolean, world: { rank: number; size: number } | null): Promise<Traced> => {
    let run;
    let trace;
    try {
      run = await runTracedProgram({
        checkpoint, command: argv, entry: o.entry, python: o.python, steps: o.steps, timeoutMs: o.timeoutMs, env: o.env, cwd: o.cwd,
        gpuName: inputs.gpuName, gpuBytes: o.gpuBytes,
        ...(o.torchVersion ? { torchVersion: o.torchVersion } : {}),
        ...(world ? { world } : {}),
      });
      trace = parseStepTrace(run.traceText);
    } catch (e) {
      throw e instanceof GpumemError ? untraceable(e) : e;
    }
    if (o.keepTraces && !checkpoint && world === null) traces.set(JSON.stringify(argv ?? shownCommand), trace);
    if (trace.error !== null) {
      const shown = `${printable((argv ?? shownCommand).join(' '))}${world ? ` as rank ${world.rank} of ${world.size}` : ''}`;
      throw traceStopped({ ...trace, error: trace.error }, shown, run.exitCode, run.stderrTail);
    }
    // The allocator's rules are those of the release the run will use, when it is named.
    const runTorch = o.torchVersion ?? trace.torchVersion;
    return { ...buildTracedReport(trace, argv ?? shownCommand, inputs, allocatorModel(conf, runTorch), conf), trace, runTorch };
  };
  // With a world size, every rank that can differ is traced; the largest one's trace is the report.
  const traceOnce = async (argv: string[] | null, checkpoint = false): Promise<Traced> => {
    if (o.worldSize <= 1) return traceRank(argv, checkpoint, null);
    const perRank: Array<{ traced: number; standsFor: number[]; report: Traced }> = [];
    for (const { traced, standsFor } of representativeRanks(o.worldSize)) {
      perRank.push({ traced, standsFor, report: await traceRank(argv, checkpoint, { rank: traced, size: o.worldSize }) });
    }
    const combined = combineRanks(o.worldSize, perRank);
    // The page draws the rank the report is about.
    if (o.keepTraces && !checkpoint) traces.set(JSON.stringify(argv ?? shownCommand), combined.trace);
    return combined;
  };
  // A probe of a batch search needs only its figure; the fixes (one more trace for checkpointing) are for reports.
  const traceAndFix = async (argv: string[] | null, probe = false): Promise<TracedReport> => {
    const { trace, runTorch, ...report } = await traceOnce(argv);
    if (probe || !report.fit || report.fit.fits) return report;
    const expandableConf = [...(conf ?? '').split(',').filter((kv) => kv.trim() !== '' && !/^\s*expandable_segments\s*:/.test(kv)), 'expandable_segments:True'].join(',');
    const fixes = rankTracedFixes(trace, {
      workspaceBytes: inputs.workspaceBytes,
      contextBytes: inputs.contextBytes,
      budgetBytes: report.fit.budgetBytes,
      shardGpus: o.shardGpus,
      newAllocator: (expandable) => allocatorModel(expandable ? expandableConf : conf, runTorch),
      expandableSegments: optionExists('expandable_segments', runTorch),
    });
    // Checkpointing changes what the program keeps, so it is numbered by tracing the program once more with it.
    // That second trace only prices one fix: when it fails, the estimate and the other fixes still stand.
    let checkpointed: Traced;
    try {
      checkpointed = await traceOnce(argv, true);
    } catch (e) {
      if (!(e instanceof GpumemError)) throw e;
      return { ...report, fixes, notes: [...report.notes, `activation checkpointing not numbered: ${e.message}`] };
    }
    const ckpt = checkpointingFix(checkpointed.trace, checkpointed.nvidiaSmiBytes, report.fit.budgetBytes);
    return { ...report, fixes: insertFix(fixes, ckpt) };
  };
  const rest = o.command ?? [];
  const withBatch = (batch: number, seq = o.seq): string[] =>
    substitute(rest, { batch, accum: 1 }).map((a) => (seq === null ? a : a.replaceAll('{seq}', String(seq))));
  const budgetBytes = inputs.budget ? Math.floor(inputs.budget.capacityBytes * (1 - inputs.budget.margin)) : null;
  if (o.stages !== null) {
    const stages = o.stages;
    const report = await traceStages(stages, o.batch, budgetBytes, o.searchBatch, (stage, batch, probe) => traceAndFix(withBatch(batch).map((a) => a.replaceAll('{stage}', stage)), probe), MAX_PROBES);
    return { kind: 'trace-stages', report, traces };
  }
  let report: TracedReport;
  if (o.searchSeq && budgetBytes !== null) {
    const bySeq = new Map<number, TracedReport>();
    const search = await searchMaxSeq(async (seq) => {
      // The shortest probe keeps its fixes: when even it does not fit, its report is the one printed.
      const r = await traceAndFix(withBatch(o.batch, seq), seq !== SEQ_MULTIPLE);
      bySeq.set(seq, r);
      return r.nvidiaSmiBytes;
    }, budgetBytes, MAX_PROBES);
    report = { ...bySeq.get(Math.max(search.maxSeq, search.multiple))!, seqSearch: { ...search, batch: o.batch } };
  } else if (o.searchBatch && budgetBytes !== null) {
    const byBatch = new Map<number, TracedReport>();
    const search = await searchMaxBatch(async (batch) => {
      // Batch 1 keeps its fixes: when even it does not fit, its report is the one printed.
      const r = await traceAndFix(withBatch(batch), batch !== 1);
      byBatch.set(batch, r);
      return r.nvidiaSmiBytes;
    }, budgetBytes, MAX_PROBES);
    report = { ...byBatch.get(Math.max(search.maxBatch, 1))!, batchSearch: search };
  } else {
    const fills = rest.some((a) => a.includes('{batch}') || a.includes('{seq}'));
    report = await traceAndFix(o.entry === null ? (fills ? withBatch(o.batch) : rest) : null);
  }
  return { kind: 'trace', report, traces };
}
