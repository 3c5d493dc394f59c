/**
 * The live view's one-sample report refreshed from the one before (core/diagnose/refresh.ts) equals the report
 * diagnose() builds from scratch, on fleets whose numbers move at random and on the real H100 recording; and
 * anything a role, tree or view is decided from sends it back to the whole path.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../../src/core/diagnose/index.js';
import { refreshOneSample, sameHostLayout, type OneSampleBasis } from '../../../src/core/diagnose/refresh.js';
import type { DiagnoseInput } from '../../../src/core/diagnose/index.js';
import type { GpuProcess, HostFacts, Sample } from '../../../src/core/index.js';
import { createLineDecoder, parseRecordingHeader } from '../../../src/sources/replay/format.js';
import { device, GiB, host, MiB, proc, sample } from './build.js';

const SPAWN = ['/usr/bin/python3', '-c', 'from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)', '--multiprocessing-fork'];
const TRAIN = ['python', 'train.py'];

/** A seeded generator (mulberry32): the same fleets on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** torchrun with two ranks, each with a DataLoader worker; a lone job; a pid on two GPUs; one not visible; one of unknown size. */
function fleet(): { sample: Sample; input: Omit<DiagnoseInput, 'samples'> } {
  const env = (rank: number) => ({ RANK: String(rank), LOCAL_RANK: String(rank), WORLD_SIZE: '2' });
  const processes: GpuProcess[] = [
    proc(501, 0, 20 * GiB, { ppid: 500, cmd: TRAIN, env: env(0), smUtilPct: 90 }),
    proc(502, 1, 20 * GiB, { ppid: 500, cmd: TRAIN, env: env(1), smUtilPct: 80 }),
    proc(601, 0, 500 * MiB, { ppid: 501, cmd: SPAWN, env: env(0), smUtilPct: 0 }),
    proc(602, 1, 500 * MiB, { ppid: 502, cmd: SPAWN, env: env(1), smUtilPct: 0 }),
    proc(700, 2, 8 * GiB, { ppid: 1, cmd: ['python', 'eval.py'], smUtilPct: null }),
    proc(700, 1, 1 * GiB, { ppid: 1, cmd: ['python', 'eval.py'], smUtilPct: null }),
    proc(800, 2, 3 * GiB, { visible: false }),
    proc(900, 2, null, { ppid: 1, user: 'bob', uid: 1001, cmd: ['python', 'notebook.py'] }),
  ];
  const devices = [device(0, 21 * GiB, { utilPct: 90 }), device(1, 22 * GiB, { utilPct: 70 }), device(2, 12 * GiB, { utilPct: 0 })];
  const ancestors = { 500: host(500, { cmd: ['torchrun', '--nproc-per-node=2', 'train.py'], ppid: 400, cpuTicks: 10 }) };
  return { sample: sample(2_000_000, devices, processes), input: { viewer: { uid: 1000, user: 'alice' }, pidNamespace: 'host', ancestors } };
}

/** The next sample: memory, SM shares, utilisation, CPU and RSS moved at random; every row keeps its pid, GPU and facts. */
function moved(s: Sample, rnd: () => number): Sample {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  return {
    ...s,
    timeMs: s.timeMs + 1000,
    devices: s.devices.map((d) => (rnd() < 0.3 ? d : {
      ...d,
      memory: { ...d.memory, usedBytes: pick([null, Math.floor(rnd() * 40) * GiB]) },
      utilization: { ...d.utilization, gpuPct: pick([null, 0, Math.floor(rnd() * 100)]) },
    })),
    processes: s.processes.map((p) => (rnd() < 0.3 ? p : {
      ...p,
      usedBytes: pick([null, 0, Math.floor(rnd() * 30) * GiB, p.usedBytes]),
      smUtilPct: pick([null, 0, Math.floor(rnd() * 100)]),
      host: p.host && p.host.visible ? { ...p.host, cpuTicks: Math.floor(rnd() * 1e6), cpuPct: rnd() * 100, rssBytes: Math.floor(rnd() * 8) * GiB } : p.host,
    })),
  };
}

function basisOf(s: Sample, input: Omit<DiagnoseInput, 'samples'>): OneSampleBasis {
  return { sample: s, input, report: diagnose({ ...input, samples: [s] }, []) };
}

