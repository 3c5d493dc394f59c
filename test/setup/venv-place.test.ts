/** Where the test environments go when the disk is short (test/setup/venv-place.ts). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { downloadsInRam, memAvailableGb, placeEnvironment, type Room } from './venv-place.js';

// The sizes of the older-torch environment as measured: 4.6 GB kept, 2.5 GB of downloads while installing.
const NEED = 4.6;
const DOWNLOAD = 2.5;
const room = (diskFreeGb: number, ramDirFreeGb: number, memAvailableGb: number): Room => ({ diskFreeGb, ramDirFreeGb, memAvailableGb });

describe('placeEnvironment', () => {
  it('keeps the environment in the checkout while the disk holds it, downloads going to memory', () => {
    expect(placeEnvironment(room(5.7, 24, 24), NEED, DOWNLOAD)).toBe('disk');
    expect(downloadsInRam(room(5.7, 24, 24), DOWNLOAD, 'disk', NEED)).toBe(true);
  });

  it('leaves the downloads on disk when memory cannot take them beside the suite', () => {
    // 8 GB of memory cannot hold 2.5 GB of downloads beside the 10 GB the suite needs.
    expect(downloadsInRam(room(9, 24, 8), DOWNLOAD, 'disk', NEED)).toBe(false);
    expect(placeEnvironment(room(9, 24, 8), NEED, DOWNLOAD)).toBe('disk');
  });

  it('goes to memory when the disk is short, as on the CI host that had 2.9 GB left', () => {
    expect(placeEnvironment(room(2.9, 24, 24), NEED, DOWNLOAD)).toBe('ram');
    expect(downloadsInRam(room(2.9, 24, 24), DOWNLOAD, 'ram', NEED)).toBe(true);
  });

  it('stays on disk when memory cannot hold it with the suite beside it, or the RAM folder is small', () => {
    expect(placeEnvironment(room(2.9, 24, 16), NEED, DOWNLOAD)).toBe('disk');
    expect(placeEnvironment(room(2.9, 0.06, 24), NEED, DOWNLOAD)).toBe('disk'); // a container's default 64 MB /dev/shm
  });
});

describe('memAvailableGb', () => {
  it('reads MemAvailable in kB and is 0 when the line or the file is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-meminfo-'));
    const file = join(dir, 'meminfo');
    writeFileSync(file, 'MemTotal:       25165824 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n');
    expect(memAvailableGb(file)).toBeCloseTo(20.48, 2);
    writeFileSync(file, 'MemTotal:       25165824 kB\n');
    expect(memAvailableGb(file)).toBe(0);
    expect(memAvailableGb(join(dir, 'absent'))).toBe(0);
  });
});
