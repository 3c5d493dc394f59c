/**
 * Multi-stage training plans: `stage1:freeze=backbone,batch=2 stage2:full` → one estimate per stage, which
 * stage breaks the budget and which components grew to break it; and progressive-unfreezing schedules
 * (unfreeze one module group at a time) with each step's peak.
 */
import { GpumemError } from '../errors.js';
import { parseByteSize } from '../units.js';
import { fitWithAccumulation, type BatchFit } from './batch.js';
import { estimateMemory, type Breakdown, type Environment, type MemoryEstimate } from './estimate.js';
import type { Checkpointing, ModelInput, TrainingSetup } from './setup.js';

export interface StageSpec {
  name: string;
  overrides: Partial<TrainingSetup>;
}

const CKPT: readonly Checkpointing[] = ['none', 'selective', 'full'];

/**
 * Parses a stages string: stages separated by spaces, each `NAME:key=value,key=value`. Keys: `freeze=A+B`
 * (module prefixes), `full` (nothing frozen), `batch=N`, `ckpt=none|selective|full`, `act=BYTES` (measured
 * activation bytes per sample), `lora=R`.
 */
export function parseStages(text: string): StageSpec[] {
  const stages: StageSpec[] = [];
  for (const token of text.trim().split(/\s+/).filter((t) => t !== '')) {
    const colon = token.indexOf(':');
    const name = colon > 0 ? token.slice(0, colon) : `stage${stages.length + 1}`;
    const body = colon > 0 ? token.slice(colon + 1) : token;
    const overrides: Partial<TrainingSetup> = {};
    for (const part of body.split(',').filter((p) => p !== '')) {
      const [key, value = ''] = part.split('=', 2) as [string, string?];
      switch (key) {
        case 'full':
          overrides.freeze = [];
          overrides.loraRank = 0;
          break;
        case 'freeze':
          overrides.freeze = value.split('+').filter((p) => p !== '');
          break;
        case 'batch':
          overrides.batch = positiveInt(value, token);
          break;
        case 'ckpt':
          if (!CKPT.includes(value as Checkpointing)) throw bad(token, `ckpt must be one of ${CKPT.join(', ')}`);
          overrides.checkpointing = value as Checkpointing;
          break;
        case 'act':
          overrides.activationBytesPerSample = parseByteSize(value, `--stages ${name} act`);
          overrides.activationsForTrainableSet = true;
          break;
        case 'lora':
          overrides.loraRank = positiveInt(value, token);
          break;
        default:
          throw bad(token, `unknown setting "${key}"`);
      }
    }
    stages.push({ name, overrides });
  }
  if (stages.length === 0) throw bad(text, 'no stages given');
  return stages;
}

export interface StageResult {
  name: string;
  setup: TrainingSetup;
  estimate: MemoryEstimate;
  /** Null when no budget was given. */
  fits: boolean | null;
  fit: BatchFit | null;
  /** Components that grew most against the previous stage, largest first (bytes). */
  growth: Array<{ component: keyof Breakdown; deltaBytes: number }>;
}

/** Estimates every stage; with a budget, also whether its batch fits and its own max batch. */
export function estimateStages(
  model: ModelInput,
  base: TrainingSetup,
  stages: readonly StageSpec[],
  env: Environment,
  budget: { capacityBytes: number; margin: number } | null,
): StageResult[] {
  const results: StageResult[] = [];
  for (const stage of stages) {
    const setup = { ...base, ...stage.overrides };
    const estimate = estimateMemory(model, setup, env);
    const prev = results[results.length - 1];
    const growth = prev ? componentGrowth(prev.estimate.peak.breakdown, estimate.peak.breakdown) : [];
    let fits: boolean | null = null;
    let fit: BatchFit | null = null;
    if (budget) {
      fit = fitWithAccumulation(model, setup, env, budget.capacityBytes, budget.margin, null).fit;
      fits = estimate.peak.totalBytes <= fit.budgetBytes;
    }
    results.push({ name: stage.name, setup, estimate, fits, fit, growth });
  }
  return results;
}

/** Positive differences per component between two breakdowns, largest first. */
export function componentGrowth(before: Breakdown, after: Breakdown): Array<{ component: keyof Breakdown; deltaBytes: number }> {
  return (Object.keys(after) as Array<keyof Breakdown>)
    .map((component) => ({ component, deltaBytes: after[component] - before[component] }))
    .filter((g) => g.deltaBytes > 0)
    .sort((a, b) => b.deltaBytes - a.deltaBytes);
}

export interface UnfreezeStep {
  /** Prefixes still frozen at this step. */
  frozen: string[];
  estimate: MemoryEstimate;
  fit: BatchFit | null;
}

/**
 * A progressive-unfreezing schedule: step 0 freezes every group in `groups` (each group `A+B`), step k
 * unfreezes the first k groups (list them top of the network first). Returns each step's peak at the
 * setup's batch and, with a budget, its max batch.
 */
export function progressiveSchedule(
  model: ModelInput,
  setup: TrainingSetup,
  groups: readonly string[],
  env: Environment,
  budget: { capacityBytes: number; margin: number } | null,
): UnfreezeStep[] {
  const steps: UnfreezeStep[] = [];
  for (let k = 0; k <= groups.length; k++) {
    const frozen = groups.slice(k).flatMap((g) => g.split('+').filter((p) => p !== ''));
    const stepSetup = { ...setup, freeze: frozen, loraRank: 0 };
    const estimate = estimateMemory(model, stepSetup, env);
    const fit = budget ? fitWithAccumulation(model, stepSetup, env, budget.capacityBytes, budget.margin, null).fit : null;
    steps.push({ frozen, estimate, fit });
  }
  return steps;
}

function positiveInt(value: string, token: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw bad(token, `"${value}" is not a positive integer`);
  return n;
}

function bad(token: string, what: string): GpumemError {
  return new GpumemError('BAD_OPTION_VALUE', `--stages: ${what} in "${token}"`, {
    hint: 'write stages as NAME:key=value,…  e.g. "stage1:freeze=backbone,batch=2 stage2:full,batch=2"',
  });
}
