/**
 * Deterministic synthetic recordings: `gpus` H100s as the NVML source reports them (clocks and energy
 * included), `procsPerGpu` training processes on each with host facts as the enricher gives them, and a model
 * of change per second:
 * - every GPU's memory used/free, utilization, temperature, power, SM clock and energy move every sample;
 * - a share (`changeShare`, e.g. 0.1) of the process rows, picked anew each sample, change their memory and
 *   SM %, and their process's CPU ticks advance;
 * - with `busyCpu`, every process's CPU ticks advance every sample (every rank and worker busy on the CPU);
 * - with `reads`, what `gpumem record` reads when (docs/nvml.md, RESTAT_EVERY_MS): each second only the memory of
 *   the changing share of rows moves; every `smEverySamples` every row's SM % (its slow per-process read); every
 *   `hostEverySamples` a /proc round: every process busy on the CPU, its ticks advanced and dated with the sample.
 * Each sample is a fresh object, as a source returns it. `edit(k, state)` changes the state before sample k.
 */
import type { Device, GpuProcess, HostFacts, Sample } from '../../../src/core/index.js';
import { seeded } from '../../helpers/fuzz.js';

const MiB = 1024 * 1024;

export interface SessionShape {
  gpus: number;
  procsPerGpu: number;
  changeShare: number;
  seed: number;
  busyCpu?: boolean;
  reads?: { smEverySamples: number; hostEverySamples: number };
  intervalMs?: number;
  edit?: (k: number, state: Sample, random: () => number) => void;
}

export { seeded };

export const uuidOf = (g: number): string => `GPU-5f1c2a7e-${String(g).padStart(4, '0')}-4b1e-9c3d-8a2f6e4d${String(g).padStart(4, '0')}`;

export function device(g: number): Device {
  return {
    index: g, uuid: uuidOf(g), name: 'NVIDIA H100 80GB HBM3', pciBusId: `00000000:${(0x18 + g * 0x10).toString(16).toUpperCase()}:00.0`, minorNumber: g, status: 'ok',
    memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 0, freeBytes: 81080 * MiB },
    utilization: { gpuPct: 0, memoryPct: 0 }, temperatureC: 40, powerDrawMw: 120_000, powerLimitMw: 700_000,
    clocks: { smMhz: 1980, memoryMhz: 2619 }, totalEnergyMj: 1_000_000_000 + g, computeMode: 'Default', migMode: 'disabled', migInstances: [],
    driverVersion: '590.48.01', cudaDriverVersion: '13.1', unavailable: {},
  };
}

