/**
 * `gpumem run --batch auto`: the batch chosen for the run before it starts. The command's training step is traced
 * on fake tensors at a few batch sizes (the traced estimate's search) against the free memory of the GPUs the run
 * will use, less a margin; the largest that fits is the run's batch, and with --effective-batch the accumulation
 * that keeps the global batch is traced once more, since gradients then stay alive through the next forward.
 * A command that cannot be traced is measured instead when it has {steps} (fit's short runs); otherwise the
 * reason is the error. Every choice says why, and the run's real peak is set beside the prediction afterwards.
 */
import { GpumemError } from '../../core/index.js';
import { planAccumulation, type AccumulationPlan } from '../../core/estimate/batch.js';
import { cublasWorkspaceBytes, generationFromName, lazyContext } from '../../core/estimate/gpus.js';
import { searchMaxBatch } from '../../core/estimate/index.js';
import { printable } from '../../core/text.js';
import { formatBytes } from '../../core/units.js';
import type { Device, Sample } from '../../core/types.js';
import type { RunReport } from '../../core/run/report.js';
import { estimateTraced, runFitLoop } from '../../orchestrate/index.js';
import type { GpuSource } from '../../sources/index.js';
import { chooseGpus, substitute } from '../../supervise/index.js';
import type { CommandContext } from '../context.js';
import type { RunOptions } from '../options/supervise.js';

/** Probes of the batch search: each is a full trace. */
const MAX_PROBES = 7;
/** Steps each probe traces: two, so optimizer state and persistent gradients are in the figure. */
const TRACE_STEPS = 2;
const TRACE_TIMEOUT_MS = 600_000;
/** Steps of each measured run when tracing fails and the command takes {steps}. */
const FIT_STEPS = 5;

/** What `--batch auto` chose and why (the `autoBatch` member of `run --json`). */
export interface AutoBatch {
  method: 'trace' | 'measured';
  batch: number;
  accum: number;
  /** The largest batch that fitted without accumulation, and whether the one above was seen not to fit. */
  maxBatch: number;
  exact: boolean;
  /** The GPUs sized for, their smallest free memory, and the budget after the margin. */
  gpus: number[];
  /** The same GPUs by UUID, to pin the run to them. */
  gpuUuids: string[];
  freeBytes: number;
  budgetBytes: number;
  /** The nvidia-smi figure predicted for the chosen batch and accumulation (null when measured). */
  predictedBytes: number | null;
  effectiveBatch: number | null;
  accumulation: AccumulationPlan | null;
  /** One line per decision, printed before the run starts. */
  reasons: string[];
  /** Filled after the run: the largest peak of the run's processes on one chosen GPU (NVML). */
  measuredPeakBytes: number | null;
}

/** The devices the run will use: those --gpus names, else every GPU (the program's cuda:0 is the first). */
function devicesFor(spec: string | undefined, sample: Sample): Device[] {
  const choice = chooseGpus(spec, sample);
  return choice ? choice.devices : [...sample.devices].sort((a, b) => a.index - b.index);
}

export async function chooseAutoBatch(ctx: CommandContext<RunOptions>, o: RunOptions, argv: string[], source: GpuSource): Promise<AutoBatch> {
  if (!argv.some((a) => a.includes('{batch}'))) {
    throw new GpumemError('USAGE', '--batch auto needs {batch} in the command, where the chosen batch goes', { hint: 'gpumem run --batch auto -- python train.py --batch-size {batch}' });
  }
  if (o.effectiveBatch !== undefined && !argv.some((a) => a.includes('{accum}'))) {
    throw new GpumemError('USAGE', '--effective-batch needs {accum} in the command, where the accumulation steps go', { hint: 'gpumem run --batch auto --effective-batch 256 -- python train.py --bs {batch} --accum {accum}' });
  }
  const sample = await source.readSample();
  const devices = devicesFor(o.gpus, sample);
  if (devices.length === 0) throw new GpumemError('NO_GPU_ACCESS', '--batch auto: no GPU to size the batch for', { hint: 'give --batch N' });
  const free = devices.map((d) => d.memory.freeBytes);
  if (free.some((f) => f === null)) throw new GpumemError('FAILED', '--batch auto: a chosen GPU does not report its free memory', { hint: 'give --batch N, or try --source smi' });
  const freeBytes = Math.min(...(free as number[]));
  const budgetBytes = Math.floor(freeBytes * (1 - o.margin / 100));
  const first = devices[0]!;
  const where = `${devices.length > 1 ? `GPUs ${devices.map((d) => d.index).join(',')} (the smallest free memory)` : `GPU ${first.index}`}: ${formatBytes(freeBytes)} free, ${formatBytes(budgetBytes)} after the ${o.margin} % margin`;
  const chosen = await byTrace(ctx, o, argv, first, devices, freeBytes, budgetBytes, where);
  if (!('untraceable' in chosen)) return chosen;
  if (!argv.some((a) => a.includes('{steps}'))) {
    throw new GpumemError('FAILED', `--batch auto: the training step could not be traced: ${chosen.untraceable}`, {
      hint: 'add {steps} to the command (a step count) so short runs can measure it instead, or give --batch N',
    });
  }
  return await byMeasuring(ctx, o, argv, source, devices, freeBytes, budgetBytes, where, chosen.untraceable);
}

