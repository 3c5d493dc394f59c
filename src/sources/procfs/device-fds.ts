/**
 * Which NVIDIA device nodes a process has open, read from /proc/PID/fd. Every CUDA process keeps
 * /dev/nvidiactl, /dev/nvidiaN and usually /dev/nvidia-uvm open, so this is local proof that a pid really is a
 * GPU user — unlike the pid NVML reports, which inside a container is a host pid that may name an unrelated
 * local process.
 */
import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { reasonFor } from './host-facts.js';

export interface DeviceFdOptions {
  /** Default "/proc". */
  procRoot?: string;
  /**
   * Stand-in device nodes for tests, in addition to /dev/nvidia*: regular files named `<prefix>N`, `<prefix>ctl`, `<prefix>-uvm`
   * inside a folder that is private to the caller (see testDevicePrefixProblem). Ignored otherwise.
   */
  devicePrefix?: string;
}

const DEVICE_PREFIX = '/dev/nvidia';

/**
 * Why `prefix` cannot stand in for /dev/nvidia, or null when it can: it must be an absolute path whose
 * folder is a real directory owned by the caller that no one else may enter (mode 0700 or stricter), so no
 * other user can create a file there and no common path (/, /dev, /tmp) can be named. A test knob can
 * therefore add only files the caller made for the purpose; it never widens what counts as a real device.
 */
export function testDevicePrefixProblem(prefix: string, uid: number = process.getuid?.() ?? -1): string | null {
  if (!prefix.startsWith('/') || prefix.endsWith('/')) return 'not an absolute path ending in a file-name prefix';
  const dir = dirname(prefix);
  let st;
  try {
    st = lstatSync(dir);
  } catch (error) {
    return `${dir} cannot be inspected (${reasonFor(error)})`;
  }
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (st.uid !== uid) return `${dir} does not belong to uid ${uid}`;
  if ((st.mode & 0o077) !== 0) return `${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

/** True when `target` is one of the test stand-ins: a regular file named like a device node after the prefix (`N`, `ctl`, `-uvm`…). */
function isTestDevice(target: string, prefix: string): boolean {
  if (!target.startsWith(prefix) || !/^(\d+|ctl|-uvm|-uvm-tools|-modeset)$/.test(target.slice(prefix.length))) return false;
  try {
    return lstatSync(target).isFile();
  } catch {
    return false;
  }
}

/** Either the device paths the process has open (possibly none), or why its fds could not be listed. */
export type DeviceFds = { ok: true; paths: string[] } | { ok: false; reason: string };

/**
 * Lists the NVIDIA device nodes `pid` holds open: each entry of /proc/PID/fd is resolved with readlink and
 * kept when it starts with the device prefix. An fd closed between the listing and the readlink is ignored;
 * an unreadable fd folder (another user's process: EACCES; a gone pid: ENOENT) is returned as a reason.
 */
export function readNvidiaDeviceFds(pid: number, options: DeviceFdOptions = {}): DeviceFds {
  const dir = `${options.procRoot ?? '/proc'}/${pid}/fd`;
  const testPrefix = options.devicePrefix && testDevicePrefixProblem(options.devicePrefix) === null ? options.devicePrefix : null;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    return { ok: false, reason: reasonFor(error) };
  }
  const paths = new Set<string>();
  for (const name of names) {
    let target: string;
    try {
      target = readlinkSync(`${dir}/${name}`);
    } catch {
      continue;
    }
    if (target.startsWith(DEVICE_PREFIX) || (testPrefix !== null && isTestDevice(target, testPrefix))) paths.add(target);
  }
  return { ok: true, paths: [...paths].sort() };
}
