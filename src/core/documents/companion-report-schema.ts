/**
 * The schema of what the PyTorch companion adds to a supervised attempt (`plugins.companion` of a run report,
 * core/companion/report.ts): per process its allocator figures, OOM captures and step timing, the memory split,
 * the per-GPU summary, the ranks of a distributed job, and what was not kept.
 */
import type { OomMessage } from '../companion/messages.js';
import type { RankSummary } from '../companion/ranks.js';
import type { AllocatorAtOom } from '../companion/oom-event.js';
import type { StepSummary } from '../companion/steps.js';
import type { MemoryForecast } from '../forecast/forecast.js';
import type { RunFinding } from '../run/utilization.js';
import { memorySplitSchema } from './diagnose.js';
import { arrayOf, boolean, integer, mapOf, members, nullable, number, object, oneOf, string, strings, type JsonSchema } from './schema.js';

const nullableInt = nullable(integer);
const nullableNumber = nullable(number);
const nullableString = nullable(string);
/** Bytes per GPU uuid. */
const bytesByUuid = mapOf(integer);

/** RunFinding: a finding of the run report (from its measurements, or the companion's step timing and ranks). */
export const runFindingSchema: JsonSchema = object({
  id: oneOf(members<RunFinding['id']>()(['under-used-gpu', 'input-bound', 'batch-override', 'blocking-copy', 'sync-calls', 'ranks-share-gpu', 'rank-imbalance', 'rank-oom-first', 'nccl-buffers', 'oom-forecast'])),
  gpuIndex: nullableInt,
  title: string,
  fix: string,
  details: mapOf({ type: ['number', 'boolean', 'null'] }),
});

/** AllocatorAtOom: the allocator's numbers at the instant of an OOM. */
export const allocatorAtOomSchema: JsonSchema = object({
  pid: integer,
  device: integer,
  gpuUuid: nullableString,
  source: oneOf(members<AllocatorAtOom['source']>()(['observer', 'counter'])),
  requestedBytes: nullableInt,
  allocatedBytes: nullableInt,
  reservedBytes: nullableInt,
  unallocatedBytes: nullableInt,
  deviceLimitBytes: nullableInt,
  deviceFreeBytes: nullableInt,
  numAllocRetries: nullableInt,
  snapshotPath: nullableString,
});

/** AllocatorStats: one device's torch.cuda.memory_stats figures. */
const allocatorStatsSchema = object({
  device: integer,
  ...Object.fromEntries(['allocatedBytes', 'reservedBytes', 'activeBytes', 'inactiveSplitBytes', 'requestedBytes', 'peakAllocatedBytes', 'peakReservedBytes', 'peakActiveBytes', 'numAllocRetries', 'numOoms'].map((name) => [name, nullableInt])),
});

/** OomMessage: the companion's OOM capture as the process sent it. */
const oomMessageSchema = object({
  schemaVersion: integer,
  pid: integer,
  timeMs: integer,
  type: { const: 'oom' },
  source: oneOf(members<OomMessage['source']>()(['observer', 'counter'])),
  device: integer,
  requestedBytes: nullableInt,
  deviceLimitBytes: nullableInt,
  deviceFreeBytes: nullableInt,
  stats: nullable(allocatorStatsSchema),
  snapshotPath: nullableString,
  snapshotError: nullableString,
});

/** CopySummary, SyncSummary, ComputeSummary: host-to-device copies, synchronising calls and GPU time per step. */
const copiesSchema = object({
  countPerStep: number,
  bytesPerStep: number,
  msPerStep: number,
  blockingBytesPerStep: number,
  blockingMsPerStep: number,
  blockingShare: nullableNumber,
  pageableBytesPerStep: number,
});
const syncsSchema = object({ stepShare: number, callsPerStep: number, msPerStep: number, byKind: mapOf(number) });
const computeSchema = object({
  forwardMs: nullableNumber,
  backwardMs: nullableNumber,
  optimizerMs: nullableNumber,
  forwardCount: integer,
  backwardCount: integer,
  optimizerCount: integer,
  everySteps: integer,
});

/** StepSummary: a process's step timing. */
const stepSummarySchema = object({
  steps: integer,
  meanStepMs: nullableNumber,
  meanDataWaitMs: nullableNumber,
  dataWaitShare: nullableNumber,
  samplesPerSec: nullableNumber,
  tokensPerSec: nullableNumber,
  batchSeen: nullableInt,
  batchMin: nullableInt,
  batchMax: nullableInt,
  batchAsked: nullableInt,
  boundary: oneOf(members<NonNullable<StepSummary['boundary']>>()(['dataloader', 'optimizer']), true),
  loader: nullable(object({ numWorkers: nullableInt, pinMemory: nullable(boolean), persistentWorkers: nullable(boolean), prefetchFactor: nullableInt })),
  cpuCount: nullableInt,
  copies: nullable(copiesSchema),
  syncs: nullable(syncsSchema),
  compute: nullable(computeSchema),
}, ['tokensPerSec', 'boundary', 'loader', 'cpuCount', 'copies', 'syncs', 'compute']);

/** MemoryGrowth: memory left behind growing step by step, with what grows when snapshots say. */
const growthSchema = object({
  bytesPerStep: number,
  sinceStep: integer,
  grownBytes: integer,
  r2: number,
  sites: nullable(object({
    fromStep: integer,
    toStep: integer,
    leftGrewBytes: integer,
    sites: arrayOf(object({ site: string, bytes: integer, blocks: integer })),
  })),
  oomAtStep: nullableInt,
  stepsLeft: nullableInt,
}, ['sites']);

