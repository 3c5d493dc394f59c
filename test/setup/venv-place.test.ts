/** Where the test environments go when the disk is short (test/setup/venv-place.ts). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { downloadsInRam, memAvailableGb, mountAllowsExec, placeEnvironment, type Room } from './venv-place.js';

// The sizes of the older-torch environment as measured: 4.6 GB kept, 2.5 GB of downloads while installing.
const NEED = 4.6;
const DOWNLOAD = 2.5;
const room = (diskFreeGb: number, ramDirFreeGb: number, memAvailableGb: number, ramDirExecutable = true): Room => ({
  diskFreeGb,
  ramDirFreeGb,
  memAvailableGb,
  ramDirExecutable,
});

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

  it('never puts an environment on a noexec mount (torch could not load its libraries), only downloads', () => {
    expect(placeEnvironment(room(2.9, 24, 24, false), NEED, DOWNLOAD)).toBe('disk');
    expect(downloadsInRam(room(5.7, 24, 24, false), DOWNLOAD, 'disk', NEED)).toBe(true);
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

describe('mountAllowsExec', () => {
  it('reads the options of the longest mount point holding the folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-mounts-'));
    const file = join(dir, 'mounts');
    writeFileSync(file, '/dev/vda / ext4 rw,relatime 0 0\nshm /dev/shm tmpfs rw,nosuid,nodev,noexec,size=65536k 0 0\n');
    expect(mountAllowsExec('/dev/shm', file)).toBe(false);
    expect(mountAllowsExec('/dev/shmx', file)).toBe(true); // under /, not under /dev/shm
    writeFileSync(file, '/dev/vda / ext4 rw,noexec 0 0\ntmpfs /dev/shm tmpfs rw,relatime,size=24684084k 0 0\n');
    expect(mountAllowsExec('/dev/shm', file)).toBe(true);
    expect(mountAllowsExec('/dev/shm', join(dir, 'absent'))).toBe(false);
  });
});