/** The traced choice, or why the step could not be traced (then the caller may measure instead). */
async function byTrace(ctx: CommandContext<RunOptions>, o: RunOptions, argv: string[], first: Device, devices: Device[], freeBytes: number, budgetBytes: number, where: string): Promise<AutoBatch | { untraceable: string }> {
  try {
    return await traceChoice(ctx, o, argv, first, devices, freeBytes, budgetBytes, where);
  } catch (e) {
    if (e instanceof GpumemError && e.details?.untraceable === true) return { untraceable: e.message };
    throw e;
  }
}

async function traceChoice(ctx: CommandContext<RunOptions>, o: RunOptions, argv: string[], first: Device, devices: Device[], freeBytes: number, budgetBytes: number, where: string): Promise<AutoBatch> {
  const generation = generationFromName(first.name ?? '');
  const inputs = { budget: null, gpuName: first.name ?? 'unknown GPU', contextBytes: lazyContext(generation).bytes, workspaceBytes: cublasWorkspaceBytes(generation) };
  const conf = ctx.env.PYTORCH_CUDA_ALLOC_CONF || ctx.env.PYTORCH_ALLOC_CONF || null;
  const traced = async (batch: number, accum: number): Promise<number> => {
    const command = substitute(argv, { batch, accum }).map((a) => a.replaceAll('{steps}', String(TRACE_STEPS)));
    try {
      const { report } = await estimateTraced({
        command, entry: null, python: 'python3', steps: TRACE_STEPS, timeoutMs: TRACE_TIMEOUT_MS,
        env: { ...ctx.env, GPUMEM_BATCH: String(batch), GPUMEM_ACCUM: String(accum) }, cwd: ctx.cwd,
        gpuBytes: first.memory.totalBytes ?? freeBytes, inputs, allocConf: conf, torchVersion: null,
        worldSize: 1, shardGpus: 2, batch, seq: null, stages: null, searchBatch: false, searchSeq: false, keepTraces: false,
      });
      return report.nvidiaSmiBytes;
    } catch (e) {
      if (!(e instanceof GpumemError) || e.details?.untraceable !== true) throw e;
      // The tracer's own words, shortened, say why better than the estimate's sentence around them.
      const traceError = e.details.traceError;
      throw new GpumemError('CHILD_FAILED', typeof traceError === 'string' ? printable(traceError.slice(0, 300)) : e.message, { details: { untraceable: true } });
    }
  };
  ctx.stderr.write(`gpumem: batch auto: tracing the step at a few batch sizes for ${where}\n`);
  const search = await searchMaxBatch((b) => traced(b, 1), budgetBytes, MAX_PROBES);
  if (search.maxBatch === 0) {
    const one = search.probes.find((p) => p.batch === 1);
    throw new GpumemError('FAILED', `--batch auto: even batch 1 needs ${formatBytes(one?.deviceBytes ?? 0)}, more than the ${formatBytes(budgetBytes)} available on ${where.split(':')[0]}`, {
      hint: 'free the GPU, choose another with --gpus, or see the fixes: gpumem estimate --gpu SIZE -- COMMAND',
    });
  }
  const reasons = [`traced batch ${search.maxBatch} fits (${formatBytes(search.probes.find((p) => p.batch === search.maxBatch)!.deviceBytes)} as nvidia-smi would count it)${search.exact ? `, batch ${search.maxBatch + 1} does not (${formatBytes(search.probes.find((p) => p.batch === search.maxBatch + 1)!.deviceBytes)})` : ''}, on ${where}`];
  let batch = search.maxBatch;
  let accum = 1;
  let predicted = search.probes.find((p) => p.batch === batch)!.deviceBytes;
  let plan: AccumulationPlan | null = null;
  if (o.effectiveBatch !== undefined) {
    // With accumulation the gradients outlive each backward, so the plan is traced as it will run, and the
    // micro-batch lowered until it fits.
    for (let limit = search.maxBatch; limit >= 1; ) {
      plan = planAccumulation(o.effectiveBatch, limit);
      if (plan === null) break;
      if (plan.steps === 1) {
        batch = plan.microBatch;
        predicted = await traced(batch, 1);
        break;
      }
      const bytes = await traced(plan.microBatch, plan.steps);
      if (bytes <= budgetBytes) {
        [batch, accum, predicted] = [plan.microBatch, plan.steps, bytes];
        break;
      }
      reasons.push(`batch ${plan.microBatch} × ${plan.steps} accumulation steps needs ${formatBytes(bytes)}: gradients stay through the next forward`);
      limit = plan.microBatch - 1;
      if (limit < 1) throw new GpumemError('FAILED', `--batch auto: no micro-batch reaches --effective-batch ${o.effectiveBatch} within ${formatBytes(budgetBytes)}`, { hint: 'give a smaller --effective-batch, or free the GPU' });
    }
    if (plan) reasons.push(`effective batch ${o.effectiveBatch}: batch ${batch} × ${accum} accumulation step${accum > 1 ? 's' : ''}${plan.realisedBatch !== o.effectiveBatch ? ` = ${plan.realisedBatch} (the nearest the GPU allows)` : ''}`);
  }
  return {
    method: 'trace', batch, accum, maxBatch: search.maxBatch, exact: search.exact, gpus: devices.map((d) => d.index), gpuUuids: devices.map((d) => d.uuid ?? String(d.index)), freeBytes, budgetBytes,
    predictedBytes: predicted, effectiveBatch: o.effectiveBatch ?? null, accumulation: plan, reasons, measuredPeakBytes: null,
  };
}