/** PeriodicSpikes: spikes that recur every few steps, and the first one that will not fit. */
const spikesSchema = object({
  everySteps: integer,
  seen: integer,
  lastStep: integer,
  nextStep: integer,
  peakBytes: integer,
  nextPeakBytes: integer,
  headroomBytes: nullableInt,
  failsAtStep: nullableInt,
  failsAtPeakBytes: nullableInt,
});

/** MemoryForecast: the OOM forecast of one CUDA device at the attempt's end. */
const forecastSchema = object({
  device: integer,
  boundary: oneOf(members<MemoryForecast['boundary']>()(['dataloader', 'optimizer'])),
  step: integer,
  leftBytes: integer,
  usualPeakBytes: nullableInt,
  maxPeakAllocatedBytes: integer,
  maxPeakReservedBytes: integer,
  limitBytes: nullableInt,
  growth: nullable(growthSchema),
  spikes: nullable(spikesSchema),
  warnings: arrayOf(oneOf(members<MemoryForecast['warnings'][number]>()(['growth', 'spike']))),
});

/** RankSummary: one rank of a distributed job. */
const rankSchema = object({
  pid: integer,
  rank: nullableInt,
  localRank: nullableInt,
  worldSize: nullableInt,
  backend: nullableString,
  rankSource: oneOf(members<RankSummary['rankSource']>()(['env', 'torch.distributed'])),
  gpus: arrayOf(object({ gpuUuid: string, gpuIndex: nullableInt })),
  peakAllocatedBytes: nullableInt,
  peakReservedBytes: nullableInt,
  peakProcessBytes: nullableInt,
  peakNonPytorchBytes: nullableInt,
  steps: nullableInt,
  meanStepMs: nullableNumber,
  meanDataWaitMs: nullableNumber,
  firstOomTimeMs: nullableNumber,
  oomDevice: nullableInt,
  ended: boolean,
});

/** PytorchGpuSummary: per GPU, the split at the tree's peak with the allocator's peaks, retries and OOMs. */
const gpuSummarySchema = object({
  gpuUuid: string,
  gpuIndex: nullableInt,
  pids: arrayOf(integer),
  atMs: number,
  treeBytes: integer,
  ...Object.fromEntries(['processUsedBytes', 'allocatedBytes', 'reservedBytes', 'unallocatedBytes', 'nonPytorchBytes', 'otherProcessesBytes', 'peakAllocatedBytes', 'peakReservedBytes', 'numAllocRetries', 'numOoms'].map((name) => [name, nullableInt])),
});

/** GpuSplit: the split summed per GPU. */
const gpuSplitSchema = object({
  gpuUuid: string,
  pids: arrayOf(integer),
  ...Object.fromEntries(['processUsedBytes', 'allocatedBytes', 'reservedBytes', 'nonPytorchBytes', 'numAllocRetries'].map((name) => [name, nullableInt])),
});

/** OomSettingsAnswer: what a snapshot's replay under one allocator setting says about its OOM. */
const settingsAnswerSchema = object({ settings: string, oomAvoided: boolean, oomSpareBytes: nullableInt, firstOomEventIndex: nullableInt });

/** CompanionReport: `plugins.companion` of an attempt. */
export const companionReportSchema: JsonSchema = object({
  schemaVersion: integer,
  processes: arrayOf(object({
    pid: integer,
    torchVersion: nullableString,
    ended: boolean,
    devices: arrayOf(object({
      device: integer,
      gpuUuid: nullableString,
      ...Object.fromEntries(['allocatedBytes', 'reservedBytes', 'maxPeakAllocatedBytes', 'maxPeakReservedBytes', 'numAllocRetries', 'numOoms'].map((name) => [name, nullableInt])),
    })),
    ooms: arrayOf(oomMessageSchema),
    oomExceptions: strings,
    oomsNotKept: integer,
    companionErrors: mapOf(string),
    droppedMessages: integer,
    noCuda: nullableString,
    steps: nullable(stepSummarySchema),
    forecast: arrayOf(forecastSchema),
  }, ['noCuda', 'steps', 'forecast'])),
  ranks: arrayOf(rankSchema),
  findings: arrayOf(runFindingSchema),
  lastSplit: nullable(object({ processes: arrayOf(memorySplitSchema), gpus: arrayOf(gpuSplitSchema) })),
  gpus: arrayOf(gpuSummarySchema),
  splitTimeline: arrayOf(object({ tMs: number, allocatedBytes: bytesByUuid, reservedBytes: bytesByUuid })),
  unprintedOoms: arrayOf(allocatorAtOomSchema),
  snapshots: strings,
  snapshotAnswers: arrayOf(object({
    file: string,
    problem: nullableString,
    devices: arrayOf(object({ device: integer, coversWholeRun: boolean, recorded: settingsAnswerSchema, whatIf: settingsAnswerSchema })),
  })),
  problems: strings,
  notKept: object({ notInRun: integer, overKindLimit: mapOf(integer), overTotalBytes: integer, textsCut: integer, problemLines: integer }),
}, ['ranks', 'findings', 'splitTimeline', 'snapshotAnswers', 'notKept']);
