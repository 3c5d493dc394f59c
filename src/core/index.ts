/** core/: types, units and all pure analysis. No node:* imports, no clock, no environment. */
export * from './errors.js';
export * from './units.js';
export * from './types.js';
export { diagnose, DIAGNOSE_SCHEMA_VERSION, DIAGNOSE_RULES, type DiagnoseReport, type DiagnoseInput, type Finding as DiagnoseFinding, type DeviceAccounting, type ProcessTree } from './diagnose/index.js';
export * from './oom/index.js';
export { COMPANION_SCHEMA_VERSION, parseCompanionLine, applyCompanionMessage, createCompanionState, splitProcessMemory, splitProcesses, splitByGpu, type AllocatorStats, type CompanionMessage, type CompanionState, type CompanionProcessState, type MemorySplit, type GpuSplit } from './companion/index.js';
