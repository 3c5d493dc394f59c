/**
 * Where a test environment of several GB goes, and where pip unpacks its downloads.
 *
 * The disk of a shared machine can be short on a given day (CI once had 2.9 GB left after the first environment).
 * The preferred place is the checkout (kept and reused across runs). When the disk cannot hold an environment but
 * memory can, it goes to the RAM-backed /dev/shm with a symlink in the checkout: it costs memory until the next
 * reboot, and it is rebuilt after one. pip's downloads (a few GB of wheels, deleted after the install) go to
 * /dev/shm whenever it has the room, so they never compete with the environment for disk.
 */
import { readFileSync, statfsSync } from 'node:fs';

export const RAM_DIR = '/dev/shm';
/** Left free on the disk after an environment, for the build, logs and the test's own files. */
const DISK_MARGIN_GB = 1;
/**
 * Memory the suite needs beside an environment held in RAM (two workers, traced models, browsers). Measured: its
 * lowest MemAvailable (2 s samples) was 1.3 GB under the starting value; the rest is headroom.
 */
const SUITE_MEMORY_GB = 10;

export interface Room {
  diskFreeGb: number;
  ramDirFreeGb: number;
  memAvailableGb: number;
  /** False when the RAM folder is mounted noexec (a container's default): torch's libraries could not be loaded. */
  ramDirExecutable: boolean;
}

/** Free GB of the file system holding `dir`; 0 when it cannot be read. */
export function freeGbOf(dir: string): number {
  try {
    const s = statfsSync(dir);
    return (s.bavail * s.bsize) / 1e9;
  } catch {
    return 0;
  }
}

/** The kernel's estimate of memory available without swapping, in GB; 0 when unknown. */
export function memAvailableGb(meminfo = '/proc/meminfo'): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync(meminfo, 'utf8'));
    return m ? (Number(m[1]) * 1024) / 1e9 : 0;
  } catch {
    return 0;
  }
}

/** Whether the mount holding `dir` (the longest mount point above it in `mounts`) allows executing. */
export function mountAllowsExec(dir: string, mounts = '/proc/mounts'): boolean {
  let best = '';
  let exec = false;
  try {
    for (const line of readFileSync(mounts, 'utf8').split('\n')) {
      const [, point, , options] = line.split(' ');
      if (!point || !options || !(dir === point || dir.startsWith(point.endsWith('/') ? point : `${point}/`))) continue;
      if (point.length < best.length) continue;
      best = point;
      exec = !options.split(',').includes('noexec');
    }
  } catch {
    return false;
  }
  return exec;
}

export function roomFor(checkout: string): Room {
  return {
    diskFreeGb: freeGbOf(checkout),
    ramDirFreeGb: freeGbOf(RAM_DIR),
    memAvailableGb: memAvailableGb(),
    ramDirExecutable: mountAllowsExec(RAM_DIR),
  };
}

/** Whether memory can hold `gb` more and still leave the suite what it needs. */
const ramHolds = (room: Room, gb: number): boolean =>
  room.ramDirFreeGb >= gb + DISK_MARGIN_GB && room.memAvailableGb >= gb + SUITE_MEMORY_GB;

/**
 * 'disk' when the checkout's disk holds an environment of `needGb`, else 'ram' when memory holds it together
 * with pip's downloads (and the RAM folder allows loading libraries), else 'disk' all the same: the install then
 * fails and says why. Downloads are only written and read, so noexec does not matter for them.
 */
export function placeEnvironment(room: Room, needGb: number, downloadGb: number): 'disk' | 'ram' {
  if (room.diskFreeGb >= needGb + DISK_MARGIN_GB) return 'disk';
  return room.ramDirExecutable && ramHolds(room, needGb + downloadGb) ? 'ram' : 'disk';
}

/** Whether pip's downloads of `downloadGb` go to RAM (given where the environment itself goes). */
export function downloadsInRam(room: Room, downloadGb: number, place: 'disk' | 'ram', needGb: number): boolean {
  return ramHolds(room, downloadGb + (place === 'ram' ? needGb : 0));
}

export const describeRoom = (r: Room): string =>
  `${r.diskFreeGb.toFixed(1)} GB free on the disk of the checkout, ${r.ramDirFreeGb.toFixed(1)} GB in ${RAM_DIR}, ` +
  `${r.memAvailableGb.toFixed(1)} GB of memory available${r.ramDirExecutable ? '' : ` (${RAM_DIR} is noexec)`}`;
