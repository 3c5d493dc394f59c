/** Recording format 2: host facts once per process, exact round trips, and version 1 files still read. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { GpuProcess, HostFacts, Sample } from '../../../src/core/index.js';
import { RECORDING_VERSION, readRecording } from '../../../src/sources/replay/index.js';
import { createRecordingWriter } from '../../../src/store/recording/index.js';
import { MiB } from '../../../src/core/units.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-recording-v2-'));
const EXAMPLE = fileURLToPath(new URL('../../../examples/doctor-example.ndjson', import.meta.url));

const facts = (pid: number, startTicks: number, over: Partial<HostFacts> = {}): HostFacts => ({
  visible: true, uid: 1000, user: 'ana', ppid: 1, cmdline: ['python', 'train.py', `--rank=${pid}`, '--config', 'a very long config path/that repeats.yaml'],
  exe: '/usr/bin/python3.11', startTimeMs: 1_700_000_000_000 + startTicks * 10, startTicks, state: 'R', containerId: null, nspid: [pid],
  cudaEnv: { CUDA_VISIBLE_DEVICES: '0,1', PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' }, unavailable: {}, ...over,
});

const row = (pid: number, gpuIndex: number, host: HostFacts | null, usedBytes: number): GpuProcess => ({
  pid, gpuUuid: `GPU-${gpuIndex}`, gpuIndex, gpuInstanceId: null, computeInstanceId: null, usedBytes, kind: 'compute', name: null, smUtilPct: 50, host, unavailable: {},
});

const sample = (k: number, processes: GpuProcess[]): Sample => ({
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

// Five samples: two ranks on both GPUs; rank 101 changes state and parent, then its pid is reused by a new
// process (other start ticks), then turns zombie (command line released); a pid not visible here throughout.
const samples: Sample[] = [
  sample(0, [row(100, 0, facts(100, 500), 10 * MiB), row(100, 1, facts(100, 500), 11 * MiB), row(101, 1, facts(101, 600), 12 * MiB), row(4_000_000, 0, null, 5 * MiB)]),
  sample(1, [row(100, 0, facts(100, 500, { state: 'S' }), 10 * MiB), row(101, 1, facts(101, 600, { ppid: 77 }), 12 * MiB)]),
  sample(2, [row(100, 0, facts(100, 500), 10 * MiB), row(101, 1, facts(101, 900), 13 * MiB)]),
  sample(3, [row(100, 0, facts(100, 500), 10 * MiB), row(101, 1, facts(101, 900, { state: 'Z', cmdline: null, unavailable: { cmdline: 'zombie: command line released' } }), 13 * MiB)]),
  sample(4, [row(100, 0, facts(100, 500), 10 * MiB)]),
];

function write(name: string, list: Sample[]): string {
  const path = join(dir, name);
  const w = createRecordingWriter(path, { createdMs: 1_700_000_000_000, intervalMs: 1000 });
  for (const s of list) w.write(s);
  w.close();
  return path;
}

const withoutSource = (s: Sample): Omit<Sample, 'source'> => {
  const { source: _source, ...rest } = s;
  return rest;
};

describe('recording format 2', () => {
  it('reads back every sample exactly: state and parent changes, a reused pid, a zombie, an invisible pid', () => {
    const path = write('v2.ndjson', samples);
    const { header, samples: read } = readRecording(path);
    expect(header.version).toBe(RECORDING_VERSION);
    expect(RECORDING_VERSION).toBe(2);
    expect(read.map(withoutSource)).toEqual(samples.map(withoutSource));
  });

  it('writes a process\'s unchanged facts once: later samples carry only a reference', () => {
    const steady = Array.from({ length: 4 }, (_, k) => sample(k, [row(100, 0, facts(100, 500), 10 * MiB), row(100, 1, facts(100, 500), 11 * MiB)]));
    const lines = readFileSync(write('steady.ndjson', steady), 'utf8').trimEnd().split('\n');
    // header, one definitions line, four samples
    expect(lines).toHaveLength(6);
    expect(JSON.parse(lines[1]!)).toEqual({ hostFacts: { 1: facts(100, 500) } });
    for (const line of lines.slice(2)) {
      expect(line).not.toContain('train.py');
      expect(JSON.parse(line).processes.map((p: { host: unknown }) => p.host)).toEqual([{ ref: 1 }, { ref: 1 }]);
    }
  });

  it('a reference to facts never defined is refused with the line', () => {
    const path = write('dangling.ndjson', samples.slice(0, 2));
    const lines = readFileSync(path, 'utf8').split('\n');
    // Drop the definitions line: the sample that used it now names nothing.
    writeFileSync(path, [lines[0], ...lines.slice(2)].join('\n'));
    expect(() => readRecording(path)).toThrow(/dangling\.ndjson:2: sample field processes\[0\]\.host\.ref 1 names no host facts defined on an earlier line/);
  });

  it('a recorder killed in the middle of a write loses only that sample', () => {
    const path = write('cut.ndjson', samples);
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.slice(0, text.length - 40));
    expect(readRecording(path).samples.map(withoutSource)).toEqual(samples.slice(0, 4).map(withoutSource));
  });
});

describe('recording format 1 is still read', () => {
  it('a version 1 file (full host facts in every sample) reads as the same samples', () => {
    const path = join(dir, 'v1.ndjson');
    const header = { format: 'gpumem-recording', version: 1, createdMs: 1_700_000_000_000, writer: 'gpumem', host: { hostname: 'n', platform: 'linux', kernel: null, inContainer: false }, note: null, intervalMs: 1000 };
    writeFileSync(path, [header, ...samples].map((x) => JSON.stringify(x)).join('\n') + '\n');
    const { header: h, samples: read } = readRecording(path);
    expect(h.version).toBe(1);
    expect(read.map(withoutSource)).toEqual(samples.map(withoutSource));
  });

  it('the bundled example is a version 1 recording and reads whole', () => {
    const { header, samples: read } = readRecording(EXAMPLE);
    expect(header.version).toBe(1);
    expect(read.length).toBeGreaterThan(1);
    expect(read.every((s) => s.processes.every((p) => p.host === null || Array.isArray(p.host.cmdline) || p.host.cmdline === null))).toBe(true);
  });
});
