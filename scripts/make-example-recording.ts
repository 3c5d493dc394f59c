/**
 * Writes test/fixtures/recordings/synthetic-two-h100.ndjson, a SYNTHETIC recording (it says so in its header)
 * with every kind of GPU process the diagnosis tells apart, on two GPUs at once: the tests of those rules need
 * all of them in one file, which no real recording has. (The bundled example `gpumem doctor` shows without an
 * NVIDIA driver, examples/doctor-example.ndjson, is a real H100 recording.) The story,
 * with H100 80GB sizes as nvidia-smi 590.48.01 reports them (81559 MiB total, 479 MiB reserved):
 * - torchrun (pid 41200, alice) with 2 ranks, one per GPU, each with 2 DataLoader workers that touched CUDA;
 * - bob's Jupyter kernel on GPU 1, idle the whole window;
 * - an evaluation process of alice re-parented to init (its launcher died), idle;
 * - a preprocessing pid that exits during the window while the driver still lists its memory;
 * - 1.5 GiB on GPU 0 that no process accounts for.
 * Run: npx tsx scripts/make-example-recording.ts (a test checks the committed file equals this output).
 */
import { writeFileSync } from 'node:fs';
import type { Device, GpuProcess, HostFacts, Sample } from '../src/core/index.js';
import { RECORDING_FORMAT, type RecordingHeader } from '../src/sources/replay/index.js';

const MiB = 1024 ** 2;
const TOTAL = 81559 * MiB;
const RESERVED = 479 * MiB;
const CREATED_MS = Date.UTC(2026, 6, 14, 9, 0, 0);
const INTERVAL_MS = 500;
const SAMPLES = 7;
const UUIDS = ['GPU-00000000-0000-0000-0000-0000000e0000', 'GPU-00000000-0000-0000-0000-0000000e0001'];
const MIN = 60_000;

interface Proc {
  pid: number;
  gpu: number;
  usedMiB: number;
  user: 'alice' | 'bob';
  ppid: number;
  cmdline: string[];
  startedAgoMs: number;
  /** SM % per sample index. */
  util: (i: number) => number;
  /** /proc/PID/environ readable (own user) → the CUDA-relevant variables found there. */
  env: HostFacts['cudaEnv'];
  /** Sample index from which /proc no longer has the pid (the driver keeps listing it). */
  goneFrom?: number;
}

const train = ['/opt/conda/bin/python', '-u', 'train.py', '--config', 'configs/vit_l16.yaml'];
const busy = (base: number) => (i: number) => base + ((i * 7) % 9) - 4;
const idle = () => 0;

export const EXAMPLE_PROCESSES: readonly Proc[] = [
  { pid: 41210, gpu: 0, usedMiB: 61440, user: 'alice', ppid: 41200, cmdline: train, startedAgoMs: 133 * MIN, util: busy(93), env: {} },
  { pid: 41211, gpu: 1, usedMiB: 58368, user: 'alice', ppid: 41200, cmdline: train, startedAgoMs: 133 * MIN, util: busy(90), env: {} },
  { pid: 41230, gpu: 0, usedMiB: 508, user: 'alice', ppid: 41210, cmdline: train, startedAgoMs: 14 * MIN, util: idle, env: {} },
  { pid: 41231, gpu: 0, usedMiB: 512, user: 'alice', ppid: 41210, cmdline: train, startedAgoMs: 14 * MIN, util: idle, env: {} },
  { pid: 41232, gpu: 1, usedMiB: 506, user: 'alice', ppid: 41211, cmdline: train, startedAgoMs: 14 * MIN, util: idle, env: {} },
  { pid: 41233, gpu: 1, usedMiB: 510, user: 'alice', ppid: 41211, cmdline: train, startedAgoMs: 14 * MIN, util: idle, env: {} },
  {
    pid: 38877, gpu: 1, usedMiB: 9728, user: 'bob', ppid: 38850,
    cmdline: ['/home/bob/.conda/envs/nlp/bin/python', '-m', 'ipykernel_launcher', '-f', '/home/bob/.local/share/jupyter/runtime/kernel-5c1f7a.json'],
    startedAgoMs: (2 * 24 * 60 + 185) * MIN, util: idle, env: null,
  },
  { pid: 36104, gpu: 1, usedMiB: 6144, user: 'alice', ppid: 1, cmdline: ['/opt/conda/bin/python', 'eval.py', '--ckpt', 'runs/vit_l16/last.pt'], startedAgoMs: 340 * MIN, util: idle, env: {} },
  { pid: 35990, gpu: 0, usedMiB: 2048, user: 'alice', ppid: 35980, cmdline: ['/opt/conda/bin/python', 'preprocess.py', '--shards', '64'], startedAgoMs: 31 * MIN, util: idle, env: {}, goneFrom: 3 },
];

/** Bytes the device counts as used that no process accounts for, per GPU. */
export const EXAMPLE_RESIDUAL_BYTES = [1536 * MiB, 18 * MiB];

