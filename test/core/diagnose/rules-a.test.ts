/** Each rule: a case where it must fire (with its numbers) and a near miss where it must not. */
import { describe, expect, it } from 'vitest';
import { check, device, GiB, host, input, MiB, proc, sample, windowOf } from './build.js';


describe('duplicate-instances', () => {
  const cmd = ['python', 'train.py', '--lr', '3e-4'];
  it('fires for two copies of one command on one GPU, with their bytes', () => {
    const s = sample(0, [device(0, 30 * GiB)], [proc(10, 0, 12 * GiB, { cmd, ppid: 300 }), proc(11, 0, 14 * GiB, { cmd, ppid: 301 })]);
    const [f, ...rest] = check('duplicate-instances', input([s]));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ severity: 'warning', evidence: { pids: [10, 11], gpuIndexes: [0], bytes: 26 * GiB } });
    expect(f!.evidence.details.sameLauncher).toBe(false);
    // Whether either copy computed is not known from one sample: no command, only the fix.
    expect(f!.command).toBeUndefined();
    expect(f!.fix).toMatch(/no copy is known to have been idle/);
  });
  it('says "ranks of one launcher" when siblings share a launcher', () => {
    const s = sample(0, [device(0, 30 * GiB)], [proc(10, 0, 12 * GiB, { cmd, ppid: 300 }), proc(11, 0, 14 * GiB, { cmd, ppid: 300 })]);
    const [f] = check('duplicate-instances', input([s], { ancestors: { 300: host(300, { cmd: ['torchrun', 'train.py'] }) } }));
    expect(f!.title).toMatch(/ranks of one launcher \(pid 300\)/);
    expect(f!.fix).toMatch(/LOCAL_RANK/);
  });
  it('stays quiet for the same command on different GPUs and for fork workers', () => {
    const s = sample(0, [device(0, 13 * GiB), device(1, 12 * GiB)], [
      proc(10, 0, 12 * GiB, { cmd }),
      proc(11, 1, 12 * GiB, { cmd }),
      proc(12, 0, 500 * MiB, { cmd, ppid: 10 }),
    ]);
    expect(check('duplicate-instances', input([s]))).toEqual([]);
  });
});

describe('worker-cuda', () => {
  it('fires for context-only children of a GPU process, summing what they hold', () => {
    const s = sample(0, [device(0, 22 * GiB)], [
      proc(10, 0, 20 * GiB),
      proc(11, 0, 500 * MiB, { ppid: 10 }),
      proc(12, 0, 520 * MiB, { ppid: 10 }),
    ]);
    const [f] = check('worker-cuda', input([s]));
    expect(f).toMatchObject({ evidence: { pids: [11, 12], bytes: 1020 * MiB, details: { parentPid: 10, minBytes: 500 * MiB, maxBytes: 520 * MiB } } });
    expect(f!.fix).toContain('1020.00 MiB');
  });
  it('stays quiet for a busy child holding real memory (a spawned rank)', () => {
    const s = [0, 1].map((i) =>
      sample(i * 500, [device(0, 30 * GiB, { utilPct: 90 })], [proc(10, 0, 10 * GiB, { smUtilPct: 0 }), proc(11, 0, 19 * GiB, { ppid: 10, smUtilPct: 90 })]),
    );
    expect(check('worker-cuda', input(s))).toEqual([]);
  });
});

