/**
 * The `memory` message read off the channel and folded into the state: a good one becomes the history and raises
 * the run's peaks above what the sampler saw; malformed ones (lists of different lengths, a peak below the current
 * value, step 0, a negative size) are refused naming the field; a process cannot open more histories than the cap.
 */
import { describe, expect, it } from 'vitest';
import { applyCompanionMessage, createCompanionState, parseCompanionLine } from '../../../src/core/companion/index.js';
import { admitCompanionMessage, COMPANION_LIMITS, createCompanionIntake } from '../../../src/core/companion/intake.js';
import type { CompanionMessage } from '../../../src/core/companion/messages.js';

const base = { schemaVersion: 1, pid: 42, timeMs: 1000 };
const memory = (over: Record<string, unknown> = {}): string => JSON.stringify({
  ...base, type: 'memory', device: 0, boundary: 'optimizer', firstStep: 1, leftBytes: [10, 20], peakAllocatedBytes: [100, 110],
  reservedBytes: [100, 110], peakReservedBytes: [100, 120], dropped: 0, ...over,
});

describe('memory message', () => {
  it('a good message is folded into the history, and its peaks raise the device maxima the sampler kept', () => {
    const state = createCompanionState();
    const stats = parseCompanionLine(JSON.stringify({ ...base, type: 'stats', seq: 1, devices: [{ device: 0, allocatedBytes: 20, reservedBytes: 110, peakAllocatedBytes: 30, peakReservedBytes: 110 }] }));
    applyCompanionMessage(state, stats as CompanionMessage);
    applyCompanionMessage(state, parseCompanionLine(memory()) as CompanionMessage);
    const p = state.get(42);
    expect(p?.memory.get(0)?.recent.map((r) => [r.step, r.leftBytes, r.peakAllocatedBytes])).toEqual([[1, 10, 100], [2, 20, 110]]);
    expect(p?.devices.get(0)?.maxPeakAllocatedBytes).toBe(110);
    expect(p?.devices.get(0)?.maxPeakReservedBytes).toBe(120);
  });

  it.each([
    [{ peakAllocatedBytes: [100] }, /peakAllocatedBytes: 1 entries where .leftBytes has 2/],
    [{ peakAllocatedBytes: [5, 110] }, /peakAllocatedBytes\[0\]: is below what the step left allocated/],
    [{ peakReservedBytes: [100, 100] }, /peakReservedBytes\[1\]: is below the reserved bytes/],
    [{ firstStep: 0 }, /firstStep: steps count from 1/],
    [{ leftBytes: [10, -1] }, /leftBytes\[1\]: expected a non-negative integer/],
    [{ boundary: 'epoch' }, /boundary: expected "optimizer" or "dataloader"/],
  ])('refuses %j', (over, error) => {
    expect(() => parseCompanionLine(memory(over))).toThrow(error);
  });

  it(`a process opens at most ${COMPANION_LIMITS.memoryDevicesPerProcess} device histories; more are counted`, () => {
    const intake = createCompanionIntake();
    for (let device = 0; device < COMPANION_LIMITS.memoryDevicesPerProcess + 3; device++) {
      admitCompanionMessage(intake, parseCompanionLine(memory({ device })) as CompanionMessage);
    }
    expect(intake.state.get(42)?.memory.size).toBe(COMPANION_LIMITS.memoryDevicesPerProcess);
    expect(intake.drops.overKindLimit.memory).toBe(3);
  });
});
