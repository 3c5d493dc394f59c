/** Five samples that exercise host facts by reference: state and parent changes, a reused pid, a zombie, an invisible pid. */
import type { GpuProcess, HostFacts, Sample } from '../../../src/core/index.js';
import { MiB } from '../../../src/core/units.js';

export const facts = (pid: number, startTicks: number, over: Partial<HostFacts> = {}): HostFacts => ({
  visible: true, uid: 1000, user: 'ana', ppid: 1, cmdline: ['python', 'train.py', `--rank=${pid}`, '--config', 'a very long config path/that repeats.yaml'],
  exe: '/usr/bin/python3.11', startTimeMs: 1_700_000_000_000 + startTicks * 10, startTicks, state: 'R', containerId: null, nspid: [pid],
  cudaEnv: { CUDA_VISIBLE_DEVICES: '0,1', PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' }, unavailable: {}, ...over,
});

export const row = (pid: number, gpuIndex: number, host: HostFacts | null, usedBytes: number): GpuProcess => ({
  pid, gpuUuid: `GPU-${gpuIndex}`, gpuIndex, gpuInstanceId: null, computeInstanceId: null, usedBytes, kind: 'compute', name: null, smUtilPct: 50, host, unavailable: {},
});

export const sample = (k: number, processes: GpuProcess[]): Sample => ({
  timeMs: 1_700_000_000_000 + k * 1000,
  source: { kind: 'nvml', detail: 'libnvidia-ml.so.1' },
  devices: [0, 1].map((index) => ({
    index, uuid: `GPU-${index}`, name: 'NVIDIA H100 80GB HBM3', pciBusId: null, minorNumber: index, status: 'ok', memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 1000 * MiB, freeBytes: 80080 * MiB },
    utilization: { gpuPct: 90, memoryPct: 30 }, temperatureC: 60, powerDrawMw: 500_000, powerLimitMw: 700_000, computeMode: 'Default', migMode: 'disabled', migInstances: [],
    driverVersion: '590.48.01', cudaDriverVersion: '13.1', unavailable: {},
  })) as Sample['devices'],
  processes,
  unavailable: {},
});

// Two ranks on both GPUs; rank 101 changes state and parent, then its pid is reused by a new process (other
// start ticks), then turns zombie (command line released); a pid not visible here throughout.
export const hostSamples: Sample[] = [
  sample(0, [row(100, 0, facts(100, 500), 10 * MiB), row(100, 1, facts(100, 500), 11 * MiB), row(101, 1, facts(101, 600), 12 * MiB), row(4_000_000, 0, null, 5 * MiB)]),
  sample(1, [row(100, 0, facts(100, 500, { state: 'S' }), 10 * MiB), row(101, 1, facts(101, 600, { ppid: 77 }), 12 * MiB)]),
  sample(2, [row(100, 0, facts(100, 500), 10 * MiB), row(101, 1, facts(101, 900), 13 * MiB)]),
  sample(3, [row(100, 0, facts(100, 500), 10 * MiB), row(101, 1, facts(101, 900, { state: 'Z', cmdline: null, unavailable: { cmdline: 'zombie: command line released' } }), 13 * MiB)]),
  sample(4, [row(100, 0, facts(100, 500), 10 * MiB)]),
];
