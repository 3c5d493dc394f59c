/**
 * The `gpumem estimate --json` document (schema in docs/estimate.md; bump ESTIMATE_SCHEMA_VERSION on any
 * incompatible change) and the one function that builds it from a model, a setup and an optional budget.
 */
import type { TransformerShape } from './architectures.js';
import { configAssumptions, paramsShapeAssumption, type LossOutput } from './assumptions.js';
import type { ModuleLoading } from './context.js';
import { fitWithAccumulation, type AccumulationPlan } from './batch.js';
import { estimateMemory, type Environment, type PhaseTotal } from './estimate.js';
import { computeModelStates } from './model-states.js';
import type { ModelInput, TrainingSetup } from './setup.js';
import { estimateStages, progressiveSchedule, type StageSpec } from './stages.js';
import { summarizeTensors, type ParamSummary } from './tensors.js';

export const ESTIMATE_SCHEMA_VERSION = 1;

export interface Budget {
  /** What the GPU was called ("H100-80GB", the live device's name, or "24.00 GiB"). */
  gpu: string;
  capacityBytes: number;
  /** 0–1: share of the capacity kept free for estimate error. */
  margin: number;
}

export interface EstimateReport {
  schemaVersion: typeof ESTIMATE_SCHEMA_VERSION;
  model: {
    label: string;
    source: string;
    totalParams: number;
    trainableParams: number;
    bufferParams: number;
    loraParams: number;
    paramsByDtype: Record<string, number> | null;
    paramsByModule: Record<string, number> | null;
  };
  setup: TrainingSetup;
  environment: Environment;
  batch: number;
  activationBytesPerSample: number;
  activationMethod: string;
  peak: PhaseTotal;
  phases: PhaseTotal[];
  fit: null | {
    gpu: string;
    capacityBytes: number;
    margin: number;
    budgetBytes: number;
    maxBatch: number;
    peakAtMaxBytes: number;
    peakAtMaxPhase: string;
    unbounded: boolean;
    fits: boolean;
  };
  accumulation: AccumulationPlan | null;
  stages: null | Array<{
    name: string;
    batch: number;
    freeze: string[];
    checkpointing: string;
    peak: PhaseTotal;
    fits: boolean | null;
    maxBatch: number | null;
    /** False when neither a transformer shape nor act= gave activations: `fits` is then true never, only false or null. */
    activationsKnown: boolean;
    growth: Array<{ component: string; deltaBytes: number }>;
  }>;
  unfreeze: null | Array<{ frozen: string[]; peakBytes: number; peakPhase: string; maxBatch: number | null }>;
  /** What the estimate assumes, printed with it. */
  assumptions: string[];
  /** The peak with the CUDA context at the low and high ends of its reported sizes. */
  peakRangeBytes: { lowBytes: number; highBytes: number };
  notes: string[];
}

export interface ReportRequest {
  model: ModelInput;
  source: string;
  setup: TrainingSetup;
  env: Environment;
  budget: Budget | null;
  effectiveBatch: number | null;
  stages: StageSpec[] | null;
  unfreezeGroups: string[] | null;
  /** True when --context gave the CUDA context size (no range then). */
  contextGiven?: boolean;
  /** Eager when --cuda names a version before 11.7: the context range is then eager loading's. */
  moduleLoading?: ModuleLoading;
}

