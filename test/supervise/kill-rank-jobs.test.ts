/**
 * Ranks with no launcher in the tree (srun starts each under its own slurmstepd; a shell or a pod one each) are
 * one job for `gpumem kill`: their trees are joined, so `--idle` and the "never in part" rule see the whole job.
 */
import { describe, expect, it } from 'vitest';
import { groupJobs } from '../../src/supervise/index.js';
import type { ProcStat } from '../../src/sources/index.js';
import { device, GiB, proc, sample } from '../core/diagnose/build.js';

/** A process table: pid → parent. */
function table(parents: Record<number, number>): Map<number, ProcStat> {
  return new Map(Object.entries(parents).map(([pid, ppid]) => [Number(pid), { pid: Number(pid), comm: 'x', state: 'S', ppid, pgid: Number(pid), startTicks: 1, cpuTicks: 0 }]));
}

const slurm = (id: string) => ({ slurmJobId: id, podUid: null, podName: null, podNamespace: null, runMark: null });

describe('kill: ranks of one job under separate parents', () => {
  it('two srun ranks of Slurm job 77 (each under its own slurmstepd) are one job, workers included', () => {
    const s = sample(0, [device(0, 4 * GiB), device(1, 4 * GiB)], [
      proc(101, 0, GiB, { ppid: 100, env: { RANK: '0', LOCAL_RANK: '0', WORLD_SIZE: '2' } }),
      proc(201, 1, GiB, { ppid: 200, env: { RANK: '1', LOCAL_RANK: '1', WORLD_SIZE: '2' } }),
    ]);
    for (const p of s.processes) p.host!.job = slurm('77');
    const jobs = groupJobs(s, {}, table({ 100: 1, 101: 100, 102: 101, 200: 1, 201: 200, 202: 201 }));
    expect(jobs.get(101)).toBe(jobs.get(201));
    expect(jobs.get(101)?.gpuPids).toEqual([101, 201]);
    expect([...(jobs.get(101)?.members ?? [])].sort((a, b) => a - b)).toEqual([101, 102, 201, 202]);
  });

  it('ranks of two different Slurm jobs stay two jobs; processes without a rank environment stay apart', () => {
    const s = sample(0, [device(0, 8 * GiB)], [
      proc(101, 0, GiB, { ppid: 100, env: { RANK: '0', WORLD_SIZE: '2' } }),
      proc(201, 0, GiB, { ppid: 200, env: { RANK: '0', WORLD_SIZE: '2' } }),
      proc(301, 0, GiB, { ppid: 300, cmd: ['python', 'a.py'] }),
      proc(401, 0, GiB, { ppid: 400, cmd: ['python', 'b.py'] }),
    ]);
    s.processes[0]!.host!.job = slurm('77');
    s.processes[1]!.host!.job = slurm('78');
    const jobs = groupJobs(s, {}, table({ 100: 1, 101: 100, 200: 1, 201: 200, 300: 1, 301: 300, 400: 1, 401: 400 }));
    expect(new Set([101, 201, 301, 401].map((pid) => jobs.get(pid))).size).toBe(4);
  });
});
