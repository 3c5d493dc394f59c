import { describe, expect, it } from 'vitest';
import { AllocatorSim } from '../../../src/core/allocator/index.js';
import { parseStepTrace, replayStepTrace, traceTimeline } from '../../../src/core/estimate/index.js';

const MiB = 1024 * 1024;
const line = (o: Record<string, unknown>): string => JSON.stringify(o);
const alloc = (id: number, bytes: number, phase: string, step = 0): string =>
  line({ kind: 'alloc', id, bytes, dtype: 'float32', op: 'add', module: 'net', phase, step, frame: null });
const free = (id: number): string => line({ kind: 'free', id });

// Two steps of: forward 3 MiB + 1 MiB, backward frees them and makes a 5 MiB gradient, optimizer 2 MiB state.
const events: string[] = [line({ kind: 'header', schemaVersion: 1, torch: '2.15.0', steps: 2, stepsDone: 2 })];
for (const step of [0, 1]) {
  const b = step * 10;
  events.push(alloc(b + 1, 3 * MiB, 'forward', step), alloc(b + 2, MiB, 'forward', step), free(b + 2));
  events.push(alloc(b + 3, 5 * MiB, 'backward', step), free(b + 1));
  if (step === 0) events.push(alloc(b + 4, 2 * MiB, 'optimizer', step));
  events.push(free(b + 3));
}
events.push(line({ kind: 'end' }));
const TRACE = parseStepTrace(events.join('\n'));

describe('the timeline of a traced step', () => {
  it('keeps every event when there are few, with phases and steps, and peaks equal to the replay\'s', () => {
    const t = traceTimeline(TRACE, 0, new AllocatorSim());
    const r = replayStepTrace(TRACE, { workspaceBytes: 0 }, new AllocatorSim());
    expect(t.events).toBe(events.length - 2);
    expect(t.points.map((p) => p.requestedBytes / MiB)).toEqual([3, 4, 3, 8, 5, 7, 2, 5, 6, 5, 10, 7, 2]);
    expect(t.points.map((p) => p.phase).slice(0, 7)).toEqual(['forward', 'forward', 'forward', 'backward', 'backward', 'optimizer', 'optimizer']);
    expect(t.points[t.peakPoint]).toMatchObject({ requestedBytes: 10 * MiB, phase: 'backward', step: 1 });
    expect(t.peakRequestedBytes).toBe(r.peakRequestedBytes);
    expect(t.peakAllocatedBytes).toBe(r.allocator!.peakAllocatedBytes);
    expect(t.peakReservedBytes).toBe(r.allocator!.peakReservedBytes);
    for (const p of t.points) expect(p.reservedBytes!).toBeGreaterThanOrEqual(p.allocatedBytes!);
  });

  it('cut into fewer slices, each keeps its maximum, so the peak survives', () => {
    const t = traceTimeline(TRACE, 0, null, 4);
    expect(t.points).toHaveLength(4);
    expect(t.peakRequestedBytes).toBe(10 * MiB);
    expect(t.points[t.peakPoint]!.requestedBytes).toBe(10 * MiB);
    expect(t.points.every((p) => p.allocatedBytes === null && p.reservedBytes === null)).toBe(true);
    expect(t.points.map((p) => p.eventIndex)).toEqual([0, 3, 6, 9]);
  });
});
