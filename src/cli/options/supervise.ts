/** Options of the commands that run the user's training: run, pipeline, fit, and the history (format: cli/spec.ts). */
import { GpumemError } from '../../core/errors.js';
import { printable } from '../../core/text.js';
import { defineCommand } from '../spec.js';
import { COMPANION_TABLE, DB_TABLE, JSON_TABLE, MAX_MS, SOURCE_TABLE, type CompanionOptions, type HistoryOptions, type JsonOption, type SourceOptions } from './shared.js';

export interface RunOptions extends CompanionOptions, HistoryOptions, JsonOption, SourceOptions {
  gpus: string | undefined;
  noAllocConf: boolean;
  requireFree: string | undefined;
  batch: number | 'auto' | undefined;
  accum: number | undefined;
  effectiveBatch: number | undefined;
  margin: number;
  steps: number | undefined;
  retryOom: number;
  graceMs: number;
  cleanupTimeoutMs: number;
  intervalMs: number;
  noHistory: boolean;
}

/** --batch: a positive whole number, or auto. */
function runBatch(text: string): number | 'auto' {
  if (text === 'auto') return 'auto';
  if (/^[1-9]\d*$/.test(text) && !Number.isSafeInteger(Number(text))) {
    throw new GpumemError('BAD_OPTION_VALUE', `--batch: "${text}" is too large (whole numbers go up to 2^53 − 1 = ${Number.MAX_SAFE_INTEGER})`, { hint: 'e.g. --batch 32 or --batch auto' });
  }
  if (!/^[1-9]\d*$/.test(text)) {
    throw new GpumemError('BAD_OPTION_VALUE', `--batch: "${printable(text)}" is neither a batch size nor auto`, { hint: 'e.g. --batch 32 or --batch auto' });
  }
  return Number(text);
}

export const RUN = defineCommand<RunOptions>({
  name: 'run',
  summary: 'run a training command on the right GPUs, watched, with OOM retry and verified cleanup',
  usage: 'run [options] -- CMD [ARGS…]',
  description:
    'Pins the chosen GPUs by UUID (CUDA_VISIBLE_DEVICES + CUDA_DEVICE_ORDER=PCI_BUS_ID), merges expandable_segments:True into PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF (one value for both) unless you set that key or another allocator backend, checks free memory first, watches the whole process tree at 10 Hz (peak per GPU, memory on GPUs not chosen), forwards Ctrl-C/TERM to the child\'s process group, ends leftover workers and checks the memory is released. For a PyTorch program the companion (on unless --no-companion) splits each GPU\'s memory into allocated / reserved-unallocated / non-PyTorch, captures the allocator\'s numbers at an OOM and, with --snapshot-on-oom, writes a memory snapshot into the run folder. `{batch}`/`{accum}` in the command (and GPUMEM_BATCH/GPUMEM_ACCUM) are filled from --batch/--accum; with --retry-oom N an OOM halves the batch and doubles accumulation. Exits with the child\'s status (128+n when killed by signal n). Every run is stored in the history (gpumem runs). See docs/run.md.',
  options: {
    gpus: { type: 'string', value: 'SPEC', allowEmpty: true, description: 'GPUs to use: an index (2), a list (0,1,2), UUIDs, auto (the freest) or auto:N' },
    noAllocConf: { type: 'boolean', description: 'leave PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF as they are (no expandable_segments:True)' },
    requireFree: { type: 'string', value: 'BYTES|PCT', description: 'refuse to start unless every chosen GPU has this much free memory (e.g. 20GiB or 30%)' },
    batch: { type: 'string', value: 'N|auto', transform: runBatch, description: 'starting batch size for {batch} and GPUMEM_BATCH; auto: the largest that fits the chosen GPUs, found by tracing the step (short measured runs when it cannot be traced and the command has {steps})' },
    effectiveBatch: { type: 'number', value: 'N', integer: true, min: 1, description: 'with --batch auto: the global batch to keep, through {accum}' },
    margin: { type: 'number', value: 'PCT', min: 0, max: 50, default: 8, description: 'with --batch auto: share of the free memory kept unused' },
    steps: { type: 'number', value: 'N', integer: true, min: 1, description: 'fills {steps} in the command (required when it has one); --batch auto\'s measured short runs use 5' },
    accum: { type: 'number', value: 'N', integer: true, min: 1, description: 'starting gradient accumulation for {accum} and GPUMEM_ACCUM (default 1)' },
    retryOom: { type: 'number', value: 'N', integer: true, min: 0, max: 100, default: 0, description: 'on CUDA OOM, retry up to N times with half the batch and double the accumulation' },
    graceMs: { type: 'number', value: 'MS', integer: true, min: 0, max: MAX_MS, default: 5000, description: 'wait between signal steps (forwarded signal → TERM → KILL) and before KILLing leftovers' },
    cleanupTimeoutMs: { type: 'number', value: 'MS', integer: true, min: 0, max: MAX_MS, default: 10000, description: 'how long to wait for the run\'s GPU memory to be released after it exits' },
    intervalMs: { type: 'number', value: 'MS', integer: true, min: 1, max: 60_000, default: 100, description: 'sampling interval of GPU memory and the process tree' },
    ...DB_TABLE,
    noHistory: { type: 'boolean', description: 'do not store this run in the history' },
    ...COMPANION_TABLE,
    ...JSON_TABLE,
    ...SOURCE_TABLE,
  },
  passthrough: true,
  examples: ['gpumem run --gpus 2 -- python train.py', 'gpumem run --gpus auto --batch 32 --retry-oom 3 -- python train.py --bs {batch} --accum {accum}', 'gpumem run --gpus 1 --batch auto --effective-batch 256 -- python train.py --bs {batch} --accum {accum}'],
  exits: ['the child\'s exit status; 128+n when it was killed by signal n', '1 when pre-flight refused (--require-free)'],
});

