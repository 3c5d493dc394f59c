/** The live view's trees: each DataLoader worker is drawn under its own rank, not under whichever rank sorts last. */
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../../src/core/diagnose/index.js';
import { orderRows, processPanel } from '../../../src/cli/watch/process-panel.js';
import { initialState } from '../../../src/cli/watch/state.js';
import { device, GiB, host, MiB, proc, sample } from '../../core/diagnose/build.js';

const plain = (_c: unknown, text: string): string => text;
const TORCHRUN = host(100, { ppid: 1, cmd: ['/usr/bin/python3', '/usr/bin/torchrun', '--nproc-per-node', '2', 'train.py'] });
const SPAWN = ['/usr/bin/python3', '-c', 'from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)', '--multiprocessing-fork'];

describe('watch: launcher → rank → worker', () => {
  it('puts every worker right under its own rank, siblings by memory', () => {
    // Rank 101 holds more than rank 102; worker 105 (of 101) is the smallest worker, 103 (of 102) the largest.
    const s = sample(5_000_000, [device(0, 30 * GiB), device(1, 30 * GiB)], [
      proc(101, 0, 20 * GiB, { ppid: 100 }),
      proc(102, 1, 19 * GiB, { ppid: 100 }),
      proc(103, 1, 4 * GiB, { ppid: 102, cmd: SPAWN }),
      proc(104, 0, 3 * GiB, { ppid: 101, cmd: SPAWN }),
      proc(105, 0, 300 * MiB, { ppid: 101, cmd: SPAWN }),
    ]);
    const report = diagnose({ samples: [s], viewer: null, pidNamespace: 'host', ancestors: { 100: TORCHRUN } }, []);
    const rows = orderRows(report, initialState(false));
    expect(rows.map((r) => [r.pid, r.depth])).toEqual([[100, 0], [101, 1], [104, 2], [105, 2], [102, 1], [103, 2]]);
    const lines = processPanel(rows, s, [s], initialState(false), 120, 20, plain);
    const at = (pid: number) => lines.findIndex((l) => new RegExp(`^ +${pid} `).test(l));
    expect(at(103)).toBe(at(102) + 1);
    expect(at(104)).toBe(at(101) + 1);
  });
});

describe('watch: each rank with its number and GPU', () => {
  it('draws "[rank N]" before a rank\'s command, on the row of its GPU; a worker gets no number', () => {
    const env = (r: number) => ({ RANK: String(r), LOCAL_RANK: String(r), WORLD_SIZE: '2' });
    const s = sample(5_000_000, [device(0, 30 * GiB), device(1, 30 * GiB)], [
      proc(101, 0, 20 * GiB, { ppid: 100, env: env(0) }),
      proc(102, 1, 19 * GiB, { ppid: 100, env: env(1) }),
      proc(103, 1, 4 * GiB, { ppid: 102, cmd: SPAWN, env: env(1) }),
    ]);
    const report = diagnose({ samples: [s], viewer: null, pidNamespace: 'host', ancestors: { 100: TORCHRUN } }, []);
    const lines = processPanel(orderRows(report, initialState(false)), s, [s], initialState(false), 160, 20, plain);
    const line = (pid: number) => lines.find((l) => new RegExp(`^ +${pid} `).test(l)) ?? '';
    expect(line(101)).toMatch(/^ +101 +alice +0 .*└ \[rank 0\] python train\.py$/);
    expect(line(102)).toMatch(/^ +102 +alice +1 .*└ \[rank 1\] python train\.py$/);
    expect(line(103)).not.toContain('[rank');
  });
});

describe('watch: the order of the rows follows the memory of the trees', () => {
  it('orders by size whatever order a report lists its trees in, a process on two GPUs under its one tree, a filter keeping the order', () => {
    const s = sample(5_000_000, [device(0, 30 * GiB), device(1, 30 * GiB)], [
      proc(201, 0, 1 * GiB, { ppid: 1 }),
      proc(202, 1, 5 * GiB, { ppid: 1, cmd: ['python', 'big.py'] }),
      proc(202, 0, 5 * GiB, { ppid: 1, cmd: ['python', 'big.py'] }),
      proc(203, 1, 3 * GiB, { ppid: 1 }),
    ]);
    const report = diagnose({ samples: [s], viewer: null, pidNamespace: 'host', ancestors: {} }, []);
    const want = [[202, 1], [202, 0], [203, 1], [201, 0]];
    const order = (r: typeof report, filter = '') => orderRows(r, { ...initialState(false), filter }).map((x) => [x.pid, x.view?.gpuIndex]);
    expect(order(report)).toEqual(want);
    // The same trees listed smallest first (a report assembled elsewhere): the rows are still largest first.
    expect(order({ ...report, trees: [...report.trees].reverse() })).toEqual(want);
    expect(order(report, 'gpu1')).toEqual([[202, 1], [203, 1]]);
  });
});
