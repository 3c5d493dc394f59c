import { describe, expect, it } from 'vitest';
import { buildContext, userTotals } from '../../../src/core/diagnose/index.js';
import { device, GiB, host, input, MiB, proc, sample } from './build.js';

describe('process trees', () => {
  const launcher = host(500, { cmd: ['/usr/bin/python3', '/usr/local/bin/torchrun', '--nproc-per-node=2', 'train.py'], ppid: 400 });

  it('groups a launcher, its ranks and their workers into one tree with totals per GPU', () => {
    const s = sample(0, [device(0, 40 * GiB), device(1, 40 * GiB)], [
      proc(501, 0, 30 * GiB, { ppid: 500 }),
      proc(502, 1, 30 * GiB, { ppid: 500 }),
      proc(503, 0, 500 * MiB, { ppid: 501 }),
      proc(504, 1, 500 * MiB, { ppid: 502 }),
      proc(900, 0, 2 * GiB, { ppid: 1, user: 'bob', cmd: ['python', '-m', 'ipykernel_launcher', '-f', 'k.json'] }),
    ]);
    const ctx = buildContext(input([s], { ancestors: { 500: launcher } }));
    const tree = ctx.trees.find((t) => t.rootPid === 500)!;
    expect(tree.launcher).toBe(true);
    expect(tree.rootCommand).toContain('torchrun');
    expect(tree.pids.sort()).toEqual([501, 502, 503, 504]);
    expect(tree.bytesByGpu).toEqual({ 0: 30 * GiB + 500 * MiB, 1: 30 * GiB + 500 * MiB });
    expect(tree.totalBytes).toBe(60 * GiB + 1000 * MiB);
    const roles = Object.fromEntries(ctx.processes.map((v) => [v.pid, v.role]));
    expect(roles).toEqual({ 501: 'rank', 502: 'rank', 503: 'worker', 504: 'worker', 900: 'kernel' });
  });

  it('does not group independent jobs that share a shell parent', () => {
    const shell = host(400, { cmd: ['-bash'], exe: '/usr/bin/bash' });
    const s = sample(0, [device(0, 20 * GiB)], [proc(601, 0, 10 * GiB, { ppid: 400 }), proc(602, 0, 10 * GiB, { ppid: 400 })]);
    const ctx = buildContext(input([s], { ancestors: { 400: shell } }));
    expect(ctx.trees.map((t) => t.rootPid).sort()).toEqual([601, 602]);
  });

  it('groups GPU children of a Python parent (mp.spawn) but not of another program', () => {
    const s = sample(0, [device(0, 20 * GiB)], [proc(601, 0, 10 * GiB, { ppid: 400 }), proc(602, 0, 10 * GiB, { ppid: 400 })]);
    const spawner = buildContext(input([s], { ancestors: { 400: host(400, { cmd: ['python3', 'main.py'] }) } }));
    expect(spawner.trees.map((t) => t.rootPid)).toEqual([400]);
    const node = buildContext(input([s], { ancestors: { 400: host(400, { cmd: ['node', 'runner.js'], exe: '/usr/bin/node' }) } }));
    expect(node.trees.map((t) => t.rootPid).sort()).toEqual([601, 602]);
  });

  it('groups siblings under a parent of unknown command and says the command is unknown', () => {
    const s = sample(0, [device(0, 20 * GiB)], [proc(601, 0, 10 * GiB, { ppid: 400 }), proc(602, 0, 10 * GiB, { ppid: 400 })]);
    const ctx = buildContext(input([s]));
    expect(ctx.trees).toHaveLength(1);
    expect(ctx.trees[0]).toMatchObject({ rootPid: 400, launcher: true, rootCommand: null, totalBytes: 20 * GiB });
  });

  it('computes per-process age, idle time and context-only from the window', () => {
    const samples = [0, 1, 2, 3].map((i) =>
      sample(10_000 + i * 1000, [device(0, 2 * GiB, { utilPct: 50 })], [
        proc(10, 0, GiB + MiB, { smUtilPct: i < 2 ? 40 : 0, startTimeMs: 4_000 }),
        proc(11, 0, 400 * MiB, { ppid: 10, smUtilPct: 0 }),
      ]),
    );
    const ctx = buildContext(input(samples));
    const main = ctx.processes.find((v) => v.pid === 10)!;
    expect(main.ageMs).toBe(13_000 - 4_000);
    expect(main.util).toMatchObject({ meanPct: 20, maxPct: 40, samples: 4, idleMs: 1000, idleWholeWindow: false, basis: 'process' });
    expect(main.contextOnly).toBe(false);
    const worker = ctx.processes.find((v) => v.pid === 11)!;
    expect(worker.contextOnly).toBe(true);
    expect(worker.util).toMatchObject({ idleMs: 3000, idleWholeWindow: true });
  });

  it('leaves idle time unknown when neither the process nor an idle device says', () => {
    const s = [0, 1].map((i) => sample(i * 1000, [device(0, GiB, { utilPct: 30 })], [proc(10, 0, GiB)]));
    expect(buildContext(input(s)).processes[0]!.util).toBeNull();
  });

  it('sums per user', () => {
    const s = sample(0, [device(0, 8 * GiB)], [proc(1, 0, 3 * GiB, { user: 'bob' }), proc(2, 0, 5 * GiB), proc(3, 0, GiB, { user: 'bob' })]);
    const users = userTotals(buildContext(input([s])).processes);
    expect(users).toEqual([
      { user: 'alice', totalBytes: 5 * GiB, bytesByGpu: { 0: 5 * GiB }, pids: [2] },
      { user: 'bob', totalBytes: 4 * GiB, bytesByGpu: { 0: 4 * GiB }, pids: [1, 3] },
    ]);
  });
});