/** Runs every requested analysis and returns the JSON-ready report. */
export function buildEstimateReport(req: ReportRequest): EstimateReport {
  const { model, setup, env, budget } = req;
  const estimate = estimateMemory(model, setup, env);
  const states = computeModelStates(model, setup);
  const summary: ParamSummary | null = model.tensors ? summarizeTensors(model.tensors) : null;
  const notes = [...estimate.activations.notes];
  let fit: EstimateReport['fit'] = null;
  let accumulation: AccumulationPlan | null = null;
  const b = budget ? { capacityBytes: budget.capacityBytes, margin: budget.margin } : null;
  if (budget) {
    const r = fitWithAccumulation(model, setup, env, budget.capacityBytes, budget.margin, req.effectiveBatch);
    accumulation = r.plan;
    fit = {
      gpu: budget.gpu,
      capacityBytes: budget.capacityBytes,
      margin: budget.margin,
      budgetBytes: r.fit.budgetBytes,
      maxBatch: r.fit.maxBatch,
      peakAtMaxBytes: r.fit.peakAtMax.totalBytes,
      peakAtMaxPhase: r.fit.peakAtMax.phase,
      unbounded: r.fit.unbounded,
      fits: estimate.peak.totalBytes <= r.fit.budgetBytes,
    };
    if (r.fit.unbounded) notes.push('the peak does not grow with the batch (activations unknown), so no max batch is predicted');
  }
  // Without activations a stage's peak is only its model states: "does not fit" is still certain, "fits"
  // and a max batch are not (the peak would not grow with the batch, so the search stops at its cap).
  const stages = req.stages
    ? estimateStages(model, setup, req.stages, env, b).map((s) => {
        const known = s.estimate.activations.method !== 'none';
        return {
          name: s.name,
          batch: s.setup.batch,
          freeze: s.setup.freeze,
          checkpointing: s.setup.checkpointing,
          peak: s.estimate.peak,
          fits: !known && s.fits === true ? null : s.fits,
          maxBatch: s.fit && known ? s.fit.maxBatch : null,
          activationsKnown: known,
          growth: s.growth,
        };
      })
    : null;
  const unknownStages = (stages ?? []).filter((s) => !s.activationsKnown).map((s) => s.name);
  if (unknownStages.length > 0) {
    notes.push(
      `activations unknown in ${unknownStages.join(', ')}: ${budget ? 'no max batch, and "fits" is not claimed' : 'the peaks hold model states only'}; give each stage act=BYTES (measure it with gpumem fit) or trace the real step of each stage: gpumem estimate ${budget ? `--gpu ${budget.gpu} ` : ''}--stages "${unknownStages.join(' ')}" -- python train.py --stage {stage} --batch-size {batch}`,
    );
  }
  const unfreeze = req.unfreezeGroups
    ? progressiveSchedule(model, setup, req.unfreezeGroups, env, b).map((s) => ({
        frozen: s.frozen,
        peakBytes: s.estimate.peak.totalBytes,
        peakPhase: s.estimate.peak.phase,
        maxBatch: s.fit && s.estimate.activations.method !== 'none' ? s.fit.maxBatch : null,
      }))
    : null;
  return {
    schemaVersion: ESTIMATE_SCHEMA_VERSION,
    model: {
      label: model.label,
      source: req.source,
      totalParams: states.totalParams,
      trainableParams: states.trainableParams,
      bufferParams: states.bufferParams,
      loraParams: states.loraParams,
      paramsByDtype: summary ? summary.paramsByDtype : null,
      paramsByModule: summary ? summary.paramsByModule : null,
    },
    setup,
    environment: env,
    batch: setup.batch,
    activationBytesPerSample: estimate.activations.savedBytesPerSample,
    activationMethod: estimate.activations.method,
    peak: estimate.peak,
    phases: estimate.phases,
    fit,
    accumulation,
    stages,
    unfreeze,
    ...withShape(configAssumptions(setup, env, estimate.peak.totalBytes, req.contextGiven ?? false, req.moduleLoading ?? 'lazy', lossOutput(model, estimate.activations.method)), req.source === 'params' ? model.shape : null),
    notes,
  };
}

/** What the loss is taken over: only a transformer shape's activations model the logits (activations.ts). */
function lossOutput(model: ModelInput, method: string): LossOutput {
  const shape = model.shape;
  if (method !== 'transformer' || !shape) return null;
  return shape.outputWidth === shape.vocab && shape.vocab > 0 ? { kind: 'vocabulary' } : { kind: 'classes', classes: shape.outputWidth };
}

/** The assumptions, led by the shape a `--params` model was given (read from no file, so it is a guess too). */
function withShape<T extends { assumptions: string[] }>(a: T, shape: TransformerShape | null): T {
  return shape ? { ...a, assumptions: [paramsShapeAssumption(shape), ...a.assumptions] } : a;
}
