/**
 * The contract every GpuSource keeps (NVML, nvidia-smi, replay). Call runSourceContract inside a test file;
 * it declares its own tests. `expected` holds what the caller knows to be true of the source's data.
 */
import { describe, expect, it } from 'vitest';
import type { Device, Sample } from '../../src/core/index.js';
import type { GpuSource } from '../../src/sources/index.js';

export interface SourceExpectations {
  /** How far used + free + reserved may be from total (nvidia-smi rounds each field to MiB: 2 MiB). */
  memoryToleranceBytes: number;
  /** Number of devices every sample holds. */
  deviceCount?: number;
  /** Pids (sorted, with repeats per GPU row) the first sample holds. */
  pids?: number[];
  /** Reads to make for the monotone-time check (replay: at most the recording's length). Default 3. */
  reads?: number;
}

const MEMORY_KEYS = ['totalBytes', 'reservedBytes', 'usedBytes', 'freeBytes'] as const;

function checkDevice(d: Device, tolerance: number): void {
  for (const k of MEMORY_KEYS) {
    const v = d.memory[k];
    if (v === null) expect(d.unavailable[`memory.${k}`], `device ${d.index} memory.${k} null without a reason`).toBeTruthy();
    else expect(Number.isSafeInteger(v) && v >= 0, `device ${d.index} memory.${k} = ${v}`).toBe(true);
  }
  const { totalBytes: t, reservedBytes: r, usedBytes: u, freeBytes: f } = d.memory;
  if (t !== null && u !== null && f !== null) {
    // Before R510 there is no reserved field and used includes it: used + free = total.
    const sum = u + f + (r ?? 0);
    expect(Math.abs(sum - t), `device ${d.index}: used ${u} + free ${f} + reserved ${r} vs total ${t}`).toBeLessThanOrEqual(tolerance);
  }
  const scalars: Array<[string, number | null]> = [
    ['utilization.gpuPct', d.utilization.gpuPct], ['utilization.memoryPct', d.utilization.memoryPct],
    ['temperatureC', d.temperatureC], ['powerDrawMw', d.powerDrawMw], ['powerLimitMw', d.powerLimitMw],
  ];
  for (const [k, v] of scalars) {
    if (v === null) expect(d.unavailable[k], `device ${d.index} ${k} null without a reason`).toBeTruthy();
    else expect(Number.isFinite(v) && v >= 0).toBe(true);
  }
  for (const [k, v] of [['utilization.gpuPct', d.utilization.gpuPct], ['utilization.memoryPct', d.utilization.memoryPct]] as const) {
    if (v !== null) expect(v, k).toBeLessThanOrEqual(100);
  }
  // A reason given for a field means the field is unknown: never a number beside a reason.
  for (const k of MEMORY_KEYS) if (d.unavailable[`memory.${k}`]) expect(d.memory[k]).toBeNull();
  if (d.unavailable.temperatureC) expect(d.temperatureC).toBeNull();
  if (t !== null) {
    const migTotal = d.migInstances.reduce((s, m) => s + (m.memory.totalBytes ?? 0), 0);
    expect(migTotal).toBeLessThanOrEqual(t);
  }
}

/** Asserts the model invariants on one sample (exported so the contract's own failure cases are tested). */
export function checkSample(s: Sample, kind: GpuSource['kind'], e: SourceExpectations): void {
  expect(s.source.kind).toBe(kind);
  expect(Number.isFinite(s.timeMs)).toBe(true);
  if (e.deviceCount !== undefined) expect(s.devices).toHaveLength(e.deviceCount);
  const indices = s.devices.map((d) => d.index);
  expect(new Set(indices).size, 'device indices unique').toBe(indices.length);
  for (const d of s.devices) checkDevice(d, e.memoryToleranceBytes);
  const uuids = new Map(s.devices.filter((d) => d.uuid !== null).map((d) => [d.uuid, d.index]));
  for (const p of s.processes) {
    expect(Number.isInteger(p.pid) && p.pid > 0, `pid ${p.pid}`).toBe(true);
    if (p.gpuUuid !== null) expect(uuids.has(p.gpuUuid), `process ${p.pid} on unknown GPU ${p.gpuUuid}`).toBe(true);
    if (p.gpuIndex !== null) expect(indices).toContain(p.gpuIndex);
    if (p.usedBytes === null) expect(p.unavailable.usedBytes, `process ${p.pid} usedBytes null without a reason`).toBeTruthy();
    else expect(Number.isSafeInteger(p.usedBytes) && p.usedBytes >= 0).toBe(true);
    if (p.host) {
      for (const [k, v] of Object.entries(p.host)) {
        // containerId and job null are facts ("not in a container", "in no job"), not missing readings; an unknown
        // job carries its reason (host-facts.ts).
        if (v === null && k !== 'containerId' && k !== 'job') expect(p.host.unavailable[k], `process ${p.pid} host.${k} null without a reason`).toBeTruthy();
      }
    }
  }
}

/** Declares the contract tests for one source. `makeSource` opens a fresh source each call. */
export function runSourceContract(name: string, makeSource: () => Promise<GpuSource> | GpuSource, expected: SourceExpectations): void {
  describe(`GpuSource contract: ${name}`, () => {
    it('samples satisfy the model invariants', async () => {
      const source = await makeSource();
      try {
        const sample = await source.readSample();
        checkSample(sample, source.kind, expected);
        if (expected.pids) expect(sample.processes.map((p) => p.pid).sort((a, b) => a - b)).toEqual(expected.pids);
      } finally {
        source.close();
      }
    });

    it('sample time never goes backwards; every sample keeps the invariants', async () => {
      const source = await makeSource();
      try {
        let last = -Infinity;
        for (let i = 0; i < (expected.reads ?? 3); i++) {
          const s = await source.readSample();
          checkSample(s, source.kind, expected);
          expect(s.timeMs).toBeGreaterThanOrEqual(last);
          last = s.timeMs;
        }
      } finally {
        source.close();
      }
    });

    it('a sample handed out is never changed by later reads (later samples may share its objects)', async () => {
      const source = await makeSource();
      try {
        const first = await source.readSample();
        const asRead = JSON.stringify(first);
        for (let i = 1; i < (expected.reads ?? 3); i++) await source.readSample();
        expect(JSON.stringify(first)).toBe(asRead);
      } finally {
        source.close();
      }
    });

    it('close is safe twice, and a closed source refuses to read rather than hang', async () => {
      const source = await makeSource();
      source.close();
      expect(() => source.close()).not.toThrow();
      await expect(source.readSample()).rejects.toThrow();
    });

    it('samples survive a JSON round trip unchanged (recordings and --json rely on it)', async () => {
      const source = await makeSource();
      try {
        const s = await source.readSample();
        expect(JSON.parse(JSON.stringify(s))).toEqual(s);
      } finally {
        source.close();
      }
    });
  });
}
