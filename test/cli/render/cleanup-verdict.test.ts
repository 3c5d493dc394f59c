/** A run whose cleanup left a process running says so in its report and in the exit status. */
import { describe, expect, it } from 'vitest';
import { exitCodeForOutcome } from '../../../src/cli/exit-codes.js';
import { cleanupProblems, type CleanupReport } from '../../../src/core/run/index.js';

const passed: CleanupReport = { leftovers: [], memoryReleased: true, waitedMs: 10, heldByNothing: [], toleranceBytes: 0, survivors: [], rounds: 0 };
const survivor = { pid: 4242, comm: 'sleep', cmdline: ['sleep', '60'], gpuBytes: null, outcome: 'failed' as const, detail: 'SIGKILL: not permitted' };

describe('cleanup verdict', () => {
  it('a survivor is a cleanup problem; an older report without the field passes', () => {
    expect(cleanupProblems(passed)).toEqual([]);
    expect(cleanupProblems({ ...passed, survivors: [survivor] })).toEqual(['1 process of the run still running (pid 4242)']);
    const { survivors: _, ...older } = passed;
    expect(cleanupProblems(older)).toEqual([]);
    expect(cleanupProblems({ ...passed, memoryReleased: false })).toEqual(["the run's processes still held GPU memory"]);
  });

  it('exit 0 with a failed cleanup exits 1; a failing child keeps its own status', () => {
    expect(exitCodeForOutcome({ kind: 'child', code: 0, signal: null, cleanupFailed: true })).toBe(1);
    expect(exitCodeForOutcome({ kind: 'child', code: 0, signal: null, cleanupFailed: false })).toBe(0);
    expect(exitCodeForOutcome({ kind: 'child', code: 3, signal: null, cleanupFailed: true })).toBe(3);
  });
});