export interface PipelineOptions extends CompanionOptions, HistoryOptions, JsonOption, SourceOptions {
  from: string | undefined;
  check: boolean;
  gpus: string | undefined;
  tolerance: number;
  noHistory: boolean;
}

export const PIPELINE = defineCommand<PipelineOptions>({
  name: 'pipeline',
  summary: 'run stages (train → test → eval) on the same GPUs, cleanup verified between them',
  usage: 'pipeline [options] FILE.yaml',
  description:
    'Validates the whole file first (errors name the line and field), checks the GPUs, then runs each stage like `gpumem run`. Before the next stage starts, no process of the previous stage may be left and GPU memory must be back to its pre-stage level within --tolerance. See docs/pipeline.md.',
  args: [{ name: 'FILE', description: 'the pipeline file (YAML)', required: true }],
  options: {
    from: { type: 'string', value: 'STAGE', description: 'start at this stage (skip the ones before it)' },
    check: { type: 'boolean', description: 'only validate the file and show the plan' },
    gpus: { type: 'string', value: 'SPEC', allowEmpty: true, description: 'GPUs for every stage that does not name its own (overrides the file\'s gpus)' },
    tolerance: { type: 'bytes', value: 'BYTES', default: '256MiB', description: 'how far above its pre-stage level GPU memory may be when the next stage starts' },
    ...DB_TABLE,
    noHistory: { type: 'boolean', description: 'do not store this pipeline in the history' },
    ...COMPANION_TABLE,
    ...JSON_TABLE,
    ...SOURCE_TABLE,
  },
  examples: ['gpumem pipeline examples/pipeline.yaml', 'gpumem pipeline train.yaml --from eval'],
  exits: ['1 when a stage failed or cleanup between stages did not pass; a stage killed by signal n: 128+n'],
});

export interface RunsOptions extends HistoryOptions, JsonOption {
  limit: number;
}

export const RUNS = defineCommand<RunsOptions>({
  name: 'runs',
  summary: 'history of supervised runs and pipelines',
  usage: 'runs [options] [show ID]',
  args: [{ name: 'show ID', description: 'show one run in full' }],
  options: {
    limit: { type: 'number', value: 'N', integer: true, min: 1, default: 20, description: 'how many recent runs to list' },
    ...DB_TABLE,
    ...JSON_TABLE,
  },
  examples: ['gpumem runs', 'gpumem runs show 12 --json'],
});

