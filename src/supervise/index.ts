/** supervise/: spawning and watching user commands, pipelines, retry, cleanup, kill. Imports core/, sources/, store/. */
export { superviseRun } from './run.js';
export type { SuperviseOptions, RunPlugin, AttemptContext } from './options.js';
export { checkSuperviseNumbers, checkWholeOption } from './options.js';
export type { MonitorTick } from './monitor.js';
export * from './report.js';
export { planEnv, mergeAllocConf, formatDecision, type EnvDecision, type EnvPlan } from './env.js';
export { chooseGpus, type GpuChoice } from './gpus.js';
export { nextBatchPlan, substitute, initialBatchPlan, type BatchPlan } from './retry.js';
export { parseFreeRequirement, type FreeRequirement } from './preflight.js';
export { ProcessTree } from './proc-tree.js';
export { endProcesses, refuseReason, type Target, type EndResult } from './terminate.js';
export * from './kill/index.js';
export * from './pipeline/index.js';
export { companionPlugin, CompanionServer, companionPythonDir, companionSiteDir, splitLine, oomLine, type CompanionPlugin, type CompanionPluginOptions, type CompanionReport } from './companion/index.js';
export { runTracedProgram, type TraceRunOptions, type TraceRunResult } from './estimate-trace.js';
