/**
 * PyTorch's allocator numbers on /metrics: a supervisor's live companion file (as `gpumem run` publishes it)
 * for a real process on the fake driver's GPU 0 shows up as gpumem_pytorch_* with that pid, GPU and UUID.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCompanionMessage, buildLiveCompanionDoc, createCompanionState } from '../../src/core/companion/index.js';
import { readStartTicks } from '../../src/sources/index.js';
import { liveCompanionPath, writeLiveCompanion } from '../../src/store/index.js';
import { startHarness, type Harness } from './harness.js';

const UUID = 'GPU-00000000-0000-4000-8000-000000000000';
const GiB = 1024 ** 3;
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
  const pid = h.trainerPid;
  const state = createCompanionState();
  applyCompanionMessage(state, { schemaVersion: 1, type: 'devices', pid, timeMs: 1, devices: [{ device: 0, uuid: UUID, name: null, totalBytes: null }] });
  applyCompanionMessage(state, {
    schemaVersion: 1, type: 'stats', pid, timeMs: 2, seq: 1, devices: [{
      device: 0, allocatedBytes: 11 * GiB, reservedBytes: 14 * GiB, activeBytes: 11 * GiB, inactiveSplitBytes: 0, requestedBytes: 11 * GiB,
      peakAllocatedBytes: 13 * GiB, peakReservedBytes: 15 * GiB, peakActiveBytes: 13 * GiB, numAllocRetries: 2, numOoms: 1,
    }],
  });
  const doc = buildLiveCompanionDoc(state, { pid: process.pid, startTicks: readStartTicks(process.pid) }, Date.now(), (p) => readStartTicks(p));
  const env = { XDG_RUNTIME_DIR: h.runtimeDir };
  expect(writeLiveCompanion(liveCompanionPath(env, process.pid), doc)).toBeNull();
});
afterAll(() => h.close());

describe('PyTorch metrics of supervised runs', () => {
  it('exports allocated, reserved, peaks and OOMs per pid and GPU', async () => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    const labels = `{pid="${h.trainerPid}",gpu="0",UUID="${UUID}"}`;
    expect(text).toContain(`gpumem_pytorch_allocated_bytes${labels} ${11 * GiB}\n`);
    expect(text).toContain(`gpumem_pytorch_reserved_bytes${labels} ${14 * GiB}\n`);
    expect(text).toContain(`gpumem_pytorch_peak_allocated_bytes${labels} ${13 * GiB}\n`);
    expect(text).toContain(`gpumem_pytorch_peak_reserved_bytes${labels} ${15 * GiB}\n`);
    expect(text).toContain(`gpumem_pytorch_ooms_total${labels} 1\n`);
  });
});