describe('other-users', () => {
  const s = sample(0, [device(0, 30 * GiB), device(1, 1 * GiB)], [
    proc(10, 0, 20 * GiB, { uid: 1000, user: 'alice' }),
    proc(20, 0, 6 * GiB, { uid: 1001, user: 'bob' }),
    proc(30, 1, 1 * GiB, { uid: 1002, user: 'carol' }),
  ]);
  it("fires for other users on a GPU the viewer uses, and suggests the freest GPU", () => {
    const [f, ...rest] = check('other-users', input([s], { viewer: { uid: 1000, user: 'alice' } }));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ severity: 'warning', evidence: { pids: [20], gpuIndexes: [0], bytes: 6 * GiB } });
    expect(f!.fix).toMatch(/GPU 1 \(/);
  });
  it('stays quiet when the viewer is alone on its GPUs', () => {
    expect(check('other-users', input([s], { viewer: { uid: 1002, user: 'carol' } }))).toEqual([]);
  });
  it('without a viewer, reports every GPU shared by two or more users', () => {
    const found = check('other-users', input([s]));
    expect(found.map((f) => f.evidence.gpuIndexes)).toEqual([[0]]);
    expect(found[0]!.severity).toBe('info');
  });
});

describe('idle-kernel', () => {
  const kernel = ['/opt/conda/bin/python', '-m', 'ipykernel_launcher', '-f', '/run/user/1001/jupyter/kernel-1.json'];
  it('fires for a kernel idle in every sample', () => {
    const s = windowOf(4, () => ({ devices: [device(0, 3 * GiB)], processes: [proc(40, 0, 3 * GiB, { cmd: kernel, user: 'bob', smUtilPct: 0 })] }));
    const [f] = check('idle-kernel', input(s));
    expect(f).toMatchObject({ evidence: { pids: [40], bytes: 3 * GiB, details: { idleMs: 1500, utilBasis: 'process' } } });
  });
  it('suggests no kill for a kernel idle on the GPU but running on the CPU', () => {
    const s = windowOf(4, (i) => ({ devices: [device(0, 3 * GiB)], processes: [proc(40, 0, 3 * GiB, { cmd: kernel, smUtilPct: 0, cpuTicks: 100 * i })] }));
    const [f] = check('idle-kernel', input(s));
    expect(f!.evidence.pids).toEqual([40]);
    expect(f!.command).toBeUndefined();
    const still = windowOf(4, () => ({ devices: [device(0, 3 * GiB)], processes: [proc(40, 0, 3 * GiB, { cmd: kernel, smUtilPct: 0, cpuTicks: 5 })] }));
    expect(check('idle-kernel', input(still))[0]!.command).toBe('gpumem kill 40');
  });
  it('uses an idle device when per-process utilization is not reported', () => {
    const s = windowOf(3, () => ({ devices: [device(0, 3 * GiB, { utilPct: 0 })], processes: [proc(40, 0, 3 * GiB, { cmd: kernel })] }));
    expect(check('idle-kernel', input(s))[0]!.evidence.details.utilBasis).toBe('device');
  });
  it('stays quiet for a kernel that computed, or whose idleness is unknown', () => {
    const busy = windowOf(3, (i) => ({ devices: [device(0, 3 * GiB)], processes: [proc(40, 0, 3 * GiB, { cmd: kernel, smUtilPct: i === 1 ? 60 : 0 })] }));
    expect(check('idle-kernel', input(busy))).toEqual([]);
    const unknown = windowOf(3, () => ({ devices: [device(0, 3 * GiB, { utilPct: 20 })], processes: [proc(40, 0, 3 * GiB, { cmd: kernel })] }));
    expect(check('idle-kernel', input(unknown))).toEqual([]);
  });
});

