/**
 * The page's memory chart runs from 0 to the GPUs' capacity: on a 48 GiB card its axis ends at 48, where
 * uPlot's automatic range rounded it up to 80 and the line never came near the top it suggested.
 */
import { describe, expect, it } from 'vitest';
import { memoryRange, noteCapacity } from '../../src/server/page/memory-axis.js';

const GiB = 1024 ** 3;

describe('memory axis', () => {
  it('ends at the largest GPU\'s capacity, whatever the data', () => {
    expect(memoryRange(null)).toEqual([0, 1]);
    noteCapacity(null);
    noteCapacity(47.99 * GiB);
    expect(memoryRange(45)).toEqual([0, 47.99]);
    expect(memoryRange(null)).toEqual([0, 47.99]);
    noteCapacity(79.65 * GiB);
    expect(memoryRange(45)[1]).toBeCloseTo(79.65, 6);
    expect(memoryRange(81)[1]).toBe(81);
  });
});
