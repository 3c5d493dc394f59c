/** The enricher's slow re-read for live views: a known process's /proc/PID/stat is read at most once per period. */
import { sampleOf, until } from './helpers.js';
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostEnricher, readProcStat } from '../../../src/sources/procfs/index.js';

const child = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
afterAll(() => child.kill('SIGKILL'));



describe('host enricher with restatEveryMs', () => {
  it('keeps the cached state until the period has passed, then reads the change', async () => {
    const pid = child.pid!;
    await until(() => readProcStat(pid)?.state === 'S', 'the child to sleep');
    let clockMs = 1_000_000;
    const enrich = createHostEnricher({ restatEveryMs: 1000, nowMs: () => clockMs });
    try {
      const first = enrich(sampleOf(pid)).processes[0]!.host!;
      expect(first.state).toBe('S');
      child.kill('SIGSTOP');
      await until(() => readProcStat(pid)?.state === 'T', 'the child to stop');
      // Less than half a period after the first read (the earliest a re-read may be due): the cached facts, not re-read.
      clockMs += 1;
      expect(enrich(sampleOf(pid)).processes[0]!.host).toBe(first);
      // A full period later every known pid has been re-read once: the stop is seen.
      clockMs += 1000;
      const later = enrich(sampleOf(pid)).processes[0]!.host!;
      expect(later.state).toBe('T');
      expect(later.startTicks).toBe(first.startTicks);
      // Each reading is dated, so a window can tell one reading carried along from two that agree.
      expect(first.cpuTicksAtMs).toBe(1_000_000);
      expect(later.cpuTicksAtMs).toBe(1_001_001);
    } finally {
      enrich.close();
      child.kill('SIGCONT');
    }
  });

  it('asks a period given as a function at every sample: slow while nobody looks, quick again once someone does', async () => {
    const pid = child.pid!;
    await until(() => readProcStat(pid)?.state === 'S', 'the child to sleep');
    let clockMs = 2_000_000;
    let looking = false;
    const enrich = createHostEnricher({ restatEveryMs: () => (looking ? 1000 : 30_000), nowMs: () => clockMs });
    try {
      const first = enrich(sampleOf(pid)).processes[0]!.host!;
      expect(first.cpuTicksAtMs).toBe(2_000_000);
      child.kill('SIGSTOP');
      await until(() => readProcStat(pid)?.state === 'T', 'the child to stop');
      // Ten seconds on with nobody looking: within the slow period, the same facts object, nothing re-read.
      clockMs += 10_000;
      expect(enrich(sampleOf(pid)).processes[0]!.host).toBe(first);
      // Someone looks: the quick period has long passed since the last round, so this sample re-reads.
      looking = true;
      clockMs += 1;
      const seen = enrich(sampleOf(pid)).processes[0]!.host!;
      expect(seen.state).toBe('T');
      expect(seen.cpuTicksAtMs).toBe(2_010_001);
      // Looking away again: the next round waits for the slow period.
      looking = false;
      clockMs += 5000;
      expect(enrich(sampleOf(pid)).processes[0]!.host).toBe(seen);
      clockMs += 25_000;
      expect(enrich(sampleOf(pid)).processes[0]!.host!.cpuTicksAtMs).toBe(2_040_001);
    } finally {
      enrich.close();
      child.kill('SIGCONT');
    }
  });
});
