/**
 * How the NVML source fails: a missing library or driver (one GpumemError naming the path and the NVML
 * code), a lost or forbidden device (marked, the others still read), per-call errors (that field only),
 * the memory-struct version check, a process list that grows between calls, and a wrong entry stride.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { GpumemError } from '../../../src/core/index.js';
import { openNvmlSource } from '../../../src/sources/nvml/index.js';
import { ListBuffer, readProcessList } from '../../../src/sources/nvml/processes.js';
import { fakeH100, fakeNvmlLib, writeScenario, type FakeScenario } from '../../fake-nvml/scenario.js';
import { MiB } from '../../../src/core/units.js';
const dir = mkdtempSync(join(tmpdir(), 'gpumem-nvml-fail-'));
let n = 0;
function withScenario(scenario: FakeScenario): string {
  const path = join(dir, `scenario-${n++}.txt`);
  writeScenario(path, scenario);
  process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
  return path;
}

function caught(fn: () => unknown): GpumemError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GpumemError) return err;
    throw err;
  }
  throw new Error('expected a GpumemError');
}

describe('opening', () => {
  it('a missing library is NO_GPU_ACCESS naming the path, with a hint', () => {
    const err = caught(() => openNvmlSource({ libPath: join(dir, 'nope', 'libnvidia-ml.so.1') }));
    expect(err.code).toBe('NO_GPU_ACCESS');
    expect(err.message).toContain(join(dir, 'nope', 'libnvidia-ml.so.1'));
    expect(err.hint).toMatch(/GPUMEM_NVML_LIB/);
  });

  it('a library without NVML symbols is refused', () => {
    const err = caught(() => openNvmlSource({ libPath: 'libc.so.6' }));
    expect(err.code).toBe('NO_GPU_ACCESS');
    expect(err.message).toMatch(/lacks nvmlInit_v2/);
  });

  it('init failure names the NVML return code', () => {
    process.env.GPUMEM_FAKE_NVML_SCENARIO = join(dir, 'missing-scenario.txt');
    const notLoaded = caught(() => openNvmlSource({ libPath: fakeNvmlLib('590') }));
    expect(notLoaded.code).toBe('NO_GPU_ACCESS');
    expect(notLoaded.message).toContain('NVML_ERROR_DRIVER_NOT_LOADED (9)');
    expect(notLoaded.hint).toMatch(/kernel module/);
    withScenario({ errors: [{ fn: 'nvmlInit_v2', device: '*', code: 18, times: 1 }], devices: [fakeH100(0)] });
    const mismatch = caught(() => openNvmlSource({ libPath: fakeNvmlLib('590') }));
    expect(mismatch.code).toBe('NVML_ERROR');
    expect(mismatch.message).toContain('NVML_ERROR_LIB_RM_VERSION_MISMATCH');
    // The error was injected once: the next open succeeds on the same library.
    openNvmlSource({ libPath: fakeNvmlLib('590') }).close();
  });

  it('uses GPUMEM_NVML_LIB when no path is given, and shares one session', async () => {
    withScenario({ devices: [fakeH100(0)] });
    process.env.GPUMEM_NVML_LIB = fakeNvmlLib('535.104');
    try {
      const a = openNvmlSource();
      const b = openNvmlSource({ libPath: fakeNvmlLib('535.104') });
      expect(a.libPath).toBe(fakeNvmlLib('535.104'));
      a.close();
      a.close();
      expect((await b.readSample()).devices).toHaveLength(1);
      b.close();
      await expect(b.readSample()).rejects.toMatchObject({ code: 'FAILED' });
    } finally {
      delete process.env.GPUMEM_NVML_LIB;
    }
  });
});

describe('one device failing', () => {
  it('NO_PERMISSION on a handle marks that device and keeps the rest', async () => {
    withScenario({ devices: [fakeH100(0, { status: 'noperm' }), fakeH100(1, { processes: [{ pid: 4242, usedBytes: MiB }] })] });
    const source = openNvmlSource({ libPath: fakeNvmlLib('590') });
    try {
      const s = await source.readSample();
      expect(s.devices[0]).toMatchObject({ status: 'no-permission', uuid: null, memory: { totalBytes: null } });
      expect(s.devices[0]!.unavailable['memory.totalBytes']).toBe('nvmlDeviceGetHandleByIndex_v2: NVML_ERROR_NO_PERMISSION');
      expect(s.devices[1]).toMatchObject({ status: 'ok', memory: { totalBytes: 81559 * MiB } });
      expect(s.processes.map((p) => [p.pid, p.gpuIndex])).toEqual([[4242, 1]]);
    } finally {
      source.close();
    }
  });

  it('a device lost mid-run is marked lost with its identity kept; it comes back when the driver does', async () => {
    const scenario: FakeScenario = { devices: [fakeH100(0, { processes: [{ pid: 5150, usedBytes: MiB }] }), fakeH100(1)] };
    const path = withScenario(scenario);
    const source = openNvmlSource({ libPath: fakeNvmlLib('535.104') });
    try {
      expect((await source.readSample()).devices[0]!.status).toBe('ok');
      scenario.devices[0]!.status = 'lost';
      writeScenario(path, scenario);
      const lost = await source.readSample();
      expect(lost.devices[0]).toMatchObject({ status: 'lost', uuid: 'GPU-00000000-0000-4000-8000-000000000000', memory: { usedBytes: null } });
      expect(lost.devices[0]!.unavailable['memory.usedBytes']).toMatch(/NVML_ERROR_GPU_IS_LOST/);
      expect(lost.devices[1]!.status).toBe('ok');
      expect(lost.processes).toEqual([]);
      scenario.devices[0]!.status = 'ok';
      writeScenario(path, scenario);
      expect((await source.readSample()).devices[0]!.status).toBe('ok');
    } finally {
      source.close();
    }
  });

  it('NO_PERMISSION on memory marks the device; an error on one field nulls only that field', async () => {
    withScenario({
      driverVersion: '590.48.01',
      cudaVersion: 13010,
      errors: [
        { fn: 'nvmlDeviceGetMemoryInfo_v2', device: 0, code: 4 },
        { fn: 'nvmlDeviceGetTemperature', device: 1, code: 3 },
      ],
      devices: [fakeH100(0), fakeH100(1), fakeH100(2, { temperatureC: undefined })],
    });
    const source = openNvmlSource({ libPath: fakeNvmlLib('590') });
    try {
      const [d0, d1, d2] = (await source.readSample()).devices;
      expect(d0).toMatchObject({ status: 'no-permission', memory: { usedBytes: null }, temperatureC: 31 });
      expect(d0!.unavailable['memory.usedBytes']).toBe('nvmlDeviceGetMemoryInfo_v2: NVML_ERROR_NO_PERMISSION');
      expect(d1).toMatchObject({ status: 'ok', temperatureC: null, memory: { totalBytes: 81559 * MiB } });
      expect(d1!.unavailable).toEqual({ temperatureC: 'nvmlDeviceGetTemperature: NVML_ERROR_NOT_SUPPORTED' });
      expect(d2!.temperatureC).toBeNull();
      expect(d2!.powerDrawMw).toBe(69000);
    } finally {
      source.close();
    }
  });
});

describe('memory struct version', () => {
  it('the fake rejects a wrong version like the real driver (25 on R525+, 13 on R510)', () => {
    withScenario({ devices: [fakeH100(0)] });
    for (const [era, wrong] of [['590', 25], ['510', 13]] as const) {
      const lib = koffi.load(fakeNvmlLib(era));
      const H = koffi.pointer(koffi.opaque());
      const init = lib.func('nvmlInit_v2', 'int', []);
      const handle = lib.func('nvmlDeviceGetHandleByIndex_v2', 'int', ['uint', koffi.out(koffi.pointer(H))]);
      const mem = lib.func('nvmlDeviceGetMemoryInfo_v2', 'int', [H, 'void *']);
      expect(init()).toBe(0);
      const h: unknown[] = [null];
      expect(handle(0, h)).toBe(0);
      const buf = Buffer.alloc(40);
      buf.writeUInt32LE(40 | (1 << 24), 0);
      expect(mem(h[0], buf)).toBe(wrong);
      buf.writeUInt32LE(0x02000028, 0);
      expect(mem(h[0], buf)).toBe(0);
      expect(buf.readBigUInt64LE(16)).toBe(479n * 1048576n);
      lib.func('nvmlShutdown', 'int', [])();
    }
  });

  it('falls back to v1 for the session when v2 rejects the version, and says why', async () => {
    withScenario({ errors: [{ fn: 'nvmlDeviceGetMemoryInfo_v2', device: '*', code: 25 }], devices: [fakeH100(0, { memory: { totalBytes: 1000 * MiB, reservedBytes: 10 * MiB, usedBytes: 90 * MiB } })] });
    const source = openNvmlSource({ libPath: fakeNvmlLib('590') });
    try {
      const d = (await source.readSample()).devices[0]!;
      expect(d.memory).toEqual({ totalBytes: 1000 * MiB, reservedBytes: null, usedBytes: 100 * MiB, freeBytes: 900 * MiB });
      expect(d.unavailable['memory.reservedBytes']).toMatch(/ARGUMENT_VERSION_MISMATCH/);
      expect(source.describeApis().memory).toBe('v1');
    } finally {
      source.close();
    }
  });
});

describe('process lists', () => {
  it('retries when the list grows between the count call and the fill call', async () => {
    const late = Array.from({ length: 20 }, (_, i) => ({ pid: 30000 + i, usedBytes: (i + 1) * MiB, late: true }));
    withScenario({ devices: [fakeH100(0, { processes: [{ pid: 1, usedBytes: MiB }, { pid: 2, usedBytes: MiB }, { pid: 3, usedBytes: MiB }, ...late] })] });
    const source = openNvmlSource({ libPath: fakeNvmlLib('535.54') });
    try {
      const { processes } = await source.readSample();
      expect(processes).toHaveLength(23);
      expect(processes.at(-1)).toMatchObject({ pid: 30019, usedBytes: 20 * MiB });
    } finally {
      source.close();
    }
  });

  it('recovers from a wrong stride guess by the sanity check', () => {
    withScenario({ devices: [fakeH100(0, { processes: [{ pid: 11, usedBytes: 5 * MiB }, { pid: 22, usedBytes: 6 * MiB }, { pid: 33, usedBytes: 7 * MiB }] })] });
    const lib = koffi.load(fakeNvmlLib('535.54'));
    const H = koffi.pointer(koffi.opaque());
    expect(lib.func('nvmlInit_v2', 'int', [])()).toBe(0);
    const h: unknown[] = [null];
    expect(lib.func('nvmlDeviceGetHandleByIndex_v2', 'int', ['uint', koffi.out(koffi.pointer(H))])(0, h)).toBe(0);
    const call = lib.func('nvmlDeviceGetComputeRunningProcesses_v3', 'int', [H, 'void *', 'void *']) as (...a: unknown[]) => number;
    const api = { symbol: 'nvmlDeviceGetComputeRunningProcesses_v3', call, choice: { suffix: '_v3' as const, stride: 24 as const, reason: 'wrong on purpose' } };
    const buffer = new ListBuffer();
    const result = readProcessList(api, buffer, h[0], 81559 * MiB);
    expect(result).toEqual({ entries: [11, 22, 33].map((pid, i) => ({ pid, usedBytes: (5 + i) * MiB, gpuInstanceId: null, computeInstanceId: null })), unchanged: false });
    expect(api.choice.stride).toBe(32);
    // The same answer again is recognised at the stride now chosen, and not decoded a second time.
    const again = readProcessList(api, buffer, h[0], 81559 * MiB);
    expect(again).toEqual({ ...result, unchanged: true });
    expect('entries' in again && 'entries' in result && again.entries === result.entries).toBe(true);
    // One number moved: decoded afresh.
    withScenario({ devices: [fakeH100(0, { processes: [{ pid: 11, usedBytes: 5 * MiB }, { pid: 22, usedBytes: 9 * MiB }, { pid: 33, usedBytes: 7 * MiB }] })] });
    // The fake re-reads its scenario in calls a sample makes first (count, handle, memory), not in the list call.
    expect(lib.func('nvmlDeviceGetCount_v2', 'int', ['void *'])(Buffer.alloc(4))).toBe(0);
    const moved = readProcessList(api, buffer, h[0], 81559 * MiB);
    expect(moved).toMatchObject({ unchanged: false });
    expect('entries' in moved && moved.entries.map((e) => e.usedBytes)).toEqual([5 * MiB, 9 * MiB, 7 * MiB]);
  });
});
