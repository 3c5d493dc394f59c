/** `gpumem snapshot --simulate / --what-if` on real snapshots, in-process against the source. */
import { describe, expect, it } from 'vitest';
import { gpumemInProcess, type CliResult } from '../helpers/cli.js';

const REAL = new URL('../fixtures/snapshot/real/', import.meta.url).pathname;

const gpumem = (...args: string[]): Promise<CliResult> => gpumemInProcess(args, { env: { NO_COLOR: '1' } });

describe('gpumem snapshot --what-if', () => {
  it('answers for a run that ended in an OOM, beside the recorded settings, in JSON', async () => {
    const r = await gpumem('snapshot', `${REAL}constructor_memory_snapshot.pickle`, '--json', '--what-if', 'expandable_segments:False', '--what-if', 'expandable_segments:True,max_split_size_mb:256');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const dev1 = out.devices.find((d: { device: number }) => d.device === 1);
    const sim = dev1.simulation;
    // The OOM's own numbers: capacity = reserved at the OOM + the device_free the trace recorded.
    expect(sim.capacityBytes).toBeGreaterThan(dev1.summary.reservedBytes);
    expect(sim.actual.oomAvoided).toBe(false);
    expect(sim.actual.coversWholeRun).toBe(true);
    expect(sim.actual.endReservedBytes).toBe(dev1.summary.reservedBytes);
    expect(sim.actual.endSegmentCount).toBe(dev1.summary.segmentCount);
    expect(sim.whatIf.map((w: { settings: string }) => w.settings)).toEqual(['expandable_segments:False', 'expandable_segments:True,max_split_size_mb:256']);
    for (const w of sim.whatIf) {
      expect(typeof w.oomAvoided).toBe('boolean');
      expect(w.peakReservedBytes).toBeLessThanOrEqual(sim.capacityBytes);
      expect(w.peakAllocatedBytes).toBeLessThanOrEqual(w.peakReservedBytes);
      for (const k of ['peakReservedBytes', 'peakAllocatedBytes', 'endReservedBytes', 'endSegmentCount', 'coversWholeRun', 'settings']) expect(w).toHaveProperty(k);
    }
    // Fixed segments pay for fragmentation: more segments than the expandable run that really happened.
    expect(sim.whatIf[0].endSegmentCount).toBeGreaterThan(sim.actual.endSegmentCount);
    // No OOM on device 0: nothing to avoid.
    expect(out.devices.find((d: { device: number }) => d.device === 0).simulation.whatIf[0].oomAvoided).toBeNull();
  });

  it('--simulate reports how closely the replay matches the snapshot, in text', async () => {
    const r = await gpumem('snapshot', `${REAL}kkaitlyn_ctx128_forward_mixed.pickle`, '--simulate');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/trace starts mid-run/);
    expect(r.stdout).toMatch(/matches the snapshot: 2703\/2703 allocations at the real address, 688\/688 segments identical/);
  });

  it('refuses settings PyTorch would refuse, with one line and exit 2', async () => {
    const r = await gpumem('snapshot', `${REAL}octreenca_my_snapshot.pickle`, '--what-if', 'max_split_size_mb:8');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/max_split_size_mb too small/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
