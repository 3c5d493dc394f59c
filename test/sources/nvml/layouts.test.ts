/**
 * The byte layouts the NVML source decodes, checked three ways: against gcc's sizeof/offsetof for the
 * nvml.h structs (compiled here), against the numbers in the ABI reference, and through koffi's own
 * struct layout engine.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import koffi from 'koffi';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  MEMORY_V1,
  MEMORY_V2,
  MEMORY_V2_VERSION,
  PCI_INFO,
  PROCESS_INFO,
  PROCESS_MAX_STRIDE,
  PROCESS_UTIL_SAMPLE,
  UTILIZATION,
} from '../../../src/sources/nvml/layouts.js';

const FAKE_DIR = fileURLToPath(new URL('../../fake-nvml/', import.meta.url));
let c: Record<string, number>;

beforeAll(() => {
  const exe = join(mkdtempSync(join(tmpdir(), 'gpumem-layout-')), 'probe');
  execFileSync('gcc', ['-o', exe, join(FAKE_DIR, 'layout_probe.c'), `-I${FAKE_DIR}`]);
  c = JSON.parse(execFileSync(exe, { encoding: 'utf8' })) as Record<string, number>;
});

describe('NVML struct layouts', () => {
  it('memory structs match gcc and the reference (24 and 40 bytes, version 0x02000028)', () => {
    expect([c['nvmlMemory_t'], c['nvmlMemory_t.total'], c['nvmlMemory_t.free'], c['nvmlMemory_t.used']]).toEqual([
      MEMORY_V1.size, MEMORY_V1.total, MEMORY_V1.free, MEMORY_V1.used,
    ]);
    expect(MEMORY_V1.size).toBe(24);
    expect(c['nvmlMemory_v2_t']).toBe(MEMORY_V2.size);
    expect(MEMORY_V2.size).toBe(40);
    for (const f of ['version', 'total', 'reserved', 'free', 'used'] as const) {
      expect(c[`nvmlMemory_v2_t.${f}`], f).toBe(MEMORY_V2[f]);
    }
    expect(MEMORY_V2_VERSION).toBe(0x02000028);
    expect(c['nvmlMemory_v2']).toBe(MEMORY_V2_VERSION);
  });

  it('PCI info and utilization match gcc (68 and 8 bytes)', () => {
    expect(c['nvmlPciInfo_t']).toBe(PCI_INFO.size);
    expect(PCI_INFO.size).toBe(68);
    expect(c['nvmlPciInfo_t.busId']).toBe(PCI_INFO.busId);
    expect(c['nvmlPciInfo_t.domain']).toBe(PCI_INFO.domain);
    expect(c['nvmlUtilization_t']).toBe(UTILIZATION.size);
    expect(c['nvmlUtilization_t.memory']).toBe(UTILIZATION.memory);
  });

  it('process entries are 16, 24 and 32 bytes with a shared prefix', () => {
    expect([c['nvmlProcessInfo_v1_t'], c['nvmlProcessInfo_v2_t'], c['nvmlProcessInfo_535_54_t']]).toEqual([16, 24, 32]);
    expect(c['nvmlProcessInfo_v1_t.usedGpuMemory']).toBe(PROCESS_INFO.usedGpuMemory);
    expect(c['nvmlProcessInfo_v2_t.gpuInstanceId']).toBe(PROCESS_INFO.gpuInstanceId);
    expect(c['nvmlProcessInfo_v2_t.computeInstanceId']).toBe(PROCESS_INFO.computeInstanceId);
    expect(PROCESS_MAX_STRIDE).toBe(c['nvmlProcessInfo_535_54_t']);
    expect(c['nvmlProcessUtilizationSample_t']).toBe(PROCESS_UTIL_SAMPLE.size);
    expect(c['nvmlProcessUtilizationSample_t.timeStamp']).toBe(PROCESS_UTIL_SAMPLE.timeStamp);
    expect(c['nvmlProcessUtilizationSample_t.smUtil']).toBe(PROCESS_UTIL_SAMPLE.smUtil);
  });

  it('koffi lays the same structs out identically', () => {
    const u64 = 'unsigned long long';
    const v2 = koffi.struct({ version: 'uint', total: u64, reserved: u64, free: u64, used: u64 });
    expect(koffi.sizeof(v2)).toBe(MEMORY_V2.size);
    expect(koffi.offsetof(v2, 'reserved')).toBe(MEMORY_V2.reserved);
    const p3 = koffi.struct({ pid: 'uint', usedGpuMemory: u64, gpuInstanceId: 'uint', computeInstanceId: 'uint', cc: u64 });
    expect(koffi.sizeof(p3)).toBe(32);
    expect(koffi.offsetof(p3, 'computeInstanceId')).toBe(PROCESS_INFO.computeInstanceId);
  });
});
