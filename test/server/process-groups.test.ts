/**
 * The dashboard's process table groups a job as launcher → ranks → workers, names each rank's number beside
 * its GPU, and offers "end" only on the process a job hangs from — never on one rank or worker of a live job.
 */
import { describe, expect, it } from 'vitest';
import { processesView } from '../../src/server/view.js';
import { device, GiB, host, MiB, proc, sample } from '../core/diagnose/build.js';

const SPAWN = ['/usr/bin/python3', '-c', 'from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)', '--multiprocessing-fork'];
const env = (r: number) => ({ RANK: String(r), LOCAL_RANK: String(r), WORLD_SIZE: '2' });

describe('serve: process table by job', () => {
  it('launcher line, then each rank with its number and GPU, each worker under its rank; only a lone trainer is endable', () => {
    const s = sample(5_000_000, [device(0, 30 * GiB), device(1, 30 * GiB)], [
      proc(900, 0, 2 * GiB, { ppid: 1, cmd: ['python', 'other.py'] }),
      proc(102, 1, 19 * GiB, { ppid: 100, env: env(1) }),
      proc(101, 0, 20 * GiB, { ppid: 100, env: env(0) }),
      proc(103, 1, 300 * MiB, { ppid: 102, cmd: SPAWN, env: env(1) }),
    ]);
    const torchrun = host(100, { ppid: 1, cmd: ['/usr/bin/python3', '/usr/bin/torchrun', '--nproc-per-node', '2', 'train.py'] });
    const rows = processesView(s, { 100: torchrun }).map((r) => [r.pid, r.gpu, r.role, r.depth, r.endable]);
    expect(rows).toEqual([
      [100, null, 'launcher', 0, false],
      [101, 0, 'rank 0', 1, false],
      [102, 1, 'rank 1', 1, false],
      [103, 1, 'worker', 2, false],
      [900, 0, '', 0, true],
    ]);
  });

  it('two independent jobs started from one shell are two jobs, each offered', () => {
    const s = sample(5_000_000, [device(0, 30 * GiB)], [
      proc(201, 0, 2 * GiB, { ppid: 200, cmd: ['python', 'a.py'] }),
      proc(202, 0, 3 * GiB, { ppid: 200, cmd: ['python', 'b.py'] }),
    ]);
    const rows = processesView(s, { 200: host(200, { ppid: 1, cmd: ['-bash'], exe: '/usr/bin/bash' }) }).map((r) => [r.pid, r.role, r.depth, r.endable]);
    expect(rows).toEqual([[202, '', 0, true], [201, '', 0, true]]);
  });
});