const UIDS = { alice: 1001, bob: 1002 } as const;

function hostFacts(p: Proc, i: number): HostFacts {
  if (p.goneFrom !== undefined && i >= p.goneFrom) {
    const reason = 'pid not found in this PID namespace (gone, a host pid seen from a container, or hidden by hidepid)';
    const fields = ['uid', 'user', 'ppid', 'cmdline', 'exe', 'startTimeMs', 'startTicks', 'state', 'containerId', 'nspid', 'cudaEnv'];
    return {
      visible: false, uid: null, user: null, ppid: null, cmdline: null, exe: null, startTimeMs: null, startTicks: null,
      state: null, containerId: null, nspid: null, cudaEnv: null, unavailable: Object.fromEntries(fields.map((f) => [f, reason])),
    };
  }
  const startTimeMs = CREATED_MS - p.startedAgoMs;
  return {
    visible: true,
    uid: UIDS[p.user],
    user: p.user,
    ppid: p.ppid,
    cmdline: p.cmdline,
    exe: p.user === 'bob' ? null : '/opt/conda/bin/python3.12',
    startTimeMs,
    // Boot 10 days before the recording; USER_HZ 100.
    startTicks: Math.round((startTimeMs - (CREATED_MS - 10 * 24 * 60 * MIN)) / 10),
    state: p.util(i) > 0 ? 'R' : 'S',
    containerId: null,
    nspid: [p.pid],
    cudaEnv: p.env,
    unavailable: p.user === 'bob' ? { exe: "permission denied (another user's process, or /proc mounted with hidepid)", cudaEnv: "permission denied (another user's process, or /proc mounted with hidepid)" } : {},
  };
}

function gpuProcess(p: Proc, i: number): GpuProcess {
  return {
    pid: p.pid, gpuUuid: UUIDS[p.gpu] as string, gpuIndex: p.gpu, gpuInstanceId: null, computeInstanceId: null,
    usedBytes: p.usedMiB * MiB, kind: 'compute', name: null, smUtilPct: p.util(i), host: hostFacts(p, i), unavailable: {},
  };
}

function device(index: number, i: number): Device {
  const usedBytes = EXAMPLE_PROCESSES.filter((p) => p.gpu === index).reduce((s, p) => s + p.usedMiB * MiB, 0) + (EXAMPLE_RESIDUAL_BYTES[index] as number);
  const util = Math.max(...EXAMPLE_PROCESSES.filter((p) => p.gpu === index).map((p) => p.util(i)));
  return {
    index, uuid: UUIDS[index] as string, name: 'NVIDIA H100 80GB HBM3', pciBusId: index === 0 ? '00000000:18:00.0' : '00000000:2A:00.0',
    minorNumber: index, status: 'ok',
    memory: { totalBytes: TOTAL, reservedBytes: RESERVED, usedBytes, freeBytes: TOTAL - RESERVED - usedBytes },
    utilization: { gpuPct: util, memoryPct: Math.round(util * 0.4) },
    temperatureC: 61 + index * 3, powerDrawMw: 598_000 + index * 21_000 + i * 1_000, powerLimitMw: 700_000,
    computeMode: 'Default', migMode: 'disabled', migInstances: [], driverVersion: '590.48.01', cudaDriverVersion: '13.1', unavailable: {},
  };
}

/** The header and samples of the synthetic recording. */
export function buildExampleRecording(): { header: RecordingHeader; samples: Sample[] } {
  const header: RecordingHeader = {
    format: RECORDING_FORMAT,
    // Written in format version 1 (full host facts in every sample) so every reader stays tested on a v1 file.
    version: 1,
    createdMs: CREATED_MS,
    writer: 'scripts/make-example-recording.ts',
    host: { hostname: 'example-node', platform: 'linux', kernel: null, inContainer: false },
    note: 'SYNTHETIC example, not measured on a GPU: 2x H100 80GB with a torchrun job, DataLoader workers holding CUDA contexts, an idle notebook kernel, an orphan and a vanished pid',
    intervalMs: INTERVAL_MS,
  };
  const samples = Array.from({ length: SAMPLES }, (_, i): Sample => ({
    timeMs: CREATED_MS + i * INTERVAL_MS,
    source: { kind: 'nvml', detail: 'libnvidia-ml.so.1 (synthetic)' },
    devices: [device(0, i), device(1, i)],
    processes: EXAMPLE_PROCESSES.map((p) => gpuProcess(p, i)),
    unavailable: {},
  }));
  return { header, samples };
}

/** The file's text: header line, then one sample per line. */
export function exampleRecordingText(): string {
  const { header, samples } = buildExampleRecording();
  return [header, ...samples].map((x) => JSON.stringify(x)).join('\n') + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = new URL('../test/fixtures/recordings/synthetic-two-h100.ndjson', import.meta.url);
  writeFileSync(out, exampleRecordingText());
  process.stdout.write(`wrote ${out.pathname}\n`);
}
