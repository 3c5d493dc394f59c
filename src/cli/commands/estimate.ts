/** `gpumem estimate`: predicted training memory by phase and stage, max batch and accumulation. */
import { GpumemError } from '../../core/errors.js';
import { parseByteSize } from '../../core/units.js';
import { DEFAULT_ENVIRONMENT, type Environment } from '../../core/estimate/estimate.js';
import { DEFAULT_SETUP, type TrainingSetup } from '../../core/estimate/setup.js';
import { buildEstimateReport, type Budget } from '../../core/estimate/report.js';
import { cublasWorkspaceBytes, findGpu, lazyContext, generationFromName, unknownGpu, type GpuGeneration } from '../../core/estimate/gpus.js';
import { parseStages } from '../../core/estimate/stages.js';
import { checkPrefixes } from '../../core/estimate/tensors.js';
import { parseTorchVersion } from '../../core/allocator/versions.js';
import { EAGER_CONTEXT_BYTES, moduleLoadingFor, parseCudaVersion, type ModuleLoading } from '../../core/estimate/context.js';
import type { ShapeHints } from '../../core/estimate/params.js';
import type { CommandContext, CommandHandler } from '../context.js';
import type { EstimateOptions } from '../options/estimate.js';
import { loadModel } from './estimate-model.js';
import { renderEstimate } from '../render/estimate.js';
import { runTracedEstimate } from './estimate-trace-run.js';
import { refuseOutputOverInputs } from '../output-file.js';

type Opts = EstimateOptions;

const SHAPE_KEYS: ReadonlyArray<Exclude<keyof ShapeHints, 'mlp'> & keyof EstimateOptions> = ['layers', 'hidden', 'heads', 'kvHeads', 'intermediate', 'vocab', 'seq'];

/** Whether the run's PyTorch release (--torch-version) is older than major.minor; false when none is given. */
function releaseBefore(o: Opts, major: number, minor: number): boolean {
  if (o.torchVersion === undefined) return false;
  const v = parseTorchVersion(o.torchVersion);
  if (!v) throw new GpumemError('BAD_OPTION_VALUE', `--torch-version: "${o.torchVersion}" is not a PyTorch release`, { hint: 'give major.minor, e.g. --torch-version 1.10' });
  return v[0] < major || (v[0] === major && v[1] < minor);
}

function setupFrom(o: Opts): TrainingSetup {
  return {
    ...DEFAULT_SETUP,
    precision: o.precision,
    optimizer: o.optimizer,
    optimizerImpl: o.optimizerImpl,
    freeze: o.freeze ?? [],
    loraRank: o.loraRank ?? 0,
    loraModules: o.loraModules ?? DEFAULT_SETUP.loraModules,
    loraDropout: o.loraDropout,
    checkpointing: o.checkpointing,
    ema: o.ema,
    sharding: o.sharding,
    gpus: o.numGpus,
    batch: o.batch,
    seq: o.seq ?? null,
    activationBytesPerSample: o.activationBytesPerSample ?? null,
    // Measured on the program as given, with its own frozen modules: no share is taken off for those again.
    activationsMeasuredFrozen: o.freeze ?? [],
    attention: o.attention,
    // zero_grad() zeroed in place by default before torch 2.0 (pytorch/pytorch#92731).
    keepGrads: o.keepGrads || releaseBefore(o, 2, 0),
    softmaxKeepsInput: releaseBefore(o, 1, 11),
  };
}

/** --context, else eager loading's context with --cuda before 11.7, else the GPU generation's lazy-loading default. */
function contextFor(o: Opts, generation: GpuGeneration | null): { contextBytes: number; loading: ModuleLoading } {
  const loading = o.cuda === undefined ? 'lazy' : moduleLoadingFor(parseCudaVersion(o.cuda));
  if (o.context !== undefined) return { contextBytes: o.context, loading };
  if (loading === 'eager') return { contextBytes: EAGER_CONTEXT_BYTES, loading };
  return { contextBytes: generation ? lazyContext(generation, o.cuda === undefined ? null : parseCudaVersion(o.cuda)).bytes : DEFAULT_ENVIRONMENT.contextBytes, loading };
}

/** Resolves --gpu into a budget and the generation that picks context and workspace defaults. */
async function resolveGpu(ctx: CommandContext<Opts>, o: Opts, margin: number): Promise<{ budget: Budget | null; generation: GpuGeneration | null; name?: string }> {
  const value = o.gpu;
  if (value === undefined) return { budget: null, generation: null };
  if (value === 'auto') return await liveGpu(ctx, o, margin);
  const known = findGpu(value);
  if (known) {
    // A marketing size is what the chips hold, more than the driver will report: say so wherever the name shows.
    const label = known.measured ? known.id : `${known.id} (marketing size, an upper bound)`;
    return { budget: { gpu: label, capacityBytes: known.totalBytes - (known.reservedBytes ?? 0), margin }, generation: known.generation, name: label };
  }
  let bytes: number;
  try {
    bytes = parseByteSize(value, '--gpu');
  } catch {
    throw unknownGpu(value);
  }
  return { budget: { gpu: value, capacityBytes: bytes, margin }, generation: null };
}

