/** watch's findings line: refreshed every 5 s while numbers change, less often where the runs would cost more than the budget. */
import { describe, expect, it } from 'vitest';
import { FINDINGS_BUDGET, FINDINGS_EVERY_MS, FINDINGS_UNCHANGED_EVERY_MS, FindingsPace } from '../../../src/cli/watch/findings-pace.js';

/** A pace whose clock advances `costs[k]` ms during the k-th run. */
function paceWith(costs: number[]): { pace: FindingsPace; run: () => void } {
  let nowMs = 0;
  let k = 0;
  const pace = new FindingsPace(FINDINGS_BUDGET, () => nowMs);
  return { pace, run: () => pace.timed(() => (nowMs += costs[k++] ?? 0)) };
}

describe('findings pace', () => {
  it('keeps 5 s (changing) and 2 min (still) before any run and for cheap runs', () => {
    const { pace, run } = paceWith([0.4, 0.4]);
    expect([pace.periodMs(true), pace.periodMs(false)]).toEqual([FINDINGS_EVERY_MS, FINDINGS_UNCHANGED_EVERY_MS]);
    run();
    run();
    // 0.4 ms a run at 0.03 % of a core: 1.3 s, under the 5-s floor.
    expect(0.4 / FINDINGS_BUDGET).toBeLessThan(FINDINGS_EVERY_MS);
    expect([pace.periodMs(true), pace.periodMs(false)]).toEqual([FINDINGS_EVERY_MS, FINDINGS_UNCHANGED_EVERY_MS]);
  });

  it('stretches to cost / budget when runs are expensive, in the samples\' time at a replay\'s speed', () => {
    const { pace, run } = paceWith([15]);
    run();
    // 15 ms at 0.03 %: every 50 s of the clock; a replay at 4× plays 200 s of samples in that time.
    expect(pace.periodMs(true)).toBeCloseTo(50_000, 6);
    expect(pace.periodMs(true, 4)).toBeCloseTo(200_000, 6);
    expect(pace.periodMs(false)).toBe(FINDINGS_UNCHANGED_EVERY_MS);
    // What the runs cost stays within the budget: one run per period.
    expect(15 / pace.periodMs(true)).toBeLessThanOrEqual(FINDINGS_BUDGET + 1e-12);
  });

  it('follows the cost as a running mean: one slow run moves the period a quarter of the way', () => {
    const { pace, run } = paceWith([8, 8, 40, 8]);
    run();
    run();
    expect(pace.periodMs(true)).toBeCloseTo(8 / FINDINGS_BUDGET, 6);
    run();
    expect(pace.periodMs(true)).toBeCloseTo(16 / FINDINGS_BUDGET, 6);
    run();
    expect(pace.periodMs(true)).toBeCloseTo(14 / FINDINGS_BUDGET, 6);
  });

  it('hands back what the run returned, and lets an error through', () => {
    const pace = new FindingsPace();
    expect(pace.timed(() => 42)).toBe(42);
    expect(() => pace.timed(() => {
      throw new Error('boom');
    })).toThrow('boom');
  });
});
