/** Runs `gpumem estimate -- CMD` / `--entry`: checks the options, traces (orchestrate/) and prints the report. */
import { GpumemError } from '../../core/index.js';
import { parseAllocatorConf } from '../../core/allocator/index.js';
import type { TracedInputs } from '../../core/estimate/index.js';
import { estimateTraced } from '../../orchestrate/index.js';
import { childCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import type { EstimateOptions } from '../options/estimate.js';
import { renderStages, renderTraced } from '../render/estimate-traced.js';
import { writeTracedPage } from './estimate-trace-html.js';

/** Runs the trace for the CLI and prints it; returns whether it fits the budget (true without one). */
export async function runTracedEstimate(ctx: CommandContext<EstimateOptions>, o: EstimateOptions, inputs: TracedInputs): Promise<boolean> {
  const entry = o.entry ?? null;
  if (entry === null) childCommand(ctx.args.rest, 'trace', 'gpumem estimate -- python train.py');
  if (entry !== null && ctx.args.rest.length > 0) {
    throw new GpumemError('USAGE', 'give either --entry or a command after --, not both', { hint: 'gpumem estimate -- python train.py' });
  }
  if (entry !== null && !/^[A-Za-z_][\w.]*:[A-Za-z_]\w*$/.test(entry)) {
    throw new GpumemError('BAD_OPTION_VALUE', `--entry: "${entry}" is not module:function`, { hint: 'e.g. --entry mypkg.train:make_step' });
  }
  // --steps and --trace-timeout are range-checked by the parser (options/estimate.ts).
  const conf = o.allocConf ?? (ctx.env.PYTORCH_CUDA_ALLOC_CONF || ctx.env.PYTORCH_ALLOC_CONF || null);
  // A bad setting is reported before the (slow) trace, not after it.
  if (conf) parseAllocatorConf(conf);
  const usesBatch = entry === null && ctx.args.rest.some((a) => a.includes('{batch}'));
  const usesSeq = entry === null && ctx.args.rest.some((a) => a.includes('{seq}'));
  const usesStage = entry === null && ctx.args.rest.some((a) => a.includes('{stage}'));
  // {seq} without --seq is searched (longest that fits at --batch); that needs a budget, and stages need a length.
  const searchSeq = usesSeq && o.seq === undefined && inputs.budget !== null && !usesStage;
  if (usesSeq && o.seq === undefined && !searchSeq) {
    throw new GpumemError('USAGE', 'the command has {seq} but no --seq', { hint: usesStage ? 'give --seq 2048 for the stages' : 'give --seq 2048, or --gpu to search the longest sequence that fits' });
  }
  const stages = usesStage ? (o.stages ?? '').split(/[\s,]+/).filter((n) => n !== '') : null;
  if (stages !== null && stages.length === 0) throw new GpumemError('USAGE', 'the command has {stage} but --stages names none', { hint: 'e.g. --stages "frozen full"' });
  const result = await estimateTraced({
    command: entry === null ? ctx.args.rest : null,
    entry,
    python: o.python,
    steps: o.steps,
    timeoutMs: o.traceTimeout * 1000,
    env: ctx.env,
    cwd: ctx.cwd,
    gpuBytes: inputs.budget?.capacityBytes ?? 80 * 1024 ** 3,
    inputs,
    allocConf: conf,
    torchVersion: o.torchVersion ?? null,
    worldSize: o.worldSize,
    shardGpus: o.numGpus > 1 ? o.numGpus : 2,
    batch: o.batch,
    seq: o.seq ?? null,
    stages,
    searchBatch: usesBatch,
    searchSeq,
    keepTraces: o.html !== undefined,
  });
  if (result.kind === 'trace-stages') {
    const staged = result.report;
    if (o.html !== undefined) writeTracedPage(ctx, o.html, staged.stages.map((st) => ({ title: `stage ${st.name}`, report: st.report })), staged, result.traces, inputs.workspaceBytes, conf, o.torchVersion ?? null);
    if (o.json) ctx.stdout.write(`${JSON.stringify(staged, null, 2)}\n`);
    else ctx.stdout.write(renderStages(staged, ctx.color));
    return staged.stages.every((st) => st.fits !== false);
  }
  const report = result.report;
  if (o.html !== undefined) writeTracedPage(ctx, o.html, [{ title: 'traced step', report }], report, result.traces, inputs.workspaceBytes, conf, o.torchVersion ?? null);
  if (o.json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else ctx.stdout.write(renderTraced(report, ctx.color));
  return report.fit === null || report.fit.fits || (report.batchSearch?.maxBatch ?? 0) > 0 || (report.seqSearch?.maxSeq ?? 0) > 0;
}
