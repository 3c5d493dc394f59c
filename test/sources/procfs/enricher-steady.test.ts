/**
 * The enricher's steady sample (a pid it knows, read again through its held /proc/PID/stat, parsed from the
 * buffer's bytes): a comm with spaces and parentheses that changes under it, and a pid reused by another
 * process between two samples.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHostEnricher, readProcStat } from '../../../src/sources/procfs/index.js';
import { sampleOf, until } from './helpers.js';

describe('host enricher, steady samples', () => {
  it('a process that renames itself to a comm with ") (" keeps its parent, state and facts object', async () => {
    // The shell names itself like the tail of a stat line, then renames itself again on SIGUSR1.
    const script = `printf '%s' 'a) R 9 9 (' > /proc/self/comm; trap "printf '%s' 'b) (Z 7' > /proc/self/comm" USR1; while :; do sleep 0.05; done`;
    const child = spawn('/bin/sh', ['-c', script], { stdio: 'ignore' });
    const enrich = createHostEnricher();
    try {
      const pid = child.pid!;
      await until(() => readProcStat(pid)?.comm === 'a) R 9 9 (', 'the shell to rename itself');
      const first = enrich(sampleOf(pid)).processes[0]!.host!;
      expect([first.ppid, first.startTicks, first.cmdline?.[0]]).toEqual([process.pid, readProcStat(pid)!.startTicks, '/bin/sh']);
      child.kill('SIGUSR1');
      await until(() => readProcStat(pid)?.comm === 'b) (Z 7', 'the shell to rename itself again');
      for (let i = 0; i < 3; i++) {
        const again = enrich(sampleOf(pid)).processes[0]!.host!;
        // Same parent, start and CPU time: the same facts object (the comm is not a fact; it must not shift fields).
        if (again.state === first.state && again.cpuTicks === first.cpuTicks) expect(again).toBe(first);
        expect([again.ppid, again.startTicks, again.visible]).toEqual([process.pid, first.startTicks, true]);
        expect(again.state).not.toBe('Z');
      }
      expect([enrich.counts.stableFactReads, enrich.counts.heldFiles]).toEqual([1, 1]);
    } finally {
      enrich.close();
      child.kill('SIGKILL');
    }
  });

  it('a held pid reused by another process between samples is read afresh (other start ticks)', () => {
    // A prepared tree: a held regular file is re-read from offset 0 like /proc/PID/stat, so a rewrite stands
    // for the kernel's next answer.
    const root = mkdtempSync(join(tmpdir(), 'gpumem-enrich-steady-'));
    mkdirSync(join(root, '88'));
    writeFileSync(join(root, 'stat'), 'cpu 1 2 3\nbtime 1700000000\n');
    const stat = (comm: string, state: string, cpu: number, startTicks: number): string =>
      `88 (${comm}) ${state} 1 88 88 0 -1 0 0 0 0 0 ${cpu} 0 0 0 20 0 1 0 ${startTicks} 0 0\n`;
    writeFileSync(join(root, '88', 'stat'), stat('python (train)', 'R', 10, 50_000));
    writeFileSync(join(root, '88', 'status'), 'Uid:\t4321\t4321\t4321\t4321\nNSpid:\t88\n');
    writeFileSync(join(root, '88', 'cmdline'), 'python\0train.py\0');
    const enrich = createHostEnricher({ procRoot: root });
    try {
      const first = enrich(sampleOf(88)).processes[0]!.host!;
      expect([first.cmdline, first.cpuTicks, enrich.counts.heldFiles]).toEqual([['python', 'train.py'], 10, 1]);
      expect(enrich(sampleOf(88)).processes[0]!.host).toBe(first);
      // The same process with more CPU time and a shorter comm (the buffer still holds the longer line's tail).
      writeFileSync(join(root, '88', 'stat'), stat('py', 'S', 25, 50_000));
      const busier = enrich(sampleOf(88)).processes[0]!.host!;
      expect([busier.state, busier.cpuTicks, busier.cmdline, enrich.counts.stableFactReads]).toEqual(['S', 25, ['python', 'train.py'], 1]);
      // Another process under pid 88: other start ticks, its own command line read.
      writeFileSync(join(root, '88', 'stat'), stat('bash', 'S', 0, 60_000));
      writeFileSync(join(root, '88', 'cmdline'), 'bash\0');
      const reused = enrich(sampleOf(88)).processes[0]!.host!;
      expect([reused.cmdline, reused.startTicks, reused.cpuTicks, enrich.counts.stableFactReads, enrich.counts.heldFiles]).toEqual([['bash'], 60_000, 0, 2, 1]);
    } finally {
      enrich.close();
    }
  });

  it('a pid /proc does not show is looked for again at the next round, not every sample', () => {
    // NVML lists a pid this /proc does not have (a container sees the host's pids); later it appears.
    const root = mkdtempSync(join(tmpdir(), 'gpumem-enrich-hidden-'));
    writeFileSync(join(root, 'stat'), 'cpu 1 2 3\nbtime 1700000000\n');
    let nowMs = 1_000_000;
    const enrich = createHostEnricher({ procRoot: root, restatEveryMs: 5000, reuseRows: true, nowMs: () => nowMs });
    try {
      const first = enrich(sampleOf(77));
      expect(first.processes[0]!.host!.visible).toBe(false);
      mkdirSync(join(root, '77'));
      writeFileSync(join(root, '77', 'stat'), '77 (python) S 1 77 77 0 -1 0 0 0 0 0 5 0 0 0 20 0 1 0 40000 0 0\n');
      writeFileSync(join(root, '77', 'status'), 'Uid:\t4321\t4321\t4321\t4321\nNSpid:\t77\n');
      writeFileSync(join(root, '77', 'cmdline'), 'python\0train.py\0');
      // Within the round: the same facts and the same rows, nothing tried again.
      nowMs += 2000;
      const within = enrich(sampleOf(77));
      expect(within.processes[0]!.host).toBe(first.processes[0]!.host);
      expect(within.processes).toBe(first.processes);
      // The next round finds it.
      nowMs += 3000;
      const next = enrich(sampleOf(77)).processes[0]!.host!;
      expect([next.visible, next.cmdline, next.startTicks]).toEqual([true, ['python', 'train.py'], 40_000]);
    } finally {
      enrich.close();
    }
    // Without rounds (status --json, every sample re-read) every sample looks.
    const root2 = mkdtempSync(join(tmpdir(), 'gpumem-enrich-hidden-'));
    writeFileSync(join(root2, 'stat'), 'cpu 1 2 3\nbtime 1700000000\n');
    const every = createHostEnricher({ procRoot: root2 });
    try {
      expect(every(sampleOf(78)).processes[0]!.host!.visible).toBe(false);
      mkdirSync(join(root2, '78'));
      writeFileSync(join(root2, '78', 'stat'), '78 (python) S 1 78 78 0 -1 0 0 0 0 0 5 0 0 0 20 0 1 0 40000 0 0\n');
      expect(every(sampleOf(78)).processes[0]!.host!.visible).toBe(true);
    } finally {
      every.close();
    }
  });

  it('the very rows of the previous sample between rounds come back as they were, in the new sample', () => {
    const root = mkdtempSync(join(tmpdir(), 'gpumem-enrich-same-'));
    writeFileSync(join(root, 'stat'), 'cpu 1 2 3\nbtime 1700000000\n');
    const proc = (pid: number, state: string, cpu: number): void => {
      mkdirSync(join(root, String(pid)), { recursive: true });
      writeFileSync(join(root, String(pid), 'stat'), `${pid} (python) ${state} 1 ${pid} ${pid} 0 -1 0 0 0 0 0 ${cpu} 0 0 0 20 0 1 0 40000 0 0\n`);
      writeFileSync(join(root, String(pid), 'status'), `Uid:\t4321\t4321\t4321\t4321\nNSpid:\t${pid}\n`);
      writeFileSync(join(root, String(pid), 'cmdline'), 'python\0train.py\0');
    };
    proc(61, 'S', 5);
    let nowMs = 1_000_000;
    const enrich = createHostEnricher({ procRoot: root, restatEveryMs: 5000, reuseRows: true, nowMs: () => nowMs });
    try {
      const input = sampleOf(61);
      const first = enrich(input);
      // The process turns busy; NVML hands the same rows again within the round: the same rows, nothing read.
      proc(61, 'R', 9);
      nowMs += 1000;
      // (The enricher returns them without walking the rows; what it returns must be what the walk gave.)
      const same = enrich({ ...input, timeMs: 2 });
      expect(same.processes).toBe(first.processes);
      expect(same.timeMs).toBe(2);
      // The round reads it.
      nowMs += 4000;
      expect(enrich({ ...input, timeMs: 3 }).processes[0]!.host!).toMatchObject({ state: 'R', cpuTicks: 9, cpuTicksAtMs: 1_005_000 });
    } finally {
      enrich.close();
    }
  });
});
