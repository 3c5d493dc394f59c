/** Builders for synthetic samples: a Device, a GpuProcess with host facts, a Sample, and a diagnosis input. */
import type { CudaEnv, Device, GpuProcess, HostFacts, Sample } from '../../../src/core/index.js';
import { buildContext, RULES } from '../../../src/core/diagnose/index.js';
import type { DiagnoseInput, Finding } from '../../../src/core/diagnose/index.js';
import { GiB, MiB } from '../../../src/core/units.js';
export { GiB, MiB };
/** An H100 80GB as nvidia-smi reports it: 81559 MiB total, 479 MiB reserved. */
export const H100_TOTAL = 81559 * MiB;
export const H100_RESERVED = 479 * MiB;

export function device(index: number, usedBytes: number | null, opts: Partial<Device> & { utilPct?: number | null } = {}): Device {
  const total = opts.memory?.totalBytes ?? H100_TOTAL;
  const reserved = opts.memory?.reservedBytes ?? H100_RESERVED;
  return {
    index,
    uuid: `GPU-0000000${index}-aaaa-bbbb-cccc-00000000000${index}`,
    name: 'NVIDIA H100 80GB HBM3',
    pciBusId: `00000000:0${index}:00.0`,
    minorNumber: index,
    status: 'ok',
    memory: { totalBytes: total, reservedBytes: reserved, usedBytes, freeBytes: usedBytes === null ? null : total - reserved - usedBytes },
    utilization: { gpuPct: opts.utilPct === undefined ? 0 : opts.utilPct, memoryPct: 0 },
    temperatureC: 40,
    powerDrawMw: 70000,
    powerLimitMw: 700000,
    computeMode: 'Default',
    migMode: 'disabled',
    migInstances: [],
    driverVersion: '590.48.01',
    cudaDriverVersion: '13.1',
    unavailable: {},
    ...opts,
  };
}

export interface ProcOpts {
  ppid?: number;
  user?: string;
  uid?: number;
  cmd?: string[];
  state?: HostFacts['state'];
  visible?: boolean;
  smUtilPct?: number | null;
  startTimeMs?: number;
  env?: CudaEnv | null;
  exe?: string | null;
  /** CPU time used so far, in clock ticks (absent: unknown). */
  cpuTicks?: number;
  /** When cpuTicks was read (a live sampler's slow re-reads); absent: every sample is its own reading. */
  cpuTicksAtMs?: number;
}

export function host(pid: number, o: ProcOpts = {}): HostFacts {
  const visible = o.visible ?? true;
  return {
    visible,
    uid: visible ? (o.uid ?? 1000) : null,
    user: visible ? (o.user ?? 'alice') : null,
    ppid: visible ? (o.ppid ?? 1000) : null,
    cmdline: visible ? (o.cmd ?? ['python', 'train.py']) : null,
    exe: visible ? (o.exe ?? '/usr/bin/python3.12') : null,
    startTimeMs: visible ? (o.startTimeMs ?? 1_000_000) : null,
    startTicks: visible ? 100 : null,
    state: visible ? (o.state ?? 'S') : null,
    containerId: null,
    nspid: visible ? [pid] : null,
    cudaEnv: visible ? (o.env === undefined ? null : o.env) : null,
    unavailable: visible ? {} : { visible: 'no such process in /proc' },
    ...(o.cpuTicks !== undefined ? { cpuTicks: o.cpuTicks } : {}),
    ...(o.cpuTicksAtMs !== undefined ? { cpuTicksAtMs: o.cpuTicksAtMs } : {}),
  };
}

export function proc(pid: number, gpu: number, usedBytes: number | null, o: ProcOpts = {}): GpuProcess {
  return {
    pid,
    gpuUuid: `GPU-0000000${gpu}-aaaa-bbbb-cccc-00000000000${gpu}`,
    gpuIndex: gpu,
    gpuInstanceId: null,
    computeInstanceId: null,
    usedBytes,
    kind: 'compute',
    name: null,
    smUtilPct: o.smUtilPct === undefined ? null : o.smUtilPct,
    host: host(pid, o),
    unavailable: usedBytes === null ? { usedBytes: 'NVML_VALUE_NOT_AVAILABLE' } : {},
  };
}

export function sample(timeMs: number, devices: Device[], processes: GpuProcess[]): Sample {
  return { timeMs, source: { kind: 'replay', detail: 'test' }, devices, processes, unavailable: {} };
}

/** A window of `n` samples 500 ms apart built by `make(i)`. */
export function windowOf(n: number, make: (i: number) => { devices: Device[]; processes: GpuProcess[] }): Sample[] {
  return Array.from({ length: n }, (_, i) => {
    const { devices, processes } = make(i);
    return sample(2_000_000 + i * 500, devices, processes);
  });
}

export function input(samples: Sample[], over: Partial<DiagnoseInput> = {}): DiagnoseInput {
  return { samples, viewer: null, pidNamespace: 'unknown', ancestors: {}, ...over };
}

/** Runs one rule by id over an input. */
export function check(id: string, inp: DiagnoseInput): Finding[] {
  const rule = RULES.find((r) => r.id === id);
  if (!rule) throw new Error(`no rule ${id}`);
  return rule.check(buildContext(inp));
}
