/**
 * A live job is one thing. Real process trees, built as PyTorch builds them (live-job-procs/): trainers with
 * fork and with spawn DataLoader workers, a torchrun-style launcher of 2 ranks each with 2 spawn workers, and
 * a notebook kernel (`python -m ipykernel_launcher -f …`) running a cell, all on the fake NVML driver with
 * 4 GiB workers and 300 MiB ranks. Every one of them is live (a process busy on the GPU, or one working on
 * the CPU while every SM figure is 0 %, the input-bound case), so doctor, diagnose, watch and
 * `kill --idle --yes` must never pick a pid of them, nor call a worker a copy of the job. One idle job beside
 * them proves the selection can happen: it is selected whole and ended.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GiB, MiB } from '../../src/core/units.js';
import { fakeH100, fakeNvmlEnv, writeScenario, type FakeProcess } from '../fake-nvml/scenario.js';
import { rowOf, startTmux } from '../cli/watch/tmux.js';
import { BIN, expectNoHang, expectNoStackTrace, gpumem, tempDir } from './harness.js';

const PROCS = fileURLToPath(new URL('./live-job-procs/', import.meta.url));
const tmp = tempDir('gpumem-adv-live-');
const prefix = join(tmp.dir, 'nvidia');
const scenario = join(tmp.dir, 'scenario.txt');
const env = { ...fakeNvmlEnv('590', scenario), GPUMEM_DEVICE_PREFIX: prefix };
const groups: ChildProcess[] = [];
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

interface Trainer { pid: number; workers: number[] }
interface Launcher { pid: number; ranks: Array<Trainer & { rank: number }> }
const jobs = {} as { fork: Trainer; spawn: Trainer; launcher: Launcher; kernel: Trainer; idle: Trainer };

/** Starts a stand-in in its own process group (ended whole afterwards) and reads its JSON line of pids. */
function start<T>(args: string[]): Promise<T> {
  const child = spawn('python3', args, {
    cwd: PROCS, detached: true, stdio: ['ignore', 'pipe', 'inherit'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PYTHONPATH: PROCS, GPUMEM_TEST_DEVICE_PREFIX: prefix },
  });
  groups.push(child);
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n')) resolve(JSON.parse(text.split('\n')[0]!) as T);
    });
    child.on('exit', () => reject(new Error(`${args.join(' ')} exited early`)));
  });
}

const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** Every GPU pid of the live jobs. */
function livePids(): number[] {
  const { fork, spawn: sp, launcher, kernel } = jobs;
  return [fork, sp, kernel, ...launcher.ranks].flatMap((t) => [t.pid, ...t.workers]);
}

beforeAll(async () => {
  [jobs.fork, jobs.spawn, jobs.launcher, jobs.kernel, jobs.idle] = await Promise.all([
    start<Trainer>(['job.py', 'trainer', 'fork', '0', 'busy']),
    start<Trainer>(['job.py', 'trainer', 'spawn', '0']),
    start<Launcher>(['torchrun', '--nproc-per-node', '2', 'job.py', 'rank']),
    start<Trainer>(['-m', 'ipykernel_launcher', '-f', '/tmp/kernel-live.json']),
    start<Trainer>(['job.py', 'trainer', 'fork', '0']),
  ]);
  const [rank0, rank1] = jobs.launcher.ranks as [Launcher['ranks'][0], Launcher['ranks'][0]];
  const rank = 300 * MiB;
  const worker = 4 * GiB;
  const rows = (t: Trainer, own: Partial<FakeProcess> = {}): FakeProcess[] => [
    { pid: t.pid, usedBytes: rank, smUtilPct: 0, ...own },
    ...t.workers.map((pid) => ({ pid, usedBytes: worker, smUtilPct: 0 })),
  ];
  // The fork trainer and the kernel show 0 % everywhere (they work on the CPU: input-bound, a running cell);
  // the spawn trainer and rank 1 compute on the GPU. Only `idle` does nothing at all.
  const gpu0 = [...rows(jobs.fork), ...rows(jobs.spawn, { smUtilPct: 35 }), ...rows(rank0), ...rows(jobs.idle)];
  const gpu1 = [...rows(rank1, { smUtilPct: 60 }), ...rows(jobs.kernel, { usedBytes: 2 * GiB })];
  const used = (list: FakeProcess[]) => list.reduce((s, p) => s + (p.usedBytes ?? 0), 0);
  writeScenario(scenario, {
    driverVersion: '590.48.01', cudaVersion: 13010,
    devices: [
      fakeH100(0, { memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: used(gpu0) }, utilization: { gpuPct: 40, memoryPct: 10 }, processes: gpu0 }),
      fakeH100(1, { memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: used(gpu1) }, utilization: { gpuPct: 60, memoryPct: 10 }, processes: gpu1 }),
    ],
  });
}, 60_000);

afterAll(() => {
  for (const c of groups) {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      // The group has already ended.
    }
  }
  tmp.remove();
});