/** `--gpu auto`: the free memory of the live GPU (index --gpu-index, default 0) read through the sources layer. */
async function liveGpu(ctx: CommandContext<Opts>, o: Opts, margin: number): Promise<{ budget: Budget; generation: GpuGeneration | null }> {
  const { openSourceFromContext } = await import('../open-source.js');
  const source = await openSourceFromContext(ctx);
  try {
    const sample = await source.readSample();
    const index = o.gpuIndex;
    const device = sample.devices.find((d) => d.index === index);
    if (!device) throw new GpumemError('BAD_OPTION_VALUE', `--gpu-index: no GPU ${index}`, { hint: `GPUs present: ${sample.devices.map((d) => d.index).join(', ') || 'none'}` });
    const free = device.memory.freeBytes;
    if (free === null) throw new GpumemError('FAILED', `GPU ${index} does not report its free memory`, { hint: 'give --gpu as a size, e.g. --gpu 24GiB' });
    return { budget: { gpu: `${device.name ?? `GPU ${index}`} (free now)`, capacityBytes: free, margin }, generation: generationFromName(device.name ?? '') };
  } finally {
    source.close();
  }
}

/**
 * Every file an estimate may read, for --html not to overwrite: the model, the recording and driver, the
 * --entry module, and each argument of the traced command (and each `--opt=VALUE`'s value) that names a file.
 */
function estimateInputs(ctx: CommandContext<Opts>): string[] {
  const o = ctx.args.options;
  const args = ctx.args.rest.flatMap((a) => (a.includes('=') ? [a, a.slice(a.indexOf('=') + 1)] : [a]));
  const entryModule = o.entry?.split(':')[0];
  const entryFiles = entryModule ? [`${entryModule.replace(/\./g, '/')}.py`, `${entryModule.replace(/\./g, '/')}/__init__.py`] : [];
  return [...ctx.args.positionals, ...args, ...entryFiles, o.replay, o.nvmlLib].filter((p): p is string => p !== undefined);
}

export const run: CommandHandler<EstimateOptions> = async (ctx) => {
  const o = ctx.args.options;
  const margin = o.margin / 100;
  // Bad --torch-version or --cuda values are reported before anything (a slow trace) runs.
  releaseBefore(o, 0, 0);
  const { budget, generation, name } = await resolveGpu(ctx, o, margin);
  contextFor(o, generation);
  if (o.html !== undefined) refuseOutputOverInputs('--html', o.html, estimateInputs(ctx), ctx.cwd);
  if (ctx.args.rest.length > 0 || o.entry !== undefined) {
    const fits = await runTracedEstimate(ctx, o, {
      budget,
      gpuName: name ?? budget?.gpu ?? 'NVIDIA H100 80GB HBM3',
      contextBytes: contextFor(o, generation).contextBytes,
      workspaceBytes: cublasWorkspaceBytes(generation),
    });
    return fits ? { kind: 'ok' } : { kind: 'findings' };
  }
  if (o.worldSize > 1) {
    throw new GpumemError('USAGE', '--world-size traces the ranks of a training command', { hint: 'gpumem estimate --world-size 2 -- python train.py; from a config, --sharding and --num-gpus spread the states' });
  }
  if (o.html !== undefined) {
    throw new GpumemError('USAGE', '--html draws the timeline of a traced step', { hint: 'gpumem estimate --html OUT -- python train.py' });
  }
  // Whole numbers ≥ 1, checked by the parser (options/estimate.ts).
  const hints: ShapeHints = {};
  for (const key of SHAPE_KEYS) {
    const v = o[key];
    if (v !== undefined) hints[key] = v;
  }
  if (o.mlp !== undefined) hints.mlp = o.mlp;
  if (ctx.args.positionals.length > 1) {
    throw new GpumemError('USAGE', `one model at a time; got ${ctx.args.positionals.length}`, { hint: 'see gpumem estimate --help' });
  }
  const loaded = loadModel(ctx.args.positionals[0], o.params, hints);
  const env: Environment = {
    contextBytes: contextFor(o, generation).contextBytes,
    workspaceBytes: cublasWorkspaceBytes(generation),
    fragmentation: o.fragmentation / 100,
  };
  const stagesText = o.stages;
  const stages = stagesText === undefined ? null : parseStages(stagesText);
  checkPrefixes(loaded.model.tensors, o.freeze ?? [], '--freeze');
  for (const st of stages ?? []) checkPrefixes(loaded.model.tensors, st.overrides.freeze ?? [], `--stages ${st.name} freeze`);
  checkPrefixes(loaded.model.tensors, (o.unfreeze ?? []).flatMap((g) => g.split('+').filter((p) => p !== '')), '--unfreeze');
  const report = buildEstimateReport({
    model: loaded.model,
    source: loaded.source,
    setup: setupFrom(o),
    env,
    budget,
    effectiveBatch: o.effectiveBatch ?? null,
    stages,
    unfreezeGroups: o.unfreeze ?? null,
    contextGiven: o.context !== undefined,
    moduleLoading: contextFor(o, generation).loading,
  });
  if (o.json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else ctx.stdout.write(renderEstimate(report, ctx.color));
  const breaks = (report.fit && !report.fit.fits) || (report.stages ?? []).some((s) => s.fits === false);
  return breaks ? { kind: 'findings' } : { kind: 'ok' };
};
