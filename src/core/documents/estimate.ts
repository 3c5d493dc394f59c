/** `gpumem estimate --json` from a model file, a config or a parameter count (docs/estimate.md). */
import type { ActivationModel } from '../estimate/activations.js';
import type { Breakdown, Phase } from '../estimate/estimate.js';
import type { AttentionImpl, Checkpointing, OptimizerImpl, OptimizerKind, Precision, Sharding } from '../estimate/setup.js';
import { ESTIMATE_SCHEMA_VERSION, buildEstimateReport, type EstimateReport } from '../estimate/report.js';
import { arrayOf, boolean, integer, mapOf, members, nullable, number, object, oneOf, string, strings, versioned, type DocumentEntry, type JsonSchema } from './schema.js';

export { ESTIMATE_SCHEMA_VERSION, buildEstimateReport, type EstimateReport };
export const ESTIMATE_KIND = 'gpumem.estimate';

/** AccumulationPlan: micro-batches × steps to reach an effective batch (also in the fit document). */
export const accumulationPlanSchema: JsonSchema = object({ effectiveBatch: integer, microBatch: integer, steps: integer, realisedBatch: integer });

const nullableInt = nullable(integer);

/** Breakdown: the bytes of one phase by component (the stages' `growth` names these components). */
const BREAKDOWN = members<keyof Breakdown>()(['weightsBytes', 'gradientsBytes', 'optimizerStatesBytes', 'emaBytes', 'activationsBytes', 'transientsBytes', 'contextBytes', 'workspaceBytes', 'allocatorSlackBytes']);
const breakdownSchema = object(Object.fromEntries(BREAKDOWN.map((name) => [name, integer])));

/** PhaseTotal: one phase of the step with its total and breakdown. */
const phaseTotalSchema = object({ phase: oneOf(members<Phase>()(['forward-end', 'backward', 'optimizer-step'])), totalBytes: integer, breakdown: breakdownSchema });

/** TrainingSetup: the training the estimate is for, as the options gave it. */
const setupSchema = object({
  precision: oneOf(members<Precision>()(['fp32', 'amp-bf16', 'amp-fp16', 'bf16'])),
  optimizer: oneOf(members<OptimizerKind>()(['adamw', 'adam', 'sgd', 'sgd-momentum', 'adafactor', 'adam8bit'])),
  optimizerImpl: oneOf(members<OptimizerImpl>()(['foreach', 'fused', 'for-loop'])),
  freeze: strings,
  loraRank: integer,
  loraModules: strings,
  loraDropout: number,
  checkpointing: oneOf(members<Checkpointing>()(['none', 'selective', 'full'])),
  ema: boolean,
  sharding: oneOf(members<Sharding>()(['none', 'zero1', 'zero2', 'zero3', 'fsdp'])),
  gpus: integer,
  batch: integer,
  seq: nullableInt,
  activationBytesPerSample: nullableInt,
  activationsForTrainableSet: boolean,
  activationsMeasuredFrozen: strings,
  attention: oneOf(members<AttentionImpl>()(['sdpa', 'eager'])),
  accumulation: integer,
  keepGrads: boolean,
  softmaxKeepsInput: boolean,
});

export const estimateSchema = versioned(ESTIMATE_SCHEMA_VERSION, null, {
  model: object({
    label: string,
    source: string,
    totalParams: integer,
    trainableParams: integer,
    bufferParams: integer,
    loraParams: integer,
    paramsByDtype: nullable(mapOf(integer)),
    paramsByModule: nullable(mapOf(integer)),
  }),
  setup: setupSchema,
  environment: object({ contextBytes: integer, workspaceBytes: integer, fragmentation: number }),
  batch: integer,
  activationBytesPerSample: integer,
  activationMethod: oneOf(members<ActivationModel['method']>()(['transformer', 'measured', 'none'])),
  peak: phaseTotalSchema,
  phases: arrayOf(phaseTotalSchema),
  fit: nullable(object({
    gpu: string,
    capacityBytes: integer,
    margin: number,
    budgetBytes: integer,
    maxBatch: integer,
    peakAtMaxBytes: integer,
    peakAtMaxPhase: string,
    unbounded: boolean,
    fits: boolean,
  })),
  accumulation: nullable(accumulationPlanSchema),
  stages: nullable(arrayOf(object({
    name: string,
    batch: integer,
    freeze: strings,
    checkpointing: string,
    peak: phaseTotalSchema,
    fits: nullable(boolean),
    maxBatch: nullableInt,
    activationsKnown: boolean,
    growth: arrayOf(object({ component: oneOf(BREAKDOWN), deltaBytes: integer })),
  }))),
  unfreeze: nullable(arrayOf(object({ frozen: strings, peakBytes: integer, peakPhase: string, maxBatch: nullableInt }))),
  assumptions: strings,
  peakRangeBytes: object({ lowBytes: integer, highBytes: integer }),
  notes: strings,
});

export const estimateEntry: DocumentEntry = {
  kind: ESTIMATE_KIND, kindInDocument: null, version: ESTIMATE_SCHEMA_VERSION,
  emittedBy: 'estimate --json (model file, config or --params)', doc: 'docs/estimate.md', module: 'src/core/documents/estimate.ts', schema: estimateSchema,
};
