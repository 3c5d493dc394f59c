/** Joining the companion's OOM captures to the OOMs printed in the output. */
import { describe, expect, it } from 'vitest';
import { applyCompanionMessage, createCompanionState, type OomMessage } from '../../../src/core/companion/index.js';
import { linkCompanionOoms } from '../../../src/supervise/companion/index.js';
import { createOomWatcher } from '../../../src/supervise/oom-watch.js';
import { GiB, MiB } from '../../../src/core/units.js';
const TEXT = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.06 GiB is free. ' +
  'Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 70.02 GiB is allocated by PyTorch, and 7.50 GiB is reserved by PyTorch but unallocated.\n';

function capture(pid: number, requested: number, allocated: number, reserved: number, timeMs: number): OomMessage {
  return {
    schemaVersion: 1, type: 'oom', pid, timeMs, source: 'observer', device: 0, requestedBytes: requested, deviceLimitBytes: Math.round(79.19 * GiB),
    deviceFreeBytes: Math.round(1.06 * GiB), snapshotPath: null, snapshotError: null,
    stats: {
      device: 0, allocatedBytes: allocated, reservedBytes: reserved, activeBytes: null, inactiveSplitBytes: null, requestedBytes: null,
      peakAllocatedBytes: null, peakReservedBytes: null, peakActiveBytes: null, numAllocRetries: 4, numOoms: 1,
    },
  };
}

describe('linkCompanionOoms', () => {
  it('attaches the capture with the same request and re-explains on the exact numbers; an unmatched capture is returned', () => {
    const watcher = createOomWatcher();
    const findings = [...watcher.push(`step 1\n${TEXT}`), ...watcher.end()];
    expect(findings).toHaveLength(1);
    const state = createCompanionState();
    const exactAllocated = 70 * GiB + 20 * MiB + 12345 * 512;
    // A caught OOM of another size first (not printed), then the printed one.
    applyCompanionMessage(state, capture(9, 512 * MiB, GiB, 2 * GiB, 1));
    applyCompanionMessage(state, capture(9, 2 * GiB, exactAllocated, exactAllocated + 7.5 * GiB, 2));
    const unmatched = linkCompanionOoms(findings, state, {});
    expect(unmatched.map((u) => u.requestedBytes)).toEqual([512 * MiB]);
    const f = findings[0]!;
    expect(f.allocator).toMatchObject({ pid: 9, requestedBytes: 2 * GiB, allocatedBytes: exactAllocated, unallocatedBytes: 7.5 * GiB, numAllocRetries: 4 });
    const event = f.event;
    expect(event.allocatedByPytorchBytes).toBe(BigInt(exactAllocated));
    expect(event.line).toBe(f.line);
    expect(f.causes.map((c) => c.id)).toContain('fragmentation');
  });
});
