/**
 * The OOM forecast on /metrics: a live companion file (as `gpumem run` publishes it) whose process leaks 4 MiB a
 * step and peaks every 100 steps shows the growth, the steps left, the next spike's headroom and the warning
 * count with that pid and GPU, read back through the live file's validation; promtool accepts it.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCompanionMessage, buildLiveCompanionDoc, createCompanionState, type CompanionMessage } from '../../src/core/companion/index.js';
import { forecastMemory } from '../../src/core/forecast/index.js';
import { liveCompanionPath, writeLiveCompanion } from '../../src/store/index.js';
import { readStartTicks } from '../../src/sources/index.js';
import { GPU0_UUID, startHarness, type Harness } from './harness.js';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
let h: Harness;

function memory(pid: number, leakMiB: number): CompanionMessage {
  const steps = Array.from({ length: 450 }, (_, i) => i + 1);
  const left = steps.map((s) => 2 * GiB + s * leakMiB * MiB);
  const peak = steps.map((s, i) => (left[i] as number) + (s % 100 === 0 ? 5 * GiB : 3 * GiB));
  return { schemaVersion: 1, type: 'memory', pid, timeMs: 3, device: 0, boundary: 'optimizer', firstStep: 1, leftBytes: left, peakAllocatedBytes: peak, reservedBytes: peak, peakReservedBytes: peak, dropped: 0 };
}

beforeAll(async () => {
  h = await startHarness();
  const pid = h.trainerPid;
  const state = createCompanionState();
  applyCompanionMessage(state, { schemaVersion: 1, type: 'devices', pid, timeMs: 1, devices: [{ device: 0, uuid: GPU0_UUID, name: null, totalBytes: null }] });
  applyCompanionMessage(state, {
    schemaVersion: 1, type: 'stats', pid, timeMs: 2, seq: 1, devices: [{
      device: 0, allocatedBytes: 4 * GiB, reservedBytes: 6 * GiB, activeBytes: null, inactiveSplitBytes: null, requestedBytes: null,
      peakAllocatedBytes: 6 * GiB, peakReservedBytes: 6 * GiB, peakActiveBytes: null, numAllocRetries: 0, numOoms: 0,
    }],
  });
  applyCompanionMessage(state, memory(pid, 4));
  // What the plugin computes on a tick: the limit 10 GiB here.
  const forecast = forecastMemory(state.get(pid)!.memory.get(0)!, { limitBytes: 10 * GiB });
  const doc = buildLiveCompanionDoc(state, { pid: process.pid, startTicks: readStartTicks(process.pid) }, Date.now(), (p) => readStartTicks(p), () => (forecast ? [forecast] : []));
  const error = writeLiveCompanion(liveCompanionPath({ XDG_RUNTIME_DIR: h.runtimeDir }, process.pid), doc);
  if (error !== null) throw new Error(error);
});
afterAll(() => h.close());

describe('OOM forecast metrics', () => {
  it('exports growth, steps left, spike headroom and warnings per pid and GPU; promtool accepts them', async () => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    const value = (name: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${name}{pid="${h.trainerPid}",`) && l.includes(`UUID="${GPU0_UUID}"`));
      expect(line, name).toBeDefined();
      return Number(line!.slice(line!.lastIndexOf(' ') + 1));
    };
    expect(value('gpumem_forecast_growth_bytes_per_step')).toBeCloseTo(4 * MiB, 3);
    // Usual peak at step 450: 2 GiB + 1800 MiB + 3 GiB; 10 GiB minus that, at 4 MiB a step.
    expect(value('gpumem_forecast_oom_steps')).toBe(Math.ceil((10 * GiB - (5 * GiB + 1800 * MiB)) / (4 * MiB)));
    // The spike at step 500 peaks at 7 GiB + 2000 MiB.
    expect(value('gpumem_forecast_spike_headroom_bytes')).toBe(10 * GiB - (7 * GiB + 2000 * MiB));
    // Growth reaches the limit within 1000 steps (830), and pushes a later spike over it before that.
    expect(value('gpumem_forecast_warnings')).toBe(2);
    const own = text.split('\n\n').filter((block) => !block.includes('DCGM_FI_')).join('\n\n');
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: own, encoding: 'utf8' });
    expect(`${checked.stdout}${checked.stderr}`).toBe('');
    expect(checked.status).toBe(0);
  });
});