/** --probe "A,B": two ascending batch sizes. */
function probePair(items: string[], flag: string): [number, number] {
  const [a, b] = items.map(Number);
  if (items.length !== 2 || !Number.isSafeInteger(a) || !Number.isSafeInteger(b) || (a as number) < 1 || (b as number) <= (a as number)) {
    throw new GpumemError('BAD_OPTION_VALUE', `${flag}: "${items.join(',')}" is not two ascending batch sizes`, { hint: `e.g. ${flag} 2,4` });
  }
  return [a as number, b as number];
}

export interface FitOptions extends JsonOption, SourceOptions {
  steps: number;
  probe: [number, number] | undefined;
  fill: number;
  maxBatch: number;
  maxRuns: number;
  runTimeout: number;
  effectiveBatch: number | undefined;
  gpus: string;
  worldSize: number;
  intervalMs: number;
  noCompanion: boolean;
}

export const FIT = defineCommand<FitOptions>({
  name: 'fit',
  summary: 'find the largest batch that fits by measuring a few short runs, verified',
  usage: 'fit [options] -- CMD… {batch}…',
  description:
    'Runs the command for a few steps ({steps} or GPUMEM_STEPS) in fresh processes at two probe batches, fits memory = fixed + per-sample × batch from the peak of the process tree, predicts the largest batch under the target fill of the GPU\'s free memory, and verifies it with one run; when the run disagrees with the line it takes a third point and bisects. It never reports a batch it did not run. See docs/fit.md.',
  options: {
    steps: { type: 'number', value: 'N', integer: true, min: 1, max: 1_000_000, default: 5, description: 'training steps per run, for {steps} and GPUMEM_STEPS' },
    probe: { type: 'list', value: 'A,B', transform: probePair, description: 'the two probe batch sizes (default 2,4)' },
    fill: { type: 'number', value: 'PCT', min: 0, minExclusive: true, max: 100, default: 90, noun: 'a percentage', description: 'target: this percent of the GPU\'s free memory at start' },
    maxBatch: { type: 'number', value: 'N', integer: true, min: 1, default: 65536, description: 'never try a larger batch' },
    maxRuns: { type: 'number', value: 'N', integer: true, min: 1, max: 1000, default: 10, description: 'stop after this many runs' },
    runTimeout: { type: 'number', value: 'S', integer: true, min: 1, max: 86_400, default: 600, description: 'seconds one run may take; a run still going then is ended and fit stops (exit 1)' },
    effectiveBatch: { type: 'number', value: 'N', integer: true, min: 1, description: 'global batch to reach with gradient accumulation' },
    gpus: { type: 'string', value: 'GPU', default: '0', description: 'the GPU to measure on (index or UUID); the command is pinned to it. With --world-size N: N GPUs, comma-separated, one per rank' },
    worldSize: { type: 'number', value: 'N', integer: true, min: 1, max: 4096, default: 1, description: 'ranks the command launches (torchrun --nproc-per-node N …): {batch} is per rank, a run fits when every rank\'s GPU stays under its target, an OOM on any rank fails the run, and --effective-batch is global' },
    intervalMs: { type: 'number', value: 'MS', integer: true, min: 1, max: 60_000, default: 100, description: 'memory sampling interval' },
    noCompanion: { type: 'boolean', description: 'do not start the PyTorch companion in the probe runs (it counts OOMs the program catches itself)' },
    ...JSON_TABLE,
    ...SOURCE_TABLE,
  },
  passthrough: true,
  examples: ['gpumem fit -- python train.py --batch-size {batch} --max-steps {steps}', 'gpumem fit --effective-batch 256 --json -- python train.py --bs {batch}', 'gpumem fit --world-size 2 --gpus 0,1 --effective-batch 256 -- torchrun --nproc-per-node 2 train.py --bs {batch}'],
  exits: ['1: not even the smallest probe fits'],
});