export function hostFacts(pid: number, rank: number, startTicks: number): HostFacts {
  return {
    visible: true, uid: 1000, user: 'ana', ppid: 4000, cmdline: ['/opt/conda/bin/python', '-u', 'train.py', '--config', 'configs/vit_l16.yaml', `--local_rank=${rank}`],
    exe: '/opt/conda/bin/python3.12', startTimeMs: 1_700_000_000_000 + startTicks * 10, startTicks, state: 'R', cpuTicks: 1000 + rank, containerId: null, nspid: [pid],
    cudaEnv: { CUDA_VISIBLE_DEVICES: '0,1,2,3,4,5,6,7', PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True', RANK: String(rank), LOCAL_RANK: String(rank % 8), WORLD_SIZE: '8' },
    unavailable: {},
  };
}

export function processRow(pid: number, g: number, host: HostFacts | null, usedBytes: number): GpuProcess {
  return {
    pid, gpuUuid: uuidOf(g), gpuIndex: g, gpuInstanceId: null, computeInstanceId: null, usedBytes, kind: 'compute', name: null, smUtilPct: 50, host,
    unavailable: { name: 'not read from NVML (host facts carry the command line)' },
  };
}

const START_MS = 1_700_000_000_000;

/** The first state: every process on its GPU, 100 MiB to 1.1 GiB each (64 of them fit an 80 GB GPU). */
function initial(shape: SessionShape, random: () => number): Sample {
  const devices = Array.from({ length: shape.gpus }, (_, g) => device(g));
  // record reads neither clocks nor energy (RECORD_FIELDS): absent, as in its recordings.
  if (shape.reads) {
    for (const d of devices) {
      delete d.clocks;
      delete d.totalEnergyMj;
    }
  }
  const processes: GpuProcess[] = [];
  for (let g = 0; g < shape.gpus; g++) {
    for (let i = 0; i < shape.procsPerGpu; i++) {
      const pid = 10_000 + g * shape.procsPerGpu + i;
      const host = hostFacts(pid, g * shape.procsPerGpu + i, 50_000 + pid);
      if (shape.reads) host.cpuTicksAtMs = START_MS;
      processes.push(processRow(pid, g, host, Math.round(100 + random() * 1000) * MiB));
    }
  }
  return { timeMs: START_MS, source: { kind: 'nvml', detail: 'libnvidia-ml.so.1' }, devices, processes, unavailable: {} };
}

/** Moves the state to sample `k`, by the model of change above. */
function step(state: Sample, shape: SessionShape, random: () => number, k: number): void {
  state.timeMs += shape.intervalMs ?? 1000;
  if (shape.reads) stepReads(state, shape, shape.reads, random, k);
  else stepRows(state, shape, random);
  stepDevices(state, random, shape.reads === undefined);
}

/** What record reads when: memory each second, SM % and the /proc round on their own periods. */
function stepReads(state: Sample, shape: SessionShape, reads: NonNullable<SessionShape['reads']>, random: () => number, k: number): void {
  for (const p of state.processes) {
    if (random() < shape.changeShare && p.usedBytes !== null) p.usedBytes = Math.max(MiB, p.usedBytes + Math.round((random() - 0.5) * 64) * 2 * MiB);
    if (k % reads.smEverySamples === 0 && p.smUtilPct !== null) p.smUtilPct = Math.floor(random() * 101);
    if (k % reads.hostEverySamples === 0 && p.host) p.host = { ...p.host, cpuTicks: (p.host.cpuTicks ?? 0) + 1 + Math.floor(random() * 1500), cpuTicksAtMs: state.timeMs };
  }
}

/** Each second a share of the rows changes memory, SM % and CPU ticks (every row's ticks with busyCpu). */
function stepRows(state: Sample, shape: SessionShape, random: () => number): void {
  const share = shape.changeShare;
  for (const p of state.processes) {
    if (random() >= share) {
      if (shape.busyCpu && p.host) p.host = { ...p.host, cpuTicks: (p.host.cpuTicks ?? 0) + 100 };
      continue;
    }
    if (p.usedBytes !== null) p.usedBytes = Math.max(MiB, p.usedBytes + Math.round((random() - 0.5) * 64) * 2 * MiB);
    if (p.smUtilPct !== null) p.smUtilPct = Math.floor(random() * 101);
    if (p.host) p.host = { ...p.host, cpuTicks: (p.host.cpuTicks ?? 0) + 1 + Math.floor(random() * 100) };
  }
}

/** Every GPU's numbers move every second (clocks and energy only where they are read: not by record). */
function stepDevices(state: Sample, random: () => number, clocksAndEnergy: boolean): void {
  for (const d of state.devices) {
    if (d.status !== 'ok') continue;
    const held = state.processes.filter((p) => p.gpuIndex === d.index).reduce((sum, p) => sum + (p.usedBytes ?? 0), 0);
    const used = Math.min(held + 512 * MiB, (d.memory.totalBytes ?? 0) - (d.memory.reservedBytes ?? 0));
    d.memory = { ...d.memory, usedBytes: used, freeBytes: (d.memory.totalBytes ?? 0) - (d.memory.reservedBytes ?? 0) - used };
    d.utilization = { gpuPct: Math.floor(random() * 101), memoryPct: Math.floor(random() * 101) };
    d.temperatureC = 55 + Math.floor(random() * 20);
    d.powerDrawMw = 300_000 + Math.floor(random() * 400_000);
    if (!clocksAndEnergy) continue;
    d.clocks = { smMhz: 1700 + Math.floor(random() * 280), memoryMhz: 2619 };
    d.totalEnergyMj = (d.totalEnergyMj ?? 0) + (d.powerDrawMw ?? 0);
  }
}

/** The session's samples, one fresh object each. */
export function* syntheticSession(shape: SessionShape, samples: number): Generator<Sample> {
  const random = seeded(shape.seed);
  const state = initial(shape, random);
  for (let k = 0; k < samples; k++) {
    if (k > 0) step(state, shape, random, k);
    shape.edit?.(k, state, random);
    yield structuredClone(state);
  }
}
