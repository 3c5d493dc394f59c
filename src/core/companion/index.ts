/** core/companion: the PyTorch companion's message format, its parser, the per-run state and the memory split. */
export * from './messages.js';
export { parseCompanionLine, createLineSplitter, MAX_LINE_CHARS, MAX_CUDA_ORDINAL } from './parse.js';
export { admitCompanionMessage, createCompanionIntake, anyDropped, COMPANION_LIMITS, type CompanionDrops, type CompanionIntake } from './intake.js';
export {
  applyCompanionMessage,
  createCompanionState,
  uuidForOrdinal,
  type CompanionDeviceState,
  type CompanionProcessState,
  type CompanionState,
} from './state.js';
export { splitProcessMemory, splitProcesses, splitByGpu, type MemorySplit, type GpuSplit } from './split.js';
export { foldPytorchSample, finishPytorchSummary, type PytorchGpuSummary } from './summary.js';
export { allocatorAtOom, withAllocatorNumbers, type AllocatorAtOom } from './oom-event.js';
export {
  buildLiveCompanionDoc,
  parseLiveCompanionDoc,
  LIVE_COMPANION_FORMAT,
  LIVE_COMPANION_SCHEMA_VERSION,
  type LiveCompanionDoc,
  type LiveCompanionProcess,
  type LiveCompanionDevice,
} from './live.js';
export { companionReport, COMPANION_REPORT_SCHEMA_VERSION, type CompanionReport } from './report.js';
export { summariseSteps, describeSteps, inputBoundFinding, batchOverrideFinding, INPUT_BOUND_SHARE, type StepSummary, type LoaderSettings } from './steps.js';
export { foldRankSample, rankSummaries, rankName, type RankSummary, type RankPeaks } from './ranks.js';
export { rankFindings, RANK_IMBALANCE_RATIO, NCCL_NON_PYTORCH_MIN_BYTES } from './rank-findings.js';
