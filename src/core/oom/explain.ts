/**
 * Ranks the causes of one OOM event. Each rule is pure and lives in causes/; a rule returns null when its
 * evidence is missing, so an explanation never rests on a guessed number.
 */
import { corruptSize, exceedsTotal } from './causes/capacity.js';
import { fragmentation } from './causes/fragmentation.js';
import { fullDevice, nonPytorchMemory, privatePools } from './causes/footprint.js';
import type { CauseRule } from './causes/helpers.js';
import { deviceRemap, driverSentinel, fractionLimit } from './causes/limits.js';
import { mpsOtherAllocations, outsideAllocator, preallocatingFrameworks } from './causes/other-families.js';
import { otherProcesses, strayContexts } from './causes/processes.js';
import { cupyPool, deepspeedWorkspace, mxnetPool, numbaDriver, onnxRuntimeArena, paddleAllocation, tensorRtMemory } from './causes/frameworks.js';
import { partialMessage } from './causes/partial.js';
import { llamaCppBuffer, vllmKvCache } from './causes/serving.js';
import type { Cause, OomContext, OomEvent } from './types.js';

/** Every rule, in no particular order (the score decides the ranking). */
export const CAUSE_RULES: readonly CauseRule[] = [
  exceedsTotal, corruptSize, fragmentation, otherProcesses, strayContexts, nonPytorchMemory, privatePools,
  fullDevice, fractionLimit, driverSentinel, deviceRemap, outsideAllocator, mpsOtherAllocations, preallocatingFrameworks,
  cupyPool, paddleAllocation, onnxRuntimeArena, tensorRtMemory, mxnetPool, numbaDriver, deepspeedWorkspace, llamaCppBuffer,
  vllmKvCache, partialMessage,
];

/**
 * The causes of `event`, highest score first. `context` may carry the run's allocator config and
 * CUDA_VISIBLE_DEVICES and, on the machine itself, the live GPU processes to cross-check pids against.
 */
export function explainOom(event: OomEvent, context: OomContext = {}): Cause[] {
  const causes: Cause[] = [];
  for (const rule of CAUSE_RULES) {
    const cause = rule(event, context);
    if (cause) causes.push(cause);
  }
  // When the request can never fit, footprint advice is noise.
  const final = causes.some((c) => c.id === 'request-exceeds-total' || c.id === 'corrupt-size')
    ? causes.filter((c) => !['footprint-too-large', 'small-request-full-device', 'fragmentation'].includes(c.id))
    : causes;
  return final.sort((a, b) => b.score - a.score);
}
