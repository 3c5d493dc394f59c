/** `gpumem snapshot --simulate / --what-if` on real snapshots, through the built binary. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = new URL('../../dist/cli/bin.js', import.meta.url).pathname;
const REAL = new URL('../fixtures/snapshot/real/', import.meta.url).pathname;

function gpumem(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('gpumem snapshot --what-if', () => {
  it('answers for a run that ended in an OOM, beside the recorded settings, in JSON', () => {
    const r = gpumem('snapshot', `${REAL}constructor_memory_snapshot.pickle`, '--json', '--what-if', 'expandable_segments:False', '--what-if', 'expandable_segments:True,max_split_size_mb:256');
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
    // Fixed segments pay for fragmentation: more segments than the expandable run that really happened, and
    // the run would have died before the request that failed in reality.
    expect(sim.whatIf[0].endSegmentCount).toBeGreaterThan(sim.actual.endSegmentCount);
    expect(sim.actual.earlierOomCount).toBe(0);
    expect(sim.whatIf[0].earlierOomCount).toBeGreaterThan(0);
    expect(sim.whatIf[0].firstOomEventIndex).toBeLessThan(dev1.trace.ooms[0].eventIndex);
    // The contract's fields sit at the top of `simulation` for the settings asked about (the first --what-if).
    const { actual: _a, whatIf: _w, device: _d, capacityBytes: _c, ...top } = sim;
    expect(top).toEqual(sim.whatIf[0]);
    expect(sim.settings).toBe('expandable_segments:False');
    expect(sim.oomAvoided).toBe(false);
    expect(sim.endSegmentCount).toBe(sim.whatIf[0].endSegmentCount);
    // No OOM on device 0: nothing to avoid.
    expect(out.devices.find((d: { device: number }) => d.device === 0).simulation.whatIf[0].oomAvoided).toBeNull();
  });

  it('--simulate reports how closely the replay matches the snapshot, in text', () => {
    const r = gpumem('snapshot', `${REAL}kkaitlyn_ctx128_forward_mixed.pickle`, '--simulate');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/trace starts mid-run/);
    expect(r.stdout).toMatch(/matches the snapshot: 2703\/2703 allocations at the real address, 688\/688 segments identical/);
  });

  it('--simulate --json puts the recorded-settings replay at the top of `simulation`', () => {
    const r = gpumem('snapshot', `${REAL}constructor_memory_snapshot.pickle`, '--simulate', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const dev1 = out.devices.find((d: { device: number }) => d.device === 1);
    const sim = dev1.simulation;
    expect(sim.whatIf).toEqual([]);
    expect(sim.settings).toBe('(as recorded)');
    expect(sim.coversWholeRun).toBe(true);
    // A whole-run trace replayed under its own settings ends where the real run ended, and the OOM stays.
    expect(sim.endReservedBytes).toBe(dev1.summary.reservedBytes);
    expect(sim.endSegmentCount).toBe(dev1.summary.segmentCount);
    expect(sim.oomAvoided).toBe(false);
    expect(sim.peakReservedBytes).toBe(sim.actual.peakReservedBytes);
    expect(sim.peakAllocatedBytes).toBe(sim.actual.peakAllocatedBytes);
  });

  it('refuses settings PyTorch would refuse, with one line and exit 2', () => {
    const r = gpumem('snapshot', `${REAL}octreenca_my_snapshot.pickle`, '--what-if', 'max_split_size_mb:8');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/max_split_size_mb too small/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('gpumem snapshot --html on real snapshots', () => {
  it('writes the page for a device with a trace but no memory (a chart tick of half a byte)', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'gpumem-real-html-')), 'r.html');
    const r = gpumem('snapshot', `${REAL}muduard_dump_snapshot.pickle`, '--html', out);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    expect(readFileSync(out, 'utf8')).toMatch(/<svg/);
  });
  it('a path that cannot be written is the user\'s mistake: one line, exit 2', () => {
    const r = gpumem('snapshot', `${REAL}octreenca_my_snapshot.pickle`, '--html', '/nonexistent-dir/r.html');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot write .*ENOENT/);
  });
});
