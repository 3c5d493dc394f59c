/**
 * A GPU double for supervision tests: test processes write "pid-gpu" claim files (test/fixtures/procs/claim.mjs)
 * and this source turns them into samples, dropping claims of processes that are gone — as the driver drops
 * the memory of a process that exited. `claimsScenario` turns the same claims into a fake-NVML scenario.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Device, GpuProcess, Sample } from '../../../src/core/index.js';
import type { GpuSource } from '../../../src/sources/index.js';
import { readProcStat as readProcEntry } from '../../../src/sources/index.js';
import { GiB } from '../../../src/core/units.js';
export { GiB };
export const PROCS = fileURLToPath(new URL('../../fixtures/procs', import.meta.url));

export interface ClaimGpu {
  totalBytes: number;
  /** Memory held before the test by processes outside it (counted in used). */
  baseUsedBytes?: number;
}

export function uuidOf(index: number): string {
  return `GPU-00000000-0000-4000-8000-00000000000${index}`;
}

export function makeDevice(index: number, gpu: ClaimGpu, usedBytes: number): Device {
  const reservedBytes = 512 * 1024 * 1024;
  return {
    index, uuid: uuidOf(index), name: 'Test GPU 80GB', pciBusId: `00000000:${(0x17 + index).toString(16)}:00.0`, minorNumber: index,
    status: 'ok', memory: { totalBytes: gpu.totalBytes, reservedBytes, usedBytes, freeBytes: gpu.totalBytes - reservedBytes - usedBytes },
    utilization: { gpuPct: 0, memoryPct: 0 }, temperatureC: 40, powerDrawMw: 70000, powerLimitMw: 700000,
    computeMode: 'Default', migMode: null, migInstances: [], driverVersion: '570.0', cudaDriverVersion: '12.8', unavailable: {},
  };
}

/** Live claims: pid → gpu index → bytes, only for pids that still run (zombies do not hold memory). */
export function readClaims(dir: string): Array<{ pid: number; gpu: number; bytes: number }> {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: Array<{ pid: number; gpu: number; bytes: number }> = [];
  for (const name of names) {
    const m = /^(\d+)-(\d+)$/.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    const entry = readProcEntry(pid);
    if (!entry || entry.state === 'Z') continue;
    try {
      out.push({ pid, gpu: Number(m[2]), bytes: Number(readFileSync(join(dir, name), 'utf8')) });
    } catch {
      // Being replaced right now; the next sample sees it.
    }
  }
  return out;
}

/** A GpuSource over a claims directory. `leak` adds memory no process accounts for (driver-held). */
export function claimsSource(dir: string, gpus: ClaimGpu[], extra: { leakBytes?: number[] } = {}): GpuSource & { reads: number } {
  const src = {
    kind: 'nvml' as const,
    reads: 0,
    async readSample(): Promise<Sample> {
      src.reads++;
      const claims = readClaims(dir);
      const processes: GpuProcess[] = claims.map((c) => ({
        pid: c.pid, gpuUuid: uuidOf(c.gpu), gpuIndex: c.gpu, gpuInstanceId: null, computeInstanceId: null, usedBytes: c.bytes,
        kind: 'compute', name: null, smUtilPct: null, host: null, unavailable: {},
      }));
      const devices = gpus.map((g, i) => {
        const held = claims.filter((c) => c.gpu === i).reduce((s, c) => s + c.bytes, 0);
        return makeDevice(i, g, (g.baseUsedBytes ?? 0) + held + (extra.leakBytes?.[i] ?? 0));
      });
      return { timeMs: Date.now(), source: { kind: 'nvml', detail: 'test claims' }, devices, processes, unavailable: {} };
    },
    close() {},
  };
  return src;
}

export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A writable stream that keeps what is written. */
export function sink(): NodeJS.WritableStream & { text: () => string } {
  const chunks: string[] = [];
  return {
    write(chunk: string | Uint8Array) {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    },
    text: () => chunks.join(''),
  } as unknown as NodeJS.WritableStream & { text: () => string };
}

/** True while a pid exists and is not a zombie. */
export function alive(pid: number): boolean {
  const e = readProcEntry(pid);
  return e !== null && e.state !== 'Z';
}
