/**
 * patchReport against the real thing: a random walk of samples in which memory, SM shares, GPU utilisation
 * and re-dated /proc facts move, each patched report compared with a fresh one-sample diagnosis of the same
 * sample (ages of rows that did not move excepted, as documented), and every change it must refuse.
 */
import { describe, expect, it } from 'vitest';
import type { Device, GpuProcess, Sample } from '../../../src/core/index.js';
import { diagnose, patchReport, type DiagnoseReport, type ProcessView } from '../../../src/core/diagnose/index.js';
import { device, GiB, host, input, MiB, proc, sample } from './build.js';

const SPAWN = ['/usr/bin/python3', '-c', 'from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)', '--multiprocessing-fork'];
const ancestors = { 500: host(500, { cmd: ['torchrun', '--nproc-per-node=2', 'train.py'], ppid: 400 }) };
const opts = { ancestors, pidNamespace: 'host' as const, viewer: { uid: 1000, user: 'alice' } };

/** A node with a torchrun job (two ranks, a worker), a process on two GPUs, other users, a gone pid and an unknown size. */
function first(): Sample {
  const rank = (pid: number, gpu: number) => proc(pid, gpu, 20 * GiB, { ppid: 500, cmd: ['python', 'train.py'], env: { RANK: String(pid - 501) }, smUtilPct: 80 });
  return sample(5_000_000, [device(0, 30 * GiB, { utilPct: 90 }), device(1, 40 * GiB, { utilPct: 0 }), device(2, 12 * GiB, { utilPct: 0 })], [
    rank(501, 0),
    rank(502, 1),
    proc(511, 0, 500 * MiB, { ppid: 501, cmd: SPAWN, smUtilPct: 0 }),
    proc(520, 1, 6 * GiB, { user: 'bob', uid: 1001, cmd: ['python', 'serve.py'] }),
    proc(520, 2, 6 * GiB, { user: 'bob', uid: 1001, cmd: ['python', 'serve.py'] }),
    proc(530, 2, 2 * GiB, { visible: false }),
    proc(540, 1, null, { cmd: ['python', 'probe.py'], smUtilPct: 3 }),
    proc(550, 2, 4 * GiB, { cmd: ['jupyter-lab'], ppid: 1 }),
  ]);
}

/** A deterministic generator (mulberry32), so a failure names the step that broke. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One second later: some rows grow or shrink, shares move, facts are re-dated, GPUs' numbers move. */
function step(s: Sample, rnd: () => number): Sample {
  const pick = (p: number) => rnd() < p;
  const processes = s.processes.map((p): GpuProcess => {
    if (!pick(0.4)) return p;
    const usedBytes = p.usedBytes === null ? null : Math.max(0, p.usedBytes + Math.round((rnd() - 0.4) * 2 * GiB));
    const smUtilPct = pick(0.2) ? null : Math.round(rnd() * 100);
    const redated = p.host && pick(0.5) ? { ...p.host, cpuTicks: Math.round(rnd() * 1000), cpuTicksAtMs: s.timeMs + 1000 } : p.host;
    return { ...p, usedBytes: pick(0.7) ? usedBytes : p.usedBytes, smUtilPct: pick(0.5) ? smUtilPct : p.smUtilPct, host: redated };
  });
  const devices = s.devices.map((d): Device => {
    if (!pick(0.5)) return d;
    const used = (d.memory.usedBytes as number) + Math.round((rnd() - 0.5) * GiB);
    return { ...d, memory: { ...d.memory, usedBytes: used, freeBytes: (d.memory.totalBytes as number) - (d.memory.reservedBytes as number) - used }, utilization: { ...d.utilization, gpuPct: pick(0.5) ? 0 : Math.round(rnd() * 100) } };
  });
  return sample(s.timeMs + 1000, devices, processes);
}

const fresh = (s: Sample): DiagnoseReport => diagnose(input([s], opts), []);
/** Views without their age: a row that did not move keeps the age it was analysed at. */
const ageless = (views: readonly ProcessView[]) => views.map(({ ageMs: _age, ...v }) => v);

describe('patchReport', () => {
  it('equals a fresh one-sample diagnosis along 300 random seconds, patched from the patched report each time', () => {
    const rnd = random(7);
    let built = first();
    let report = fresh(built);
    let treeTotalsSeen = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const next = step(built, rnd);
      const patched = patchReport(report, built, next);
      const want = fresh(next);
      expect(patched, `step ${i}`).not.toBeNull();
      const got = patched as DiagnoseReport;
      expect(ageless(got.processes), `step ${i}`).toEqual(ageless(want.processes));
      // A row that moved has its age at the new sample.
      next.processes.forEach((row, k) => {
        if (row !== built.processes[k]) expect(got.processes[k]?.ageMs).toBe(want.processes[k]?.ageMs);
      });
      expect({ ...got, processes: [] }, `step ${i}`).toEqual({ ...want, processes: [] });
      for (const t of got.trees) treeTotalsSeen.add(t.totalBytes);
      [built, report] = [next, got];
    }
    // The walk moved the trees' totals (the comparison above had something to compare).
    expect(treeTotalsSeen.size).toBeGreaterThan(100);
  });

  it('hands back the report re-dated when nothing it reads moved', () => {
    const s = first();
    const report = fresh(s);
    const later = { ...s, timeMs: s.timeMs + 1000 };
    const got = patchReport(report, s, later) as DiagnoseReport;
    expect(got.processes).toBe(report.processes);
    expect(got.timeMs).toBe(later.timeMs);
  });

  it('refuses what changes more than numbers: a row comes or goes, a process changes parent or state, memory becomes unknown, a GPU fails', () => {
    const s = first();
    const report = fresh(s);
    const later = (processes: GpuProcess[], devices = s.devices): Sample => sample(s.timeMs + 1000, devices, processes);
    const at = (i: number, change: (p: GpuProcess) => GpuProcess) => s.processes.map((p, k) => (k === i ? change(p) : p));
    const refused: Sample[] = [
      later(s.processes.slice(1)),
      later([...s.processes, proc(560, 0, GiB)]),
      later(at(2, (p) => ({ ...p, host: { ...p.host!, ppid: 502 } }))),
      later(at(0, (p) => ({ ...p, host: { ...p.host!, state: 'Z' } }))),
      later(at(0, (p) => ({ ...p, host: { ...p.host!, cmdline: ['python', 'other.py'] } }))),
      later(at(0, (p) => ({ ...p, usedBytes: null }))),
      later(at(6, (p) => ({ ...p, usedBytes: GiB }))),
      later(at(3, (p) => ({ ...p, gpuIndex: 0 }))),
      later(s.processes, s.devices.map((d, k) => (k === 1 ? { ...d, status: 'lost' as const } : d))),
    ];
    for (const [k, next] of refused.entries()) expect(patchReport(report, s, next), `case ${k}`).toBeNull();
  });

  it('the comparison can fail: a report patched towards one sample differs from the diagnosis of another', () => {
    const rnd = random(11);
    const s = first();
    const a = step(s, rnd);
    const b = step(a, rnd);
    expect(ageless((patchReport(fresh(s), s, a) as DiagnoseReport).processes)).not.toEqual(ageless(fresh(b).processes));
  });
});
