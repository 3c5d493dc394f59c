/** A held /proc file: an unchanged read gives back the previous value, any changed byte is parsed afresh. */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStatHandle } from '../../../src/sources/procfs/stat.js';

const line = (state: string, ticks: number): string =>
  `4242 (python (x)) ${state} 1 4242 4242 0 -1 4194560 0 0 0 0 ${ticks} 7 0 0 20 0 1 0 987654 0 0\n`;

describe('openStatHandle', () => {
  it('returns the same object while the bytes are equal and re-parses a same-length change', () => {
    const root = mkdtempSync(join(tmpdir(), 'gpumem-stat-'));
    mkdirSync(join(root, '4242'));
    const file = join(root, '4242', 'stat');
    writeFileSync(file, line('S', 10));
    const handle = openStatHandle(4242, { procRoot: root });
    const first = handle.read();
    expect(first).toMatchObject({ pid: 4242, comm: 'python (x)', state: 'S', cpuTicks: 17, startTicks: 987654 });
    expect(handle.read()).toBe(first);
    // Same length, one byte different: must not be mistaken for the previous line.
    writeFileSync(file, line('R', 11));
    const second = handle.read();
    expect(second).not.toBe(first);
    expect(second).toMatchObject({ state: 'R', cpuTicks: 18 });
    expect(handle.read()).toBe(second);
    // Another length.
    writeFileSync(file, line('T', 1234));
    expect(handle.read()).toMatchObject({ state: 'T', cpuTicks: 1241 });
    writeFileSync(file, 'garbage');
    expect(handle.read()).toBeNull();
    // Closed after a bad read: stays null even once the file is good again.
    writeFileSync(file, line('S', 10));
    expect(handle.read()).toBeNull();
  });
});
