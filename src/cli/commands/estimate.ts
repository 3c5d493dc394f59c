/** `gpumem estimate`: predicted training memory by phase and stage, max batch and accumulation. */
import { GpumemError, parseByteSize } from '../../core/index.js';
import {
  DEFAULT_ENVIRONMENT,
  DEFAULT_SETUP,
  buildEstimateReport,
  cublasWorkspaceBytes,
  defaultContextBytes,
  findGpu,
  generationFromName,
  parseStages,
  unknownGpu,
  type Budget,
  type Environment,
  type GpuGeneration,
  type ShapeHints,
  type TrainingSetup,
} from '../../core/estimate/index.js';
import type { CommandContext, CommandHandler } from '../context.js';
import { loadModel } from './estimate-model.js';
import { renderEstimate } from './estimate-render.js';
import { runTracedEstimate } from './estimate-traced.js';

type Opts = Record<string, unknown>;

const num = (o: Opts, k: string): number | undefined => (typeof o[k] === 'number' ? (o[k] as number) : undefined);
const str = (o: Opts, k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
const list = (o: Opts, k: string): string[] | undefined => (Array.isArray(o[k]) ? (o[k] as string[]) : undefined);

function positive(o: Opts, k: string, flag: string): number | undefined {
  const v = num(o, k);
  if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) {
    throw new GpumemError('BAD_OPTION_VALUE', `${flag}: "${v}" is not a positive whole number`, { hint: `e.g. ${flag} 8` });
  }
  return v;
}

const SHAPE_FLAGS: ReadonlyArray<[keyof ShapeHints, string]> = [
  ['layers', '--layers'],
  ['hidden', '--hidden'],
  ['heads', '--heads'],
  ['kvHeads', '--kv-heads'],
  ['intermediate', '--intermediate'],
  ['vocab', '--vocab'],
  ['seq', '--seq'],
];

function percent(o: Opts, k: string, flag: string, fallback: number): number {
  const v = num(o, k) ?? fallback;
  if (v < 0 || v >= 100) throw new GpumemError('BAD_OPTION_VALUE', `${flag}: ${v} is not a percentage in [0, 100)`, { hint: `e.g. ${flag} 8` });
  return v / 100;
}

function setupFrom(o: Opts): TrainingSetup {
  return {
    ...DEFAULT_SETUP,
    precision: (str(o, 'precision') as TrainingSetup['precision']) ?? DEFAULT_SETUP.precision,
    optimizer: (str(o, 'optimizer') as TrainingSetup['optimizer']) ?? DEFAULT_SETUP.optimizer,
    optimizerImpl: (str(o, 'optimizerImpl') as TrainingSetup['optimizerImpl']) ?? DEFAULT_SETUP.optimizerImpl,
    freeze: list(o, 'freeze') ?? [],
    loraRank: positive(o, 'loraRank', '--lora-rank') ?? 0,
    loraModules: list(o, 'loraModules') ?? DEFAULT_SETUP.loraModules,
    checkpointing: (str(o, 'checkpointing') as TrainingSetup['checkpointing']) ?? 'none',
    ema: o.ema === true,
    sharding: (str(o, 'sharding') as TrainingSetup['sharding']) ?? 'none',
    gpus: positive(o, 'numGpus', '--num-gpus') ?? 1,
    batch: positive(o, 'batch', '--batch') ?? 1,
    seq: positive(o, 'seq', '--seq') ?? null,
    activationBytesPerSample: num(o, 'activationBytesPerSample') ?? null,
    attention: (str(o, 'attention') as TrainingSetup['attention']) ?? 'sdpa',
  };
}

/** Resolves --gpu into a budget and the generation that picks context and workspace defaults. */
async function resolveGpu(ctx: CommandContext, o: Opts, margin: number): Promise<{ budget: Budget | null; generation: GpuGeneration | null; name?: string }> {
  const value = str(o, 'gpu');
  if (value === undefined) return { budget: null, generation: null };
  if (value === 'auto') return await liveGpu(ctx, o, margin);
  const known = findGpu(value);
  if (known) return { budget: { gpu: known.id, capacityBytes: known.totalBytes - (known.reservedBytes ?? 0), margin }, generation: known.generation, name: known.id };
  let bytes: number;
  try {
    bytes = parseByteSize(value, '--gpu');
  } catch {
    throw unknownGpu(value);
  }
  return { budget: { gpu: value, capacityBytes: bytes, margin }, generation: null };
}

