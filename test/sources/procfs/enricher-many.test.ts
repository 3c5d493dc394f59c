/**
 * More GPU processes than /proc files the enricher may hold: a pid without a held stat file keeps its stable
 * facts (status, cmdline, exe, cgroup, environ) across samples, read once while it lives; the budget of held
 * files follows this process's descriptor limit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sample } from '../../../src/core/types.js';
import { createHostEnricher, heldFilesBudget, readProcStat } from '../../../src/sources/procfs/index.js';
import { until } from './helpers.js';

const COUNT = 12;
const CAP = 4;
const children: ChildProcess[] = [];

beforeAll(async () => {
  for (let i = 0; i < COUNT; i++) children.push(spawn('/bin/sleep', ['60'], { stdio: 'ignore' }));
  await until(() => children.every((c) => readProcStat(c.pid!)?.state === 'S'), 'the children to sleep');
});
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** One sample listing every child on GPU 0. */
const sampleOfAll = (pids: number[]): Sample => ({
  timeMs: 1, source: { kind: 'nvml', detail: 'x' }, devices: [], unavailable: {},
  processes: pids.map((pid) => ({ pid, gpuUuid: 'GPU-0', gpuIndex: 0, gpuInstanceId: null, computeInstanceId: null, usedBytes: 1, kind: 'compute', name: null, smUtilPct: null, host: null, unavailable: {} })),
});

/** Descriptors of this process open on a /proc/PID/stat of one of `pids`. */
function heldStats(pids: number[]): number {
  const paths = new Set(pids.map((pid) => `/proc/${pid}/stat`));
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (paths.has(readlinkSync(`/proc/self/fd/${fd}`))) n++;
    } catch {
      // closed between listing and readlink
    }
  }
  return n;
}

describe('host enricher past its budget of held /proc files', () => {
  it('reads the stable facts of each unchanged pid once, holds no more files than allowed, and sees state changes', async () => {
    const pids = children.map((c) => c.pid!);
    const enrich = createHostEnricher({ maxHeldFiles: CAP });
    try {
      const first = enrich(sampleOfAll(pids)).processes.map((p) => p.host!);
      expect(first.every((h) => h.visible && h.cmdline?.[0] === '/bin/sleep')).toBe(true);
      for (let k = 0; k < 4; k++) {
        const again = enrich(sampleOfAll(pids)).processes.map((p) => p.host!);
        // Nothing changed: each pid's facts come back as the same object, held file or not.
        again.forEach((h, i) => expect(h, `pid ${pids[i]} in sample ${k + 2}`).toBe(first[i]));
      }
      expect(enrich.counts.stableFactReads).toBe(COUNT);
      expect(heldStats(pids)).toBe(CAP);
      expect(enrich.counts.heldFiles).toBe(CAP);

      // A pid past the budget still has its state read every sample.
      const last = children[COUNT - 1]!;
      last.kill('SIGSTOP');
      await until(() => readProcStat(last.pid!)?.state === 'T', 'the last child to stop');
      const stopped = enrich(sampleOfAll(pids)).processes[COUNT - 1]!.host!;
      expect(stopped.state).toBe('T');
      expect(stopped.cmdline).toBe(first[COUNT - 1]!.cmdline);
      expect(enrich.counts.stableFactReads).toBe(COUNT);
      last.kill('SIGCONT');
    } finally {
      enrich.close();
    }
    expect(heldStats(pids)).toBe(0);
  });

  it('a pid past the budget reused by a new process is read afresh (its start ticks differ)', () => {
    const root = mkdtempSync(join(tmpdir(), 'gpumem-enrich-many-'));
    mkdirSync(join(root, '77'));
    writeFileSync(join(root, 'stat'), 'cpu 1 2 3\nbtime 1700000000\n');
    const stat = (state: string, startTicks: number): string => `77 (python) ${state} 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ${startTicks} 0 0`;
    writeFileSync(join(root, '77', 'stat'), stat('R', 50_000));
    writeFileSync(join(root, '77', 'status'), 'Uid:\t4321\t4321\t4321\t4321\nNSpid:\t77\n');
    writeFileSync(join(root, '77', 'cmdline'), 'python\0train.py\0');
    const enrich = createHostEnricher({ procRoot: root, maxHeldFiles: 0 });
    const first = enrich(sampleOfAll([77])).processes[0]!.host!;
    expect([first.uid, first.cmdline]).toEqual([4321, ['python', 'train.py']]);
    // The same process: its state is re-read, its stable facts are not (the changed status is not seen).
    writeFileSync(join(root, '77', 'stat'), stat('S', 50_000));
    writeFileSync(join(root, '77', 'status'), 'Uid:\t1\t1\t1\t1\nNSpid:\t77\n');
    const again = enrich(sampleOfAll([77])).processes[0]!.host!;
    expect([again.state, again.uid, enrich.counts.stableFactReads]).toEqual(['S', 4321, 1]);
    // Another process under the same pid: other start ticks, everything read again.
    writeFileSync(join(root, '77', 'stat'), stat('S', 60_000));
    writeFileSync(join(root, '77', 'cmdline'), 'bash\0');
    const reused = enrich(sampleOfAll([77])).processes[0]!.host!;
    expect([reused.uid, reused.cmdline, reused.startTicks, enrich.counts.stableFactReads]).toEqual([1, ['bash'], 60_000, 2]);
    expect(enrich.counts.heldFiles).toBe(0);
    enrich.close();
  });

  it('the budget is half the soft limit on open files, less 64 kept for everything else', () => {
    expect(heldFilesBudget('Max open files            1024                 524288               files     \n')).toBe(448);
    expect(heldFilesBudget('Limit                     Soft Limit           Hard Limit           Units     \nMax open files            1048576              1048576              files     \n')).toBe(524_224);
    expect(heldFilesBudget('Max open files            100                  100                  files     \n')).toBe(0);
    // Unreadable or unparsable: the common default soft limit.
    expect(heldFilesBudget(null)).toBe(448);
    expect(heldFilesBudget('Max open files            unlimited            unlimited            files\n')).toBe(448);
    expect(heldFilesBudget()).toBeGreaterThan(0);
  });
});
