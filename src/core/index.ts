/** core/: types, units and all pure analysis. No node:* imports, no clock, no environment. */
export * from './errors.js';
export * from './units.js';
export * from './text.js';
export * from './records.js';
export * from './same-data.js';
export * from './arrays.js';
export * from './types.js';
export { diagnose, DIAGNOSE_SCHEMA_VERSION, DIAGNOSE_RULES, type DiagnoseReport, type DiagnoseInput, type Finding as DiagnoseFinding, type DeviceAccounting, type ProcessTree } from './diagnose/index.js';
export * from './oom/index.js';
export { COMPANION_SCHEMA_VERSION, parseCompanionLine, applyCompanionMessage, createCompanionState, splitProcessMemory, splitProcesses, splitByGpu, type AllocatorStats, type CompanionMessage, type CompanionState, type CompanionProcessState, type MemorySplit, type GpuSplit } from './companion/index.js';
export { buildEstimateReport, estimateMemory, findMaxBatch, planAccumulation, modelFromConfig, modelFromParams, parseSafetensors, summarizeTensors, parseStages, ESTIMATE_SCHEMA_VERSION, type EstimateReport, type TrainingSetup, type ModelInput, type MemoryEstimate } from './estimate/index.js';
export { planFit, fitLine, buildFitReport, FIT_SCHEMA_VERSION, type FitResult, type FitReport, type Measure, type Measurement } from './fit/index.js';