describe('a live job is one thing', () => {
  it('diagnose: roles from the tree (workers, ranks, a kernel), no worker called a copy, no kill suggested for a live pid', async () => {
    const r = await gpumem(['diagnose', '--window', '1', '--json', '--source', 'nvml'], { env, timeoutMs: 30_000 });
    expectNoHang(r, 'diagnose');
    expectNoStackTrace(r, 'diagnose');
    const doc = JSON.parse(r.stdout) as { processes: Array<{ pid: number; role: string }>; findings: Array<{ id: string; evidence: { pids: number[] }; command?: string; fix: string }> };
    const role = (pid: number) => doc.processes.find((p) => p.pid === pid)?.role;
    for (const t of [jobs.fork, jobs.spawn, jobs.kernel, ...jobs.launcher.ranks]) for (const w of t.workers) expect([w, role(w)]).toEqual([w, 'worker']);
    expect(jobs.launcher.ranks.map((t) => role(t.pid))).toEqual(['rank', 'rank']);
    expect(role(jobs.kernel.pid)).toBe('kernel');
    expect([role(jobs.fork.pid), role(jobs.spawn.pid)]).toEqual(['main', 'main']);
    expect(doc.findings.filter((f) => f.id === 'duplicate-instances')).toEqual([]);
    for (const f of doc.findings) {
      for (const pid of livePids()) expect(`${f.command ?? ''} ${f.fix}`).not.toMatch(new RegExp(`gpumem kill [\\d ]*\\b${pid}\\b`));
    }
  });

  it('doctor: no "copies" of a job, no kill command naming a live pid', async () => {
    const r = await gpumem(['doctor', '--window', '1', '--source', 'nvml'], { env: { ...env, NO_COLOR: '1', COLUMNS: '200' }, timeoutMs: 30_000 });
    expectNoHang(r, 'doctor');
    expectNoStackTrace(r, 'doctor');
    expect(r.stdout).not.toMatch(/copies of/);
    for (const pid of livePids()) expect(r.stdout).not.toMatch(new RegExp(`gpumem kill [\\d ]*\\b${pid}\\b`));
  });

  it('kill --gpu 1 refuses the part of the launcher\'s live job on GPU 1; the kernel there is a whole job', async () => {
    const r = await gpumem(['kill', '--gpu', '1', '--dry-run', '--json'], { env, timeoutMs: 30_000 });
    expectNoStackTrace(r, 'kill --gpu 1');
    const rows = (JSON.parse(r.stdout) as { rows: Array<{ pid: number; action: string; reason: string }> }).rows;
    const rank1 = jobs.launcher.ranks[1]!;
    for (const pid of [rank1.pid, ...rank1.workers]) {
      expect(rows.find((x) => x.pid === pid)).toMatchObject({ action: 'refuse', reason: expect.stringContaining(`part of the running job of pid ${jobs.launcher.pid}`) });
    }
    expect(rows.filter((x) => x.action === 'end').map((x) => x.pid).sort()).toEqual([jobs.kernel.pid, ...jobs.kernel.workers].sort());
  });

  it.skipIf(!hasTmux)('watch: each worker is drawn right under its own rank', async () => {
    const pane = startTmux(`node ${BIN} watch --interval 300 --readonly; sleep 30`, { ...env, NO_COLOR: '1', PATH: process.env.PATH ?? '' }, 200, 60);
    try {
      const all = [...livePids(), jobs.launcher.pid];
      const screen = await pane.waitFor((s) => all.every((pid) => rowOf(s, pid) !== undefined), 'every process of the jobs', 20_000);
      const lines = screen.split('\n');
      const at = (pid: number) => lines.findIndex((l) => l === rowOf(screen, pid));
      for (const t of [...jobs.launcher.ranks, jobs.fork, jobs.spawn, jobs.kernel]) {
        expect(t.workers.map(at).sort((a, b) => a - b)).toEqual([at(t.pid) + 1, at(t.pid) + 2]);
      }
    } finally {
      pane.kill();
    }
  });

  it('kill --idle --yes ends the idle job whole and no pid of a live job', async () => {
    const dry = await gpumem(['kill', '--idle', '--dry-run', '--json'], { env, timeoutMs: 30_000 });
    expectNoStackTrace(dry, 'kill --idle --dry-run');
    const idle = [jobs.idle.pid, ...jobs.idle.workers].sort((a, b) => a - b);
    const selected = (JSON.parse(dry.stdout) as { rows: Array<{ pid: number; action: string }> }).rows.map((x) => x.pid).sort((a, b) => a - b);
    expect(selected).toEqual(idle);

    const r = await gpumem(['kill', '--idle', '--yes', '--json', '--grace-ms', '500'], { env, timeoutMs: 30_000 });
    expectNoHang(r, 'kill --idle --yes');
    expectNoStackTrace(r, 'kill --idle --yes');
    const doc = JSON.parse(r.stdout) as { rows: Array<{ pid: number }>; outcomes: Array<{ pid: number; outcome: string }> };
    expect(doc.rows.map((x) => x.pid).sort((a, b) => a - b)).toEqual(idle);
    expect(doc.outcomes.map((x) => x.pid).sort((a, b) => a - b)).toEqual(idle);
    for (const pid of livePids()) expect([pid, alive(pid)]).toEqual([pid, true]);
    expect(idle.filter(alive)).toEqual([]);
  });
});
