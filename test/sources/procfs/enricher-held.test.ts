/** The enricher on real processes: one held /proc/PID/stat per process, state re-read, gone pids released. */
import { sampleOf, until } from './helpers.js';
import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostEnricher, readProcStat } from '../../../src/sources/procfs/index.js';

const child = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
afterAll(() => child.kill('SIGKILL'));

/** Descriptors of this process open on /proc/PID/stat. */
function heldStats(pid: number): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === `/proc/${pid}/stat`) n++;
    } catch {
      // closed between listing and readlink
    }
  }
  return n;
}



describe('host enricher with held /proc/PID/stat', () => {
  it('reads state each sample through one held descriptor, keeps unchanged facts as one object, releases a gone pid', async () => {
    const pid = child.pid!;
    await until(() => readProcStat(pid)?.state === 'S', 'the child to sleep');
    const enrich = createHostEnricher();
    const first = enrich(sampleOf(pid, [0, 1])).processes.map((p) => p.host!);
    expect(first[0]!.cmdline).toEqual(['/bin/sleep', '60']);
    expect(first[1]).toBe(first[0]);
    expect(heldStats(pid)).toBe(1);
    // Nothing changed: the very same facts object comes back, no copy.
    expect(enrich(sampleOf(pid, [0, 1])).processes[0]!.host).toBe(first[0]);

    child.kill('SIGSTOP');
    await until(() => readProcStat(pid)?.state === 'T', 'the child to stop');
    const stopped = enrich(sampleOf(pid, [0, 1])).processes[0]!.host!;
    expect(stopped.state).toBe('T');
    expect(stopped.startTicks).toBe(first[0]!.startTicks);
    expect(stopped.cmdline).toBe(first[0]!.cmdline);
    expect(heldStats(pid)).toBe(1);

    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await until(() => readProcStat(pid) === null, 'the child to be reaped');
    const gone = enrich(sampleOf(pid, [0, 1])).processes[0]!.host!;
    expect(gone.visible).toBe(false);
    expect(gone.unavailable.cmdline).toMatch(/not found in this PID namespace/);
    expect(heldStats(pid)).toBe(0);
    enrich.close();
  });

  it('close() releases every held descriptor, and a sample without the pid releases its one', async () => {
    const other = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
    try {
      const pid = other.pid!;
      await until(() => readProcStat(pid) !== null, 'the child to start');
      const enrich = createHostEnricher();
      enrich(sampleOf(pid, [0, 1]));
      expect(heldStats(pid)).toBe(1);
      enrich({ ...sampleOf(pid, [0, 1]), processes: [] });
      expect(heldStats(pid)).toBe(0);
      enrich(sampleOf(pid, [0, 1]));
      expect(heldStats(pid)).toBe(1);
      enrich.close();
      expect(heldStats(pid)).toBe(0);
      // Still usable after close: it opens again.
      expect(enrich(sampleOf(pid, [0, 1])).processes[0]!.host!.visible).toBe(true);
      enrich.close();
    } finally {
      other.kill('SIGKILL');
    }
  });
});