describe('orphans', () => {
  it('fires for a process re-parented to pid 1 or a subreaper that did not run on the CPU or GPU, naming exactly its pids', () => {
    const at = (t: number, cpu: number) => sample(t, [device(0, 4 * GiB)], [proc(50, 0, 1 * GiB, { ppid: 1, smUtilPct: 0, cpuTicks: 7 }), proc(51, 0, 3 * GiB, { ppid: 77, smUtilPct: 0, cpuTicks: cpu })]);
    const [f] = check('orphans', input([at(0, 9), at(500, 9)], { ancestors: { 77: host(77, { cmd: ['/usr/lib/systemd/systemd', '--user'] }) } }));
    expect(f).toMatchObject({ severity: 'warning', command: 'gpumem kill 50 51', evidence: { pids: [50, 51], bytes: 4 * GiB } });
    expect(f!.evidence.summary).toMatch(/re-parented to \/usr\/lib\/systemd\/systemd \(pid 77\)/);
  });
  it('a detached job that computes on the CPU (nohup) is not an orphan and gets no kill command', () => {
    const at = (t: number, cpu: number) => sample(t, [device(0, 4 * GiB)], [proc(50, 0, 1 * GiB, { ppid: 1, smUtilPct: 0, cpuTicks: cpu })]);
    const [f] = check('orphans', input([at(0, 100), at(500, 150)]));
    expect(f).toMatchObject({ severity: 'info', evidence: { pids: [50], details: { activity: 'active' } } });
    expect(f!.command).toBeUndefined();
  });
  it('one reading carried through the window (a live view re-reads /proc slowly) is not idleness; two readings are', () => {
    const at = (t: number, readAtMs: number) => sample(t, [device(0, 4 * GiB)], [proc(50, 0, 1 * GiB, { ppid: 1, smUtilPct: 0, cpuTicks: 7, cpuTicksAtMs: readAtMs })]);
    const [once] = check('orphans', input([at(0, 1000), at(500, 1000)]));
    expect(once).toMatchObject({ severity: 'info', evidence: { details: { activity: 'unknown' } } });
    expect(once!.command).toBeUndefined();
    const [twice] = check('orphans', input([at(0, 1000), at(500, 1400)]));
    expect(twice).toMatchObject({ severity: 'warning', command: 'gpumem kill 50' });
  });
  it('one sample cannot prove idleness: reported as unknown, without a command', () => {
    const [f] = check('orphans', input([sample(0, [device(0, 4 * GiB)], [proc(50, 0, 1 * GiB, { ppid: 1, smUtilPct: 0, cpuTicks: 5 })])]));
    expect(f).toMatchObject({ severity: 'info', evidence: { details: { activity: 'unknown' } } });
    expect(f!.command).toBeUndefined();
  });
  it('stays quiet for children of a live parent, and of a container whose pid 1 is the program itself', () => {
    const s = sample(0, [device(0, 4 * GiB)], [proc(50, 0, 1 * GiB, { ppid: 1 }), proc(51, 0, 3 * GiB, { ppid: 40 })]);
    const ancestors = { 1: host(1, { cmd: ['python', 'serve.py'] }), 40: host(40, { cmd: ['bash'] }) };
    expect(check('orphans', input([s], { ancestors }))).toEqual([]);
  });
});

describe('stopped', () => {
  it("reports a stopped process as stopped, with resuming or ending it as the choices", () => {
    const [f] = check('stopped', input([sample(0, [device(0, 4 * GiB)], [proc(70, 0, 2 * GiB, { ppid: 1, state: 'T' })])]));
    expect(f).toMatchObject({ severity: 'warning', command: 'gpumem kill 70', evidence: { pids: [70], bytes: 2 * GiB } });
    expect(f!.fix).toMatch(/kill -CONT 70/);
    expect(check('orphans', input([sample(0, [device(0, 4 * GiB)], [proc(70, 0, 2 * GiB, { ppid: 1, state: 'T' })])]))).toEqual([]);
  });
});

describe('zombies', () => {
  it('fires for a zombie still listed with memory, naming its parent', () => {
    const s = sample(0, [device(0, 2 * GiB)], [proc(60, 0, 2 * GiB, { state: 'Z', ppid: 59 })]);
    const [f] = check('zombies', input([s], { ancestors: { 59: host(59, { cmd: ['python', 'launcher.py'] }) } }));
    expect(f).toMatchObject({ evidence: { pids: [60], bytes: 2 * GiB, details: { parents: [59] } } });
    expect(f!.fix).toMatch(/pid 59 \(python launcher.py\)/);
  });
  it('stays quiet for sleeping processes', () => {
    expect(check('zombies', input([sample(0, [device(0, 2 * GiB)], [proc(60, 0, 2 * GiB, { state: 'S' })])]))).toEqual([]);
  });
});