describe('refreshing the one-sample report', () => {
  it('equals diagnose() of the new sample over 200 moves of a fleet, each refreshed from the refreshed one before', () => {
    const rnd = random(7);
    const { sample: first, input } = fleet();
    let basis = basisOf(first, input);
    let refreshed = 0;
    for (let i = 0; i < 200; i++) {
      const next = moved(basis.sample, rnd);
      // The ancestors re-read with new CPU counts: counted facts decide nothing.
      const nextInput = { ...input, ancestors: { 500: { ...input.ancestors[500] as HostFacts, cpuTicks: 10 + i } } };
      const report = refreshOneSample(basis, next, nextInput);
      expect(report).not.toBeNull();
      expect(report).toEqual(diagnose({ ...nextInput, samples: [next] }, []));
      basis = { sample: next, input: nextInput, report: report! };
      refreshed++;
    }
    expect(refreshed).toBe(200);
    // The fleet exercised what the totals depend on: a gone row, a rank, a context-only worker, an unknown size.
    const views = diagnose({ ...input, samples: [first] }, []).processes;
    expect(views.some((v) => v.gone)).toBe(true);
    expect(views.filter((v) => v.role === 'rank').map((v) => v.rank)).toEqual([0, 1]);
    expect(views.some((v) => v.contextOnly)).toBe(true);
  });

  const changes: Array<[string, (s: Sample, input: Omit<DiagnoseInput, 'samples'>) => [Sample, Omit<DiagnoseInput, 'samples'>]]> = [
    ['a parent changed', (s, i) => [{ ...s, processes: s.processes.map((p) => (p.pid === 601 ? { ...p, host: { ...p.host!, ppid: 1 } } : p)) }, i]],
    ['a state changed', (s, i) => [{ ...s, processes: s.processes.map((p) => (p.pid === 700 ? { ...p, host: { ...p.host!, state: 'Z' as const } } : p)) }, i]],
    ['a command line changed', (s, i) => [{ ...s, processes: s.processes.map((p) => (p.pid === 502 ? { ...p, host: { ...p.host!, cmdline: ['python', 'other.py'] } } : p)) }, i]],
    ['a rank environment changed', (s, i) => [{ ...s, processes: s.processes.map((p) => (p.pid === 502 ? { ...p, host: { ...p.host!, cudaEnv: { RANK: '5' } } } : p)) }, i]],
    ['a process came', (s, i) => [{ ...s, processes: [...s.processes, proc(1000, 0, GiB)] }, i]],
    ['two rows swapped', (s, i) => [{ ...s, processes: [s.processes[1]!, s.processes[0]!, ...s.processes.slice(2)] }, i]],
    ['a row moved GPU', (s, i) => [{ ...s, processes: s.processes.map((p) => (p.pid === 900 ? { ...p, gpuIndex: 0, gpuUuid: s.devices[0]!.uuid } : p)) }, i]],
    ['a GPU changed UUID', (s, i) => [{ ...s, devices: s.devices.map((d) => (d.index === 2 ? { ...d, uuid: 'GPU-other' } : d)) }, i]],
    ['a launcher changed', (s, i) => [s, { ...i, ancestors: { 500: { ...i.ancestors[500] as HostFacts, cmdline: ['bash'] } } }]],
    ['an ancestor appeared', (s, i) => [s, { ...i, ancestors: { ...i.ancestors, 1: host(1, { cmd: ['init'], ppid: 0 }) } }]],
    ['the companion has statistics', (s, i) => [s, { ...i, companion: { 501: { pid: 501 } as never } }]],
    ['the viewer changed', (s, i) => [s, { ...i, viewer: { uid: 0, user: 'root' } }]],
  ];
  for (const [what, change] of changes) {
    it(`goes the whole way when ${what}`, () => {
      const { sample: first, input } = fleet();
      const [next, nextInput] = change({ ...first, timeMs: first.timeMs + 1000 }, input);
      expect(refreshOneSample(basisOf(first, input), next, nextInput)).toBeNull();
    });
  }

  it('a report with findings or from a window is never refreshed', () => {
    const { sample: first, input } = fleet();
    const window = { sample: first, input, report: diagnose({ ...input, samples: [first, first] }, []) };
    expect(refreshOneSample(window, first, input)).toBeNull();
    const withFindings = { sample: first, input, report: diagnose({ ...input, samples: [first] }) };
    expect(withFindings.report.findings.length).toBeGreaterThan(0);
    expect(refreshOneSample(withFindings, first, input)).toBeNull();
  });

  it('host facts differing only in CPU time, CPU % or RSS have the same layout; any other field, a new one too, does not', () => {
    const a = host(1, { cpuTicks: 5 });
    expect(sameHostLayout(a, { ...a, cpuTicks: 9, cpuTicksAtMs: 3, cpuPct: 50, rssBytes: 1 })).toBe(true);
    expect(sameHostLayout(a, { ...a, user: 'bob' })).toBe(false);
    expect(sameHostLayout(a, { ...a, nspid: [1, 7] })).toBe(false);
    expect(sameHostLayout(a, { ...a, job: { slurmJobId: '1' } } as HostFacts)).toBe(false);
    expect(sameHostLayout(a, null)).toBe(false);
  });

  it('on the real H100 recording every sample with the rows of the one before refreshes to diagnose()', () => {
    const path = fileURLToPath(new URL('../../../examples/doctor-example.ndjson', import.meta.url));
    const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');
    const decode = createLineDecoder(parseRecordingHeader(lines[0]!, path), path);
    const samples = lines.slice(1).map((l, i) => decode(l, i + 2)).filter((s): s is Sample => s !== null);
    const input = { viewer: null, pidNamespace: 'unknown' as const, ancestors: {} };
    let refreshed = 0;
    for (let i = 1; i < samples.length; i++) {
      const report = refreshOneSample(basisOf(samples[i - 1]!, input), samples[i]!, input);
      if (report === null) continue;
      expect(report).toEqual(diagnose({ ...input, samples: [samples[i]!] }, []));
      refreshed++;
    }
    expect(refreshed).toBeGreaterThan(samples.length / 2);
  });
});
