import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseComputeAppsCsv, parseQueryGpuCsv } from '../../../src/sources/smi/index.js';
import { MiB } from './expected.js';

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/nvidia-smi/${name}`, import.meta.url), 'utf8');

describe('parseQueryGpuCsv on every real fixture', () => {
  it('H100 under load (212 fields, values with units)', () => {
    const [d, ...rest] = parseQueryGpuCsv(fixture('h100-80gb-hbm3-driver-590.48.01-query-gpu.csv'));
    expect(rest).toEqual([]);
    expect(d!.memory).toEqual({ totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 19818 * MiB, freeBytes: 61263 * MiB });
    expect([d!.index, d!.name, d!.pciBusId, d!.migMode, d!.computeMode, d!.driverVersion]).toEqual([0, 'NVIDIA H100 80GB HBM3', '00000000:00:09.0', 'disabled', 'Default', '590.48.01']);
    expect([d!.utilization.gpuPct, d!.utilization.memoryPct, d!.temperatureC, d!.powerDrawMw, d!.powerLimitMw]).toEqual([100, 11, 59, 631950, 700000]);
  });

  it('H100 in MIG mode: utilization [N/A] → null with reason', () => {
    const [d] = parseQueryGpuCsv(fixture('h100-80gb-hbm3-mig-driver-590.48.01-query-gpu.csv'));
    expect(d!.memory).toEqual({ totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 11125 * MiB, freeBytes: 69956 * MiB });
    expect(d!.migMode).toBe('enabled');
    expect(d!.utilization).toEqual({ gpuPct: null, memoryPct: null });
    expect(d!.unavailable['utilization.gpuPct']).toBe('[N/A] in nvidia-smi output');
  });

  it('P100 nounits: the header carries MiB; no trailing newline; total not queried', () => {
    const [d] = parseQueryGpuCsv(fixture('tesla-p100-pcie-16gb-driver-510.47.03-query-gpu.csv'));
    expect(d!.memory).toEqual({ totalBytes: null, reservedBytes: 103 * MiB, usedBytes: 0, freeBytes: 16280 * MiB });
    expect(d!.unavailable['memory.totalBytes']).toBe('not in the nvidia-smi query');
    expect([d!.uuid, d!.powerDrawMw, d!.temperatureC]).toEqual(['GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6', 28160, 37]);
  });

  it('k8s MIG pod: [Insufficient Permissions] memory → null with that reason', () => {
    const [d] = parseQueryGpuCsv(fixture('a100-sxm4-80gb-mig-k8s-pod-driver-535.161.08-query-gpu-insufficient-permissions.csv'));
    expect(d!.memory).toEqual({ totalBytes: null, reservedBytes: null, usedBytes: null, freeBytes: null });
    expect(d!.unavailable['memory.usedBytes']).toBe('[Insufficient Permissions] in nvidia-smi output');
    expect([d!.name, d!.driverVersion, d!.temperatureC]).toEqual(['NVIDIA A100-SXM4-80GB', '535.161.08', 47]);
  });

  it('refuses a table without memory fields or with a cut-off row', () => {
    expect(() => parseQueryGpuCsv('name, uuid\nA, B\n')).toThrow(/no memory\./);
    const h100 = fixture('h100-80gb-hbm3-driver-590.48.01-query-gpu.csv');
    expect(() => parseQueryGpuCsv(h100.slice(0, h100.length - 300))).toThrow(/line 2/);
    expect(() => parseQueryGpuCsv('')).toThrow(/no header/);
  });
});

describe('parseComputeAppsCsv on every real fixture', () => {
  it('H100: three processes with exact bytes', () => {
    const ps = parseComputeAppsCsv(fixture('h100-80gb-hbm3-driver-590.48.01-query-compute-apps.csv'));
    expect(ps.map((p) => [p.pid, p.usedBytes, p.name, p.gpuUuid])).toEqual([
      [11327, 2566 * MiB, '/root/tools/memhog', 'GPU-00000000-0000-0000-0000-000000000000'],
      [11328, 1542 * MiB, '/root/tools/memhog', 'GPU-00000000-0000-0000-0000-000000000000'],
      [11345, 15690 * MiB, './gpu_burn', 'GPU-00000000-0000-0000-0000-000000000000'],
    ]);
  });

  it('H100 MIG: three processes; the CSV has no GI/CI columns', () => {
    const devices = parseQueryGpuCsv(fixture('h100-80gb-hbm3-mig-driver-590.48.01-query-gpu.csv'));
    const ps = parseComputeAppsCsv(fixture('h100-80gb-hbm3-mig-driver-590.48.01-query-compute-apps.csv'), devices);
    expect(ps.map((p) => [p.pid, p.usedBytes, p.gpuIndex, p.gpuInstanceId])).toEqual([
      [21180, 2296 * MiB, 0, null], [21181, 1272 * MiB, 0, null], [21198, 7484 * MiB, 0, null],
    ]);
  });

  it('Windows WDDM: 12 rows, used memory [N/A] → null, names with spaces kept whole', () => {
    const ps = parseComputeAppsCsv(fixture('rtx-2080-super-windows-wddm-driver-591.86-query-compute-apps.csv'));
    expect(ps).toHaveLength(12);
    expect(ps.every((p) => p.usedBytes === null && p.unavailable.usedBytes === '[N/A] in nvidia-smi output')).toBe(true);
    expect(ps[4]!.name).toBe('C:\\Program Files\\NZXT CAM\\NZXT CAM.exe');
  });

  it('a process name containing ", " is reassembled from both ends', () => {
    const csv = 'pid, process_name, used_memory [MiB]\n42, python train.py, lr=1, 300 MiB\n';
    expect(parseComputeAppsCsv(csv).map((p) => [p.pid, p.name, p.usedBytes])).toEqual([[42, 'python train.py, lr=1', 300 * MiB]]);
  });

  it('refuses missing pid column and bad pids', () => {
    expect(() => parseComputeAppsCsv('gpu_uuid, used_memory [MiB]\nX, 1 MiB\n')).toThrow(/no pid/);
    expect(() => parseComputeAppsCsv('pid, used_memory [MiB]\n[N/A], 1 MiB\n')).toThrow(/bad pid/);
  });
});
