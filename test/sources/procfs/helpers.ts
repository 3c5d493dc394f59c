/** Shared by the enricher tests: a bounded wait and a sample listing one pid on the given GPUs. */
import type { Sample } from '../../../src/core/types.js';

/** Polls `check` every 10 ms for up to 3 s. */
export async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A sample in which `pid` holds 1 byte on each GPU index given, with no host facts yet. */
export const sampleOf = (pid: number, gpuIndexes: number[] = [0]): Sample => ({
  timeMs: 1, source: { kind: 'nvml', detail: 'x' }, devices: [], unavailable: {},
  processes: gpuIndexes.map((gpuIndex) => ({ pid, gpuUuid: `GPU-${gpuIndex}`, gpuIndex, gpuInstanceId: null, computeInstanceId: null, usedBytes: 1, kind: 'compute', name: null, smUtilPct: null, host: null, unavailable: {} })),
});