async function byMeasuring(ctx: CommandContext<RunOptions>, o: RunOptions, argv: string[], source: GpuSource, devices: Device[], freeBytes: number, budgetBytes: number, where: string, why: string): Promise<AutoBatch> {
  ctx.stderr.write(`gpumem: batch auto: the step could not be traced (${why}); measuring short runs of ${FIT_STEPS} steps instead\n`);
  const first = devices[0]!;
  const report = await runFitLoop({
    argv: argv.map((a) => a.replaceAll('{accum}', '1')), steps: FIT_STEPS, fillPct: 100 - o.margin, gpus: first.uuid ?? String(first.index), worldSize: 1,
    intervalMs: o.intervalMs, companion: !o.noCompanion, probes: [2, 4], maxBatch: 65536, maxRuns: 8, runTimeoutMs: 600_000,
    effectiveBatch: o.effectiveBatch ?? null, source, cwd: ctx.cwd, env: ctx.env,
    onRun: (batch, steps) => ctx.stderr.write(`gpumem: batch auto: measuring batch ${batch} for ${steps} steps\n`),
  });
  if (report.batch === null || report.batch < 1) throw new GpumemError('FAILED', `--batch auto: no batch fits on ${where.split(':')[0]} (measured)`, { hint: 'free the GPU or choose another with --gpus' });
  const plan = report.accumulation;
  return {
    method: 'measured', batch: plan ? plan.microBatch : report.batch, accum: plan ? plan.steps : 1, maxBatch: report.batch, exact: true,
    gpus: devices.map((d) => d.index), gpuUuids: devices.map((d) => d.uuid ?? String(d.index)), freeBytes, budgetBytes, predictedBytes: null, effectiveBatch: o.effectiveBatch ?? null, accumulation: plan,
    reasons: [`measured: batch ${report.batch} ran ${FIT_STEPS} steps within ${where}`], measuredPeakBytes: null,
  };
}

/** The largest peak of the run's processes on one of `gpus` in its first attempt (the one at the chosen batch). */
export function measuredPeak(report: RunReport, gpus: readonly number[]): number | null {
  const peaks = (report.attempts[0]?.peaks ?? []).filter((p) => gpus.includes(p.index));
  return peaks.length === 0 ? null : Math.max(...peaks.map((p) => p.peakBytes));
}

/** The prediction beside what the run really peaked at. */
export function autoCheck(a: AutoBatch): string {
  const measured = a.measuredPeakBytes ?? 0;
  if (a.predictedBytes === null) return `the run peaked at ${formatBytes(measured)} of the ${formatBytes(a.budgetBytes)} budget`;
  const off = ((a.predictedBytes - measured) / Math.max(1, measured)) * 100;
  return `predicted ${formatBytes(a.predictedBytes)}, the run peaked at ${formatBytes(measured)} (${off >= 0 ? '+' : ''}${off.toFixed(1)} %) of the ${formatBytes(a.budgetBytes)} budget`;
}

/** `autoBatch` of `run --json`: the choice without the internal UUID list. */
export function autoBatchJson(a: AutoBatch): Omit<AutoBatch, 'gpuUuids'> {
  const { gpuUuids: _uuids, ...rest } = a;
  return rest;
}
