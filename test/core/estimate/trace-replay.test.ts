import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GpumemError } from '../../../src/core/errors.js';
import { downsampleMax, parseStepTrace, replayStepTrace, sparkline, type AllocatorModel } from '../../../src/core/estimate/index.js';
import { MiB } from '../../../src/core/units.js';
import { alloc, free, handStep, HEADER, line } from './trace-lines.js';

const STEP = handStep([line({ kind: 'note', text: 'a note' })]);

describe('step trace replay', () => {
  it('finds the peak and splits it by category exactly', () => {
    const r = replayStepTrace(parseStepTrace(STEP), { workspaceBytes: 0 });
    expect(r.peakRequestedBytes).toBe(20 * MiB);
    expect(r.peakPhase).toBe('optimizer');
    expect(r.peakByCategory).toEqual({ weights: 4 * MiB, gradients: 4 * MiB, 'optimizer-state': 8 * MiB, activations: 0, temporaries: 4 * MiB, workspace: 0 });
    expect(r.phasePeaks).toEqual([
      { phase: 'forward', peakRequestedBytes: 7 * MiB },
      { phase: 'backward', peakRequestedBytes: 10 * MiB },
      { phase: 'optimizer', peakRequestedBytes: 20 * MiB },
      { phase: 'other', peakRequestedBytes: 4 * MiB },
    ]);
  });

  it('counts a forward output alive when backward starts as an activation', () => {
    // Stop before the optimizer: the backward peak holds the saved activation 1 and the gradient.
    const cut = STEP.split('\n').slice(0, 6).concat([line({ kind: 'end' })]).join('\n');
    const r = replayStepTrace(parseStepTrace(cut), { workspaceBytes: 0 });
    expect(r.peakRequestedBytes).toBe(10 * MiB);
    expect(r.peakByCategory.activations).toBe(2 * MiB);
    expect(r.peakByCategory.temporaries).toBe(8 * MiB); // weights and gradient, untagged in a cut trace
  });

  it('adds cuBLAS workspace once, at the first matrix multiply, and feeds the allocator model in order', () => {
    const calls: string[] = [];
    const model: AllocatorModel = {
      alloc: (id, size) => (calls.push(`a${id}:${size}`), true),
      free: (id) => void calls.push(`f${id}`),
      stats: () => ({ peakAllocatedBytes: 1, peakReservedBytes: 2, numAllocRetries: 0, numOoms: 0, segmentCount: 1 }),
    };
    const r = replayStepTrace(parseStepTrace(STEP), { workspaceBytes: 8 * MiB + 128 * 1024 }, model);
    expect(r.peakByCategory.workspace).toBe(8 * MiB + 128 * 1024);
    expect(r.peakRequestedBytes).toBe(20 * MiB + 8 * MiB + 128 * 1024);
    expect(calls.slice(0, 4)).toEqual([`a0:${4 * MiB}`, `a-1:${8 * MiB + 128 * 1024}`, `a1:${2 * MiB}`, `a2:${MiB}`]);
    expect(calls.filter((c) => c.startsWith('a-1')).length).toBe(1);
    expect(r.allocator?.peakReservedBytes).toBe(2);
  });

  it('keeps the maximum of each slice in the timeline', () => {
    expect(downsampleMax([1, 9, 2, 3, 8, 1], 3)).toEqual([9, 3, 8]);
    expect(sparkline([0, 4, 8])).toBe('▁▅█');
  });

  it('carries the error of a program that never finished its steps', () => {
    const t = parseStepTrace([HEADER, line({ kind: 'end', error: 'ZeroDivisionError: x' })].join('\n'));
    expect(t.error).toBe('ZeroDivisionError: x');
  });

  it('refuses a cut-off or foreign file with one GpumemError', () => {
    expect(() => parseStepTrace(STEP.split('\n').slice(0, 3).join('\n'))).toThrow(/without its end line/);
    expect(() => parseStepTrace('{"kind":"header","schemaVersion":9}\n{"kind":"end"}')).toThrow(/schemaVersion 9/);
    expect(() => parseStepTrace(`${HEADER}\n{"kind":"alloc","id":-1,"bytes":1,"phase":"forward"}\n{"kind":"end"}`)).toThrow(/whole-number id/);
  });

  it('never throws anything but GpumemError on arbitrary input (fuzz)', () => {
    const event = fc.oneof(
      fc.string(),
      fc.record({ kind: fc.constantFrom('alloc', 'free', 'tag', 'note', 'end', 'header'), id: fc.anything(), bytes: fc.anything(), phase: fc.anything(), ids: fc.anything(), schemaVersion: fc.constantFrom(1, 2) }).map((o) => JSON.stringify(o)),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 20 }), (lines) => {
        try {
          const t = parseStepTrace(lines.join('\n'));
          replayStepTrace(t, { workspaceBytes: 1 });
        } catch (err) {
          if (!(err instanceof GpumemError)) throw err;
        }
      }),
      { numRuns: 500 },
    );
  });
});
