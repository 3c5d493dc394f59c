/**
 * Ranks of one live job in the diagnosis: never "copies" to end, whatever launched them (a Slurm step daemon
 * or a shell leaves no launcher in the tree), and each rank's number on its row.
 */
import { describe, expect, it } from 'vitest';
import { buildContext } from '../../../src/core/diagnose/index.js';
import { check, device, GiB, host, input, proc, windowOf } from './build.js';

const TRAIN = ['python', 'train.py', '--epochs', '10'];

/** Two idle processes of one command on GPU 0, each under a parent of its own that is no launcher. */
function twoIdle(env: (i: number) => Record<string, string> | undefined) {
  return windowOf(3, () => ({
    devices: [device(0, 20 * GiB, { utilPct: 0 }), device(1, 0, { utilPct: 0 })],
    processes: [0, 1].map((i) => proc(700 + i, 0, 10 * GiB, { cmd: TRAIN, ppid: 600 + i, smUtilPct: 0, cpuTicks: 50, env: env(i) })),
  }));
}
const stepd = { 600: host(600, { cmd: ['slurmstepd: [42.0]'], ppid: 1 }), 601: host(601, { cmd: ['slurmstepd: [42.0]'], ppid: 1 }) };

describe('ranks of a live job in the diagnosis', () => {
  it('two idle ranks of one job on GPU 0 (RANK 0 and 1, WORLD_SIZE 2) are ranks sharing a GPU: no kill command names either', () => {
    const inp = input(twoIdle((i) => ({ RANK: String(i), LOCAL_RANK: String(i), WORLD_SIZE: '2' })), { ancestors: stepd });
    const [f, ...rest] = check('duplicate-instances', inp);
    expect(rest).toEqual([]);
    expect(f?.command).toBeUndefined();
    expect(`${f?.fix}`).not.toMatch(/gpumem kill/);
    expect(f?.title).toBe('2 ranks of one job (RANK 0, 1 of WORLD_SIZE 2) all run on GPU 0');
    expect(f?.fix).toMatch(/LOCAL_RANK/);
  });

  it('two idle copies with no rank environment are still copies, and the idle spare is offered', () => {
    const inp = input(twoIdle(() => undefined), { ancestors: stepd });
    const [f] = check('duplicate-instances', inp);
    expect(f?.title).toMatch(/^2 copies of/);
    expect(f?.command).toBe('gpumem kill 701');
  });

  it('each rank row carries its rank number; a worker inheriting its rank\'s RANK has none of its own', () => {
    const torchrun = host(500, { cmd: ['torchrun', '--nproc-per-node=2', 'train.py'], ppid: 400 });
    const spawn = ['/usr/bin/python3', '-c', 'from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)', '--multiprocessing-fork'];
    const s = windowOf(1, () => ({
      devices: [device(0, 5 * GiB), device(1, 5 * GiB)],
      processes: [
        proc(501, 0, 1 * GiB, { ppid: 500, env: { RANK: '0', LOCAL_RANK: '0', WORLD_SIZE: '2' } }),
        proc(502, 1, 1 * GiB, { ppid: 500, env: { RANK: '1', LOCAL_RANK: '1', WORLD_SIZE: '2' } }),
        proc(503, 1, 1 * GiB, { ppid: 502, cmd: spawn, env: { RANK: '1', LOCAL_RANK: '1', WORLD_SIZE: '2' } }),
      ],
    }));
    const ctx = buildContext(input(s, { ancestors: { 500: torchrun } }));
    expect(ctx.processes.map((v) => [v.pid, v.role, v.rank, v.gpuIndex])).toEqual([[501, 'rank', 0, 0], [502, 'rank', 1, 1], [503, 'worker', null, 1]]);
  });
});

describe('diagnose report: the role column names the rank', () => {
  it('shows "rank 1" for a rank with RANK=1 and "worker" for its worker', async () => {
    const { roleTag } = await import('../../../src/cli/diagnose/render.js');
    const torchrun = host(500, { cmd: ['torchrun', 'train.py'], ppid: 400 });
    const spawn = ['python3', '-c', 'from multiprocessing.spawn import spawn_main', '--multiprocessing-fork'];
    const s = windowOf(1, () => ({
      devices: [device(0, 2 * GiB)],
      processes: [proc(502, 0, 1 * GiB, { ppid: 500, env: { RANK: '1' } }), proc(503, 0, 1 * GiB, { ppid: 502, cmd: spawn, env: { RANK: '1' } })],
    }));
    const ctx = buildContext(input(s, { ancestors: { 500: torchrun } }));
    expect(ctx.processes.map(roleTag)).toEqual(['rank 1', 'worker']);
  });
});

describe('mp.spawn ranks: the number comes from the companion', () => {
  it('a spawned rank with no RANK in its environment shows the rank its companion published', async () => {
    const { applyCompanionMessage, buildLiveCompanionDoc, createCompanionState, parseCompanionLine, parseLiveCompanionDoc } = await import('../../../src/core/companion/index.js');
    const state = createCompanionState();
    for (const [pid, rank] of [[601, 0], [602, 1]] as const) {
      applyCompanionMessage(state, parseCompanionLine(JSON.stringify({ schemaVersion: 1, timeMs: 1, pid, type: 'rank', source: 'torch.distributed', rank, localRank: null, worldSize: 2, backend: 'nccl' }))!);
    }
    const doc = parseLiveCompanionDoc(JSON.stringify(buildLiveCompanionDoc(state, { pid: 1, startTicks: null }, 5, () => 100)), 'live');
    expect(doc.processes.map((p) => [p.pid, p.rank])).toEqual([
      [601, { rank: 0, localRank: null, worldSize: 2, backend: 'nccl' }], [602, { rank: 1, localRank: null, worldSize: 2, backend: 'nccl' }],
    ]);
    const bad = JSON.stringify({ ...doc, processes: [{ ...doc.processes[0], rank: { rank: -1 } }] });
    expect(() => parseLiveCompanionDoc(bad, 'live')).toThrow(/processes\[0\] is malformed/);

    const spawn = ['/usr/bin/python3', '-c', 'from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)', '--multiprocessing-fork'];
    const s = windowOf(1, () => ({ devices: [device(0, 2 * GiB)], processes: [601, 602].map((pid) => proc(pid, 0, 1 * GiB, { ppid: 600, cmd: spawn })) }));
    const companion = Object.fromEntries(doc.processes.map((p) => [p.pid, p]));
    const ctx = buildContext(input(s, { ancestors: { 600: host(600, { cmd: ['python3', 'main.py'] }) }, companion }));
    expect(ctx.processes.map((v) => [v.pid, v.role, v.rank])).toEqual([[601, 'rank', 0], [602, 'rank', 1]]);
  });
});
