/** `gpumem kill`: selection (pure over a sample) and safe execution. */
export { selectTargets, isEmptyCriteria, parseDurationMs, type KillCriteria, type KillRow, type Caller } from './select.js';
export { executeKill, protectedPids, type KillOutcome } from './execute.js';