/** `--gpu auto`: the free memory of the live GPU (index --gpu-index, default 0) read through the sources layer. */
async function liveGpu(ctx: CommandContext, o: Opts, margin: number): Promise<{ budget: Budget; generation: GpuGeneration | null }> {
  const { openSourceFromContext } = await import('../open-source.js');
  const source = await openSourceFromContext(ctx);
  try {
    const sample = await source.readSample();
    const index = num(o, 'gpuIndex') ?? 0;
    const device = sample.devices.find((d) => d.index === index);
    if (!device) throw new GpumemError('BAD_OPTION_VALUE', `--gpu-index: no GPU ${index}`, { hint: `GPUs present: ${sample.devices.map((d) => d.index).join(', ') || 'none'}` });
    const free = device.memory.freeBytes;
    if (free === null) throw new GpumemError('FAILED', `GPU ${index} does not report its free memory`, { hint: 'give --gpu as a size, e.g. --gpu 24GiB' });
    return { budget: { gpu: `${device.name ?? `GPU ${index}`} (free now)`, capacityBytes: free, margin }, generation: generationFromName(device.name ?? '') };
  } finally {
    source.close();
  }
}

export const run: CommandHandler = async (ctx) => {
  const o = ctx.args.options as Opts;
  const margin = percent(o, 'margin', '--margin', 8);
  const { budget, generation, name } = await resolveGpu(ctx, o, margin);
  if (ctx.args.rest.length > 0 || o.entry !== undefined) {
    const fits = await runTracedEstimate(ctx, o, {
      budget,
      gpuName: name ?? budget?.gpu ?? 'NVIDIA H100 80GB HBM3',
      contextBytes: num(o, 'context') ?? (generation ? defaultContextBytes(generation) : DEFAULT_ENVIRONMENT.contextBytes),
      workspaceBytes: cublasWorkspaceBytes(generation),
    });
    return fits ? { kind: 'ok' } : { kind: 'findings' };
  }
  // Shape sizes feed divisions and products in the activation model: a zero, negative or fractional one
  // would print nonsense bytes (or NaN), so each is checked here like --batch.
  const hints: ShapeHints = {};
  for (const [key, flag] of SHAPE_FLAGS) {
    const v = positive(o, key, flag);
    if (v !== undefined) hints[key] = v;
  }
  if (ctx.args.positionals.length > 1) {
    throw new GpumemError('USAGE', `one model at a time; got ${ctx.args.positionals.length}`, { hint: 'see gpumem estimate --help' });
  }
  const loaded = loadModel(ctx.args.positionals[0], str(o, 'params'), hints);
  const env: Environment = {
    contextBytes: num(o, 'context') ?? (generation ? defaultContextBytes(generation) : DEFAULT_ENVIRONMENT.contextBytes),
    workspaceBytes: cublasWorkspaceBytes(generation),
    fragmentation: percent(o, 'fragmentation', '--fragmentation', DEFAULT_ENVIRONMENT.fragmentation * 100),
  };
  const stagesText = str(o, 'stages');
  const report = buildEstimateReport({
    model: loaded.model,
    source: loaded.source,
    setup: setupFrom(o),
    env,
    budget,
    effectiveBatch: positive(o, 'effectiveBatch', '--effective-batch') ?? null,
    stages: stagesText === undefined ? null : parseStages(stagesText),
    unfreezeGroups: list(o, 'unfreeze') ?? null,
  });
  if (o.json === true) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else ctx.stdout.write(renderEstimate(report, ctx.color));
  const breaks = (report.fit && !report.fit.fits) || (report.stages ?? []).some((s) => s.fits === false);
  return breaks ? { kind: 'findings' } : { kind: 'ok' };
};
