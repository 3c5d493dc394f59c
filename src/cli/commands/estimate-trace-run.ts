/** Runs `gpumem estimate -- CMD` / `--entry`: traces (once, or per probed batch) and prints the report. */
import { GpumemError } from '../../core/index.js';
import { parseAllocatorConf } from '../../core/allocator/index.js';
import { optionExists } from '../../core/allocator/versions.js';
import { parseStepTrace, searchMaxBatch, searchMaxSeq, SEQ_MULTIPLE, type StepTrace } from '../../core/estimate/index.js';
import { checkpointingFix, insertFix, rankTracedFixes } from '../../core/estimate/trace-fixes.js';
import { runTracedProgram, substitute } from '../../supervise/index.js';
import { childCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import type { EstimateOptions } from '../options/estimate.js';
import { traceStages } from './estimate-trace-stages.js';
import { allocatorModel, buildTracedReport, type TracedInputs, type TracedReport } from '../../core/estimate/traced-report.js';
import { combineRanks, representativeRanks } from '../../core/estimate/traced-ranks.js';
import { renderStages, renderTraced } from '../render/estimate-traced.js';
import { printable } from '../../core/text.js';
import { writeTracedPage } from './estimate-trace-html.js';

// Each probe is a full trace (tens of seconds for a large model); seven settle the usual curves.
const MAX_PROBES = 7;

function tracedHint(trace: StepTrace): string {
  if (/^ModuleNotFoundError|^ImportError/.test(trace.error ?? '')) {
    return 'install the missing package into the Python environment that runs the script (or run gpumem with that environment\'s python)';
  }
  if (/^--world-size: torch /.test(trace.error ?? '')) {
    return 'run the command with a Python environment whose torch is a checked release, or estimate one rank without --world-size';
  }
  if (/^data-dependent control flow/.test(trace.error ?? '')) {
    return 'sizes that depend on values are traced at their largest; make that branch independent of the data, or trace a step function without it (--entry)';
  }
  if (trace.stepsDone > 0) return `traced ${trace.stepsDone} step(s); lower --steps or check the script`;
  return 'the tracer needs one full training step (forward, backward, optimizer.step()) run by this command';
}

const OWN_FAILURE_HINT = 'that is the program\'s own error, before any training step: run the same command with the same python to see it whole';

/**
 * For a program that exited with an error status before its first step without an exception the tracer saw
 * (sys.exit after printing its own error, an argument error): that status and the last lines it wrote to stderr,
 * which say what went wrong better than "ended without importing torch"; null otherwise.
 */
function programFailure(trace: StepTrace, exitCode: number | null, stderrTail: string): string | null {
  const before = /^the program ended (without importing torch|before its first training step)/.exec(trace.error ?? '');
  if (!before || exitCode === null || exitCode === 0) return null;
  const lines = stderrTail.split('\n').map((l) => l.trim()).filter((l) => l !== '').slice(-3).map((l) => printable(l.slice(0, 300)));
  const when = before[1] === 'without importing torch' ? 'before importing torch' : 'before its first training step';
  return `the program exited with status ${exitCode} ${when}${lines.length > 0 ? `; its last error lines: ${lines.join(' | ')}` : ' and wrote nothing to stderr'}`;
}

/** Runs the trace for the CLI and prints it; returns whether it fits the budget (true without one). */
export async function runTracedEstimate(ctx: CommandContext<EstimateOptions>, o: EstimateOptions, inputs: TracedInputs): Promise<boolean> {
  const entry = o.entry ?? null;
  const command = entry !== null ? [`--entry ${entry}`] : childCommand(ctx.args.rest, 'trace', 'gpumem estimate -- python train.py');
  if (entry !== null && ctx.args.rest.length > 0) {
    throw new GpumemError('USAGE', 'give either --entry or a command after --, not both', { hint: 'gpumem estimate -- python train.py' });
  }
  if (entry !== null && !/^[A-Za-z_][\w.]*:[A-Za-z_]\w*$/.test(entry)) {
    throw new GpumemError('BAD_OPTION_VALUE', `--entry: "${entry}" is not module:function`, { hint: 'e.g. --entry mypkg.train:make_step' });
  }
  // --steps and --trace-timeout are range-checked by the parser (options/estimate.ts).
  const steps = o.steps;
  const timeoutS = o.traceTimeout;
  const conf = o.allocConf ?? (ctx.env.PYTORCH_CUDA_ALLOC_CONF || ctx.env.PYTORCH_ALLOC_CONF || null);
  // A bad setting is reported before the (slow) trace, not after it.
  if (conf) parseAllocatorConf(conf);
  // With --html, each trace is kept for the page (by its command) until the report is written.
  const traces = new Map<string, StepTrace>();
  const traceRank = async (argv: string[] | null, checkpoint: boolean, world: { rank: number; size: number } | null): Promise<TracedReport & { trace: StepTrace; runTorch: string | null }> => {
    const run = await runTracedProgram({
      checkpoint,
      command: argv,
      entry,
      python: o.python,
      steps,
      timeoutMs: timeoutS * 1000,
      env: ctx.env,
      cwd: ctx.cwd,
      gpuName: inputs.gpuName,
      gpuBytes: inputs.budget?.capacityBytes ?? 80 * 1024 ** 3,
      ...(o.torchVersion ? { torchVersion: o.torchVersion } : {}),
      ...(world ? { world } : {}),
    });
    const trace = parseStepTrace(run.traceText);
    if (o.html !== undefined && !checkpoint && world === null) traces.set(JSON.stringify(argv ?? command), trace);
    if (trace.error !== null) {
      const shown = `${printable((argv ?? command).join(' '))}${world ? ` as rank ${world.rank} of ${world.size}` : ''}`;
      const own = programFailure(trace, run.exitCode, run.stderrTail);
      if (own) throw new GpumemError('CHILD_FAILED', `tracing ${shown} stopped: ${own}`, { hint: OWN_FAILURE_HINT });
      throw new GpumemError('CHILD_FAILED', `tracing ${shown} stopped: ${printable(trace.error)}`, {
        hint: tracedHint(trace),
      });
    }
    // The allocator's rules are those of the release the run will use, when it is named.
    const runTorch = o.torchVersion ?? trace.torchVersion;
    return { ...buildTracedReport(trace, argv ?? command, inputs, allocatorModel(conf, runTorch), conf), trace, runTorch };
  };
  // With --world-size, every rank that can differ is traced; the largest one's trace is the report.
  const traceOnce = async (argv: string[] | null, checkpoint = false): Promise<TracedReport & { trace: StepTrace; runTorch: string | null }> => {
    if (o.worldSize <= 1) return traceRank(argv, checkpoint, null);
    const perRank: Array<{ traced: number; standsFor: number[]; report: TracedReport & { trace: StepTrace; runTorch: string | null } }> = [];
    for (const { traced, standsFor } of representativeRanks(o.worldSize)) {
      perRank.push({ traced, standsFor, report: await traceRank(argv, checkpoint, { rank: traced, size: o.worldSize }) });
    }
    const combined = combineRanks(o.worldSize, perRank);
    // The page draws the rank the report is about.
    if (o.html !== undefined && !checkpoint) traces.set(JSON.stringify(argv ?? command), combined.trace);
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
      shardGpus: o.numGpus > 1 ? o.numGpus : 2,
      newAllocator: (expandable) => allocatorModel(expandable ? expandableConf : conf, runTorch),
      expandableSegments: optionExists('expandable_segments', runTorch),
    });
    // Checkpointing changes what the program keeps, so it is numbered by tracing the program once more with it.
    // That second trace only prices one fix: when it fails, the estimate and the other fixes still stand.
    let checkpointed: Awaited<ReturnType<typeof traceOnce>>;
    try {
      checkpointed = await traceOnce(argv, true);
    } catch (e) {
      if (!(e instanceof GpumemError)) throw e;
      return { ...report, fixes, notes: [...report.notes, `activation checkpointing not numbered: ${e.message}`] };
    }
    const ckpt = checkpointingFix(checkpointed.trace, checkpointed.nvidiaSmiBytes, report.fit.budgetBytes);
    return { ...report, fixes: insertFix(fixes, ckpt) };
  };
  const usesBatch = entry === null && ctx.args.rest.some((a) => a.includes('{batch}'));
  const usesSeq = entry === null && ctx.args.rest.some((a) => a.includes('{seq}'));
  const usesStage = entry === null && ctx.args.rest.some((a) => a.includes('{stage}'));
  // {seq} without --seq is searched (longest that fits at --batch); that needs a budget, and stages need a length.
  const searchSeq = usesSeq && o.seq === undefined && inputs.budget !== null && !usesStage;
  if (usesSeq && o.seq === undefined && !searchSeq) {
    throw new GpumemError('USAGE', 'the command has {seq} but no --seq', { hint: usesStage ? 'give --seq 2048 for the stages' : 'give --seq 2048, or --gpu to search the longest sequence that fits' });
  }
  const withBatch = (batch: number, seq = o.seq): string[] =>
    substitute(ctx.args.rest, { batch, accum: 1 }).map((a) => (seq === undefined ? a : a.replaceAll('{seq}', String(seq))));
  if (usesStage) {
    const names = (o.stages ?? '').split(/[\s,]+/).filter((n) => n !== '');
    if (names.length === 0) throw new GpumemError('USAGE', 'the command has {stage} but --stages names none', { hint: 'e.g. --stages "frozen full"' });
    const budgetBytes = inputs.budget ? Math.floor(inputs.budget.capacityBytes * (1 - inputs.budget.margin)) : null;
    const staged = await traceStages(names, o.batch, budgetBytes, usesBatch, (stage, batch, probe) => traceAndFix(withBatch(batch).map((a) => a.replaceAll('{stage}', stage)), probe), MAX_PROBES);
    if (o.html !== undefined) writeTracedPage(ctx, o.html, staged.stages.map((st) => ({ title: `stage ${st.name}`, report: st.report })), staged, traces, inputs.workspaceBytes, conf, o.torchVersion ?? null);
    if (o.json) ctx.stdout.write(`${JSON.stringify(staged, null, 2)}\n`);
    else ctx.stdout.write(renderStages(staged, ctx.color));
    return staged.stages.every((st) => st.fits !== false);
  }
  let report: TracedReport;
  if (searchSeq && inputs.budget) {
    const bySeq = new Map<number, TracedReport>();
    const budgetBytes = Math.floor(inputs.budget.capacityBytes * (1 - inputs.budget.margin));
    const search = await searchMaxSeq(async (seq) => {
      // The shortest probe keeps its fixes: when even it does not fit, its report is the one printed.
      const r = await traceAndFix(withBatch(o.batch, seq), seq !== SEQ_MULTIPLE);
      bySeq.set(seq, r);
      return r.nvidiaSmiBytes;
    }, budgetBytes, MAX_PROBES);
    report = { ...bySeq.get(Math.max(search.maxSeq, search.multiple))!, seqSearch: { ...search, batch: o.batch } };
  } else if (usesBatch && inputs.budget) {
    const byBatch = new Map<number, TracedReport>();
    const budgetBytes = Math.floor(inputs.budget.capacityBytes * (1 - inputs.budget.margin));
    const search = await searchMaxBatch(async (batch) => {
      // Batch 1 keeps its fixes: when even it does not fit, its report is the one printed.
      const r = await traceAndFix(withBatch(batch), batch !== 1);
      byBatch.set(batch, r);
      return r.nvidiaSmiBytes;
    }, budgetBytes, MAX_PROBES);
    report = { ...byBatch.get(Math.max(search.maxBatch, 1))!, batchSearch: search };
  } else {
    report = await traceAndFix(entry === null ? (usesBatch || usesSeq ? withBatch(o.batch) : ctx.args.rest) : null);
  }
  if (o.html !== undefined) writeTracedPage(ctx, o.html, [{ title: 'traced step', report }], report, traces, inputs.workspaceBytes, conf, o.torchVersion ?? null);
  if (o.json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else ctx.stdout.write(renderTraced(report, ctx.color));
  return report.fit === null || report.fit.fits || (report.batchSearch?.maxBatch ?? 0) > 0 || (report.seqSearch?.maxSeq ?? 0) > 0;
}
