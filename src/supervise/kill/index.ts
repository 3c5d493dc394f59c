/** `gpumem kill`: selection (pure over a sample) and safe execution. */
export { selectTargets, isEmptyCriteria, unknownGpus, parseDurationMs, type KillCriteria, type KillRow, type Caller } from './select.js';
export { executeKill, gpuProofReason, protectedPids, type KillOptions, type KillOutcome } from './execute.js';
export { groupJobs, readJobs, cpuActivity, type KillJob } from './jobs.js';
