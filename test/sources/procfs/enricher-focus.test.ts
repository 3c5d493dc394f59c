/** The enricher's live-view extras: a faster re-read for the pids on screen, CPU % between reads, and RSS. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Sample } from '../../../src/core/types.js';
import { createHostEnricher, readProcStat } from '../../../src/sources/procfs/index.js';
import { sampleOf, until } from './helpers.js';

const focused = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
const other = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
// Busy for a while, then asleep: its CPU ticks move between two reads.
const busy = spawn('/bin/sh', ['-c', 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exec sleep 60'], { stdio: 'ignore' });
afterAll(() => {
  for (const c of [focused, other, busy]) c.kill('SIGKILL');
});

const twoPids = (a: number, b: number): Sample => {
  const s = sampleOf(a);
  return { ...s, processes: [...s.processes, ...sampleOf(b).processes] };
};

describe('host enricher for a live view', () => {
  it('re-reads the focused pids at their own period and the rest at the slow one', async () => {
    const [a, b] = [focused.pid!, other.pid!];
    await until(() => readProcStat(a)?.state === 'S' && readProcStat(b)?.state === 'S', 'both children to sleep');
    let clockMs = 5_000_000;
    const enrich = createHostEnricher({ restatEveryMs: 60_000, focusRestatEveryMs: 1000, focusPids: () => new Set([a]), nowMs: () => clockMs });
    try {
      enrich(twoPids(a, b));
      focused.kill('SIGSTOP');
      other.kill('SIGSTOP');
      await until(() => readProcStat(a)?.state === 'T' && readProcStat(b)?.state === 'T', 'both children to stop');
      clockMs += 1001;
      const [fa, fb] = enrich(twoPids(a, b)).processes.map((p) => p.host!);
      expect(fa!.state).toBe('T');
      // Not on screen: still the state read first, until the slow period has passed.
      expect(fb!.state).toBe('S');
      clockMs += 60_000;
      expect(enrich(twoPids(a, b)).processes[1]!.host!.state).toBe('T');
    } finally {
      enrich.close();
      focused.kill('SIGCONT');
      other.kill('SIGCONT');
    }
  });

  it('gives CPU % from the ticks between two reads and RSS in bytes equal to /proc/PID/status VmRSS', async () => {
    const pid = busy.pid!;
    let clockMs = 9_000_000;
    const enrich = createHostEnricher({ liveUsage: true, nowMs: () => clockMs });
    try {
      const first = enrich(sampleOf(pid)).processes[0]!.host!;
      expect(first.cpuPct).toBeNull();
      await until(() => (readProcStat(pid)?.cpuTicks ?? 0) > (first.cpuTicks ?? 0) && readProcStat(pid)?.comm === 'sleep' && readProcStat(pid)?.state === 'S', 'the shell to use CPU and exec sleep');
      clockMs += 2000;
      const second = enrich(sampleOf(pid)).processes[0]!.host!;
      const ticks = second.cpuTicks! - first.cpuTicks!;
      expect(ticks).toBeGreaterThan(0);
      // 100 ticks a second: ticks / 100 s of CPU over 2 s of clock, to 0.1 %.
      expect(second.cpuPct).toBe(Math.round((ticks / 100 / 2) * 1000) / 10);
      const vmRssKiB = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      expect(second.rssBytes).toBe(vmRssKiB * 1024);
    } finally {
      enrich.close();
    }
  });
});
