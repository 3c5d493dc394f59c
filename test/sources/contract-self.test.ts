/** The contract must be able to fail: broken samples are caught by its invariants. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Sample } from '../../src/core/index.js';
import { parseSmiXml } from '../../src/sources/smi/index.js';
import { checkSample } from './contract.js';
import { MiB } from '../../src/core/units.js';
function good(): Sample {
  const r = parseSmiXml(readFileSync(new URL('../fixtures/nvidia-smi/tesla-t4-procs-driver-515.105.01.xml', import.meta.url), 'utf8'));
  return { timeMs: 1, source: { kind: 'smi', detail: 'x' }, devices: r.devices, processes: r.processes, unavailable: {} };
}
const opts = { memoryToleranceBytes: 2 * MiB };

describe('contract invariants', () => {
  it('accept a real sample', () => {
    expect(() => checkSample(good(), 'smi', opts)).not.toThrow();
  });
  it('catch an unknown shown as 0 (a reason beside a number)', () => {
    const s = good();
    s.devices[0]!.memory.reservedBytes = 0;
    s.devices[0]!.unavailable['memory.reservedBytes'] = 'not supported';
    expect(() => checkSample(s, 'smi', opts)).toThrow();
  });
  it('catch a null without a reason', () => {
    const s = good();
    s.devices[0]!.temperatureC = null;
    expect(() => checkSample(s, 'smi', opts)).toThrow(/temperatureC null without a reason/);
  });
  it('catch memory that does not add up beyond the tolerance', () => {
    const s = good();
    s.devices[0]!.memory.usedBytes! += 4 * MiB;
    expect(() => checkSample(s, 'smi', opts)).toThrow(/used .* vs total/);
  });
  it('catch a process on a GPU the sample does not have', () => {
    const s = good();
    s.processes[0]!.gpuUuid = 'GPU-elsewhere';
    expect(() => checkSample(s, 'smi', opts)).toThrow(/unknown GPU/);
  });
  it('catch a fractional byte count and a wrong source kind', () => {
    const s = good();
    s.processes[0]!.usedBytes = 1.5;
    expect(() => checkSample(s, 'smi', opts)).toThrow();
    expect(() => checkSample(good(), 'nvml', opts)).toThrow();
  });
});
