/**
 * Roles come from the process tree, multiprocessing markers, the launcher and the rank environment — never
 * from size: these jobs use 4 GiB workers and 300 MiB ranks, the sizes a byte rule gets backwards.
 */
import { describe, expect, it } from 'vitest';
import { buildContext } from '../../../src/core/diagnose/index.js';
import { check, device, GiB, host, input, MiB, proc, sample, windowOf } from './build.js';

const SPAWN = ['/usr/bin/python3', '-c', 'from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)', '--multiprocessing-fork'];
const TRAIN = ['python', 'train.py', '--epochs', '10'];
const rolesOf = (ctx: ReturnType<typeof buildContext>) => Object.fromEntries(ctx.processes.map((v) => [v.pid, v.role]));

describe('roles from the process tree', () => {
  it('4 GiB spawn workers of a trainer are workers: no "copies" finding names them, worker-cuda does', () => {
    const s = sample(0, [device(0, 36 * GiB)], [
      proc(10, 0, 20 * GiB, { cmd: TRAIN, ppid: 5 }),
      ...[11, 12, 13, 14].map((pid) => proc(pid, 0, 4 * GiB, { cmd: SPAWN, ppid: 10, smUtilPct: 0 })),
    ]);
    const inp = input([s]);
    expect(rolesOf(buildContext(inp))).toEqual({ 10: 'main', 11: 'worker', 12: 'worker', 13: 'worker', 14: 'worker' });
    expect(check('duplicate-instances', inp)).toEqual([]);
    expect(check('worker-cuda', inp)[0]?.evidence.pids).toEqual([11, 12, 13, 14]);
  });

  it('4 GiB fork workers (their parent\'s argv) are workers, not "4 copies of train.py"', () => {
    const s = sample(0, [device(0, 36 * GiB)], [
      proc(10, 0, 20 * GiB, { cmd: TRAIN, ppid: 5 }),
      ...[11, 12, 13, 14].map((pid) => proc(pid, 0, 4 * GiB, { cmd: TRAIN, ppid: 10 })),
    ]);
    const inp = input([s]);
    expect(new Set(Object.values(rolesOf(buildContext(inp))).slice(1))).toEqual(new Set(['worker']));
    expect(check('duplicate-instances', inp)).toEqual([]);
  });

  it('torchrun with two 300 MiB ranks, each with a 4 GiB worker: ranks and workers, under the right parent', () => {
    const torchrun = host(500, { cmd: ['/usr/bin/python3', '/usr/local/bin/torchrun', '--nproc-per-node=2', 'train.py'], ppid: 400 });
    const s = sample(0, [device(0, 5 * GiB), device(1, 5 * GiB)], [
      proc(501, 0, 300 * MiB, { ppid: 500, env: { RANK: '0', LOCAL_RANK: '0' } }),
      proc(502, 1, 300 * MiB, { ppid: 500, env: { RANK: '1', LOCAL_RANK: '1' } }),
      proc(503, 0, 4 * GiB, { ppid: 501, cmd: SPAWN, env: { RANK: '0', LOCAL_RANK: '0' } }),
      proc(504, 1, 4 * GiB, { ppid: 502, cmd: SPAWN, env: { RANK: '1', LOCAL_RANK: '1' } }),
    ]);
    const inp = input([s], { ancestors: { 500: torchrun } });
    expect(rolesOf(buildContext(inp))).toEqual({ 501: 'rank', 502: 'rank', 503: 'worker', 504: 'worker' });
    const workers = check('worker-cuda', inp);
    expect(workers.map((f) => f.evidence.details.parentPid).sort()).toEqual([501, 502]);
  });

  it('mp.spawn ranks of a Python parent that holds no GPU memory are ranks, whatever their size', () => {
    const s = sample(0, [device(0, 600 * MiB)], [proc(601, 0, 300 * MiB, { ppid: 600, cmd: SPAWN }), proc(602, 0, 300 * MiB, { ppid: 600, cmd: SPAWN })]);
    const ctx = buildContext(input([s], { ancestors: { 600: host(600, { cmd: ['python3', 'main.py'] }) } }));
    expect(rolesOf(ctx)).toEqual({ 601: 'rank', 602: 'rank' });
  });

  it('a child naming a rank of its own (RANK differs from its parent\'s) is a rank; one inheriting its parent\'s RANK is a worker', () => {
    const s = sample(0, [device(0, 10 * GiB)], [
      proc(701, 0, 2 * GiB, { ppid: 700, env: { RANK: '0' } }),
      proc(702, 0, 2 * GiB, { ppid: 701, env: { RANK: '1' } }),
      proc(703, 0, 2 * GiB, { ppid: 701, env: { RANK: '0' } }),
    ]);
    expect(rolesOf(buildContext(input([s])))).toMatchObject({ 702: 'rank', 703: 'worker' });
  });

  it('a small trainer with no per-process utilisation (573 MiB of an 8 GiB GPU at 12 %) is a job: under-used, not context-only', () => {
    const total = 8 * GiB;
    const used = 573 * MiB;
    const small = windowOf(6, () => ({
      devices: [device(0, used, { utilPct: 12, memory: { totalBytes: total, reservedBytes: 0, usedBytes: used, freeBytes: total - used } })],
      processes: [proc(91, 0, used, { ppid: 90 })],
    }));
    expect(buildContext(input(small)).processes[0]).toMatchObject({ role: 'main', contextOnly: false });
    const [f] = check('low-utilization', input(small));
    expect(f?.evidence.pids).toEqual([91]);
    expect(f?.fix).toContain('num_workers');
  });
});
