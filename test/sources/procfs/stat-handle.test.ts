/**
 * A held /proc/PID/stat read in two steps (prefetch, then read for the same round), as the enricher reads a
 * sample's due processes: the bytes the prefetch took are what the read parses, and nothing stale is ever
 * parsed for another round. A prepared file stands for the kernel's answer (a held regular file is re-read
 * from offset 0 like /proc/PID/stat); a real process for one that exits in between.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStatHandle, readProcStat } from '../../../src/sources/procfs/stat.js';
import { until } from './helpers.js';

const line = (comm: string, state: string, startTicks: number): string => `5 (${comm}) ${state} 1 5 5 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 ${startTicks} 0 0\n`;

function preparedStat(text: string): { root: string; write: (t: string) => void } {
  const root = mkdtempSync(join(tmpdir(), 'gpumem-stat-handle-'));
  mkdirSync(join(root, '5'));
  const write = (t: string): void => writeFileSync(join(root, '5', 'stat'), t);
  write(text);
  return { root, write };
}

describe('held stat handle, prefetched', () => {
  it('read(round) parses what the prefetch of that round read; another round or none reads afresh', () => {
    const { root, write } = preparedStat(line('py', 'R', 100));
    const handle = openStatHandle(5, { procRoot: root });
    try {
      handle.prefetch(1);
      write(line('py', 'S', 100));
      expect(handle.read(1)?.state).toBe('R');
      // The prefetched bytes are used once: the same round again, another one, or none reads the file now.
      expect(handle.read(1)?.state).toBe('S');
      handle.prefetch(2);
      write(line('py', 'D', 100));
      expect(handle.read(3)?.state).toBe('D');
      write(line('py', 'T', 100));
      expect(handle.read()?.state).toBe('T');
    } finally {
      handle.close();
    }
  });

  it('a line longer than the prefetch buffer is read afresh, whole', () => {
    const long = line(`x${' '.repeat(600)}y`, 'S', 200);
    const { root } = preparedStat(long);
    const handle = openStatHandle(5, { procRoot: root });
    try {
      handle.prefetch(1);
      expect(handle.read(1)).toMatchObject({ comm: `x${' '.repeat(600)}y`, state: 'S', startTicks: 200, cpuTicks: 7 });
    } finally {
      handle.close();
    }
  });

  it('a process gone before a prefetch gives null for that round, and the handle is closed', async () => {
    const child = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
    const pid = child.pid!;
    await until(() => readProcStat(pid) !== null, 'the child to start');
    const handle = openStatHandle(pid);
    handle.prefetch(1);
    expect(handle.read(1)?.pid).toBe(pid);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await until(() => readProcStat(pid) === null, 'the child to be reaped');
    // Gone before the prefetch: the prefetch fails, and the read of its round says so.
    handle.prefetch(2);
    expect(handle.read(2)).toBeNull();
    // Closed now: no further read, prefetched or not.
    handle.prefetch(3);
    expect(handle.read(3)).toBeNull();
  });
});
