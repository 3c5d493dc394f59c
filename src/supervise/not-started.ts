/**
 * An attempt whose program could not be started (not found, not executable). Like a shell, the run ends
 * with status 127 (not found) or 126 (found but not runnable); plugins still get their after-attempt call
 * so that whatever they opened for the child (the companion's channel) is closed, and the report says why.
 */
import type { GpumemError } from '../core/errors.js';
import type { AttemptContext, RunPlugin } from './options.js';
import type { AttemptReport } from './report.js';
import type { BatchPlan } from './retry.js';

/** Shell-compatible status for a program that could not be started: 127 not found, 126 otherwise. */
export function startFailureStatus(error: GpumemError): number {
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' ? 127 : 126;
}

export interface NotStartedArgs {
  attempt: number;
  argv: string[];
  plan: BatchPlan | null;
  ctx: AttemptContext;
  plugins: readonly RunPlugin[];
  error: GpumemError;
  startedAtMs: number;
  durationMs: number;
  toleranceBytes: number;
}

/** Builds the report of an attempt that never ran, after letting each plugin close what it opened. */
export async function notStartedAttempt(a: NotStartedArgs): Promise<AttemptReport> {
  const exit = { code: startFailureStatus(a.error), signal: null };
  const plugins: Record<string, unknown> = {};
  for (const plugin of a.plugins) {
    if (plugin.afterAttempt) plugins[plugin.name] = await plugin.afterAttempt({ ...a.ctx, exit, ooms: [] });
  }
  return {
    attempt: a.attempt, argv: a.argv, batch: a.plan, startedAtMs: a.startedAtMs, durationMs: a.durationMs, exit,
    sampleHz: 0, samples: 0, peaks: [], mismatches: [], ooms: [],
    cleanup: { leftovers: [], memoryReleased: true, waitedMs: 0, heldByNothing: [], toleranceBytes: a.toleranceBytes },
    interruptedBy: null, plugins, outputTail: '', timeline: [], startError: a.error.hint ? `${a.error.message} (${a.error.hint})` : a.error.message,
  };
}
