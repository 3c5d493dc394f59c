import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accountDevice, buildProcessViews, diagnose, PYTORCH_SPLIT_UNKNOWN } from '../../../src/core/diagnose/index.js';
import { device, GiB, input, MiB, proc, sample } from './build.js';
import { runs } from '../../helpers/fuzz.js';

describe('accounting', () => {
  it('splits used into visible + not visible + residual, exactly', () => {
    const s = sample(0, [device(0, 30 * GiB)], [
      proc(10, 0, 20 * GiB),
      proc(11, 0, 512 * MiB),
      proc(12, 0, 4 * GiB, { visible: false }),
    ]);
    const acc = accountDevice(s.devices[0]!, buildProcessViews([s]));
    expect(acc.visibleBytes).toBe(20 * GiB + 512 * MiB);
    expect(acc.notVisibleBytes).toBe(4 * GiB);
    expect(acc.residualBytes).toBe(30 * GiB - 24 * GiB - 512 * MiB);
    expect(acc.reservedBytes).toBe(479 * MiB);
    expect(acc.unknowns).toContain(PYTORCH_SPLIT_UNKNOWN);
  });

  it('names processes of unknown size and leaves them in the residual, never guessing', () => {
    const s = sample(0, [device(0, 10 * GiB)], [proc(10, 0, 6 * GiB), proc(11, 0, null)]);
    const acc = accountDevice(s.devices[0]!, buildProcessViews([s]));
    expect(acc.unknownPids).toEqual([11]);
    expect(acc.residualBytes).toBe(4 * GiB);
    expect(acc.unknowns.join('\n')).toMatch(/pid 11/);
  });

  it('has no residual when the device used total is unknown', () => {
    const s = sample(0, [device(0, null)], [proc(10, 0, GiB)]);
    const acc = accountDevice(s.devices[0]!, buildProcessViews([s]));
    expect(acc.residualBytes).toBeNull();
    expect(acc.unknowns[0]).toMatch(/used memory/);
  });

  it('property: the parts always sum to used, and unknown sizes are always listed', () => {
    const rowArb = fc.record({
      bytes: fc.option(fc.integer({ min: 0, max: 80 * 1024 }), { nil: null }),
      visible: fc.boolean(),
      gpu: fc.integer({ min: 0, max: 2 }),
    });
    fc.assert(
      fc.property(fc.array(rowArb, { maxLength: 30 }), fc.array(fc.integer({ min: 0, max: 81_000 }), { minLength: 3, maxLength: 3 }), (rows, usedMiB) => {
        const devices = usedMiB.map((u, i) => device(i, u * MiB));
        const processes = rows.map((r, i) => proc(100 + i, r.gpu, r.bytes === null ? null : r.bytes * MiB, { visible: r.visible }));
        const report = diagnose(input([sample(0, devices, processes)]));
        for (const acc of report.accounting) {
          expect(acc.visibleBytes + acc.notVisibleBytes + (acc.residualBytes as number)).toBe(acc.usedBytes);
          const unknown = rows.map((r, i) => ({ ...r, pid: 100 + i })).filter((r) => r.gpu === acc.gpuIndex && r.bytes === null);
          expect(acc.unknownPids).toEqual(unknown.map((r) => r.pid));
        }
      }),
      { numRuns: runs(300) },
    );
  });
});
