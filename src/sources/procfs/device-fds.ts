/**
 * Which NVIDIA device nodes a process has open, read from /proc/PID/fd. Every CUDA process keeps
 * /dev/nvidiactl, /dev/nvidiaN and usually /dev/nvidia-uvm open, so this is local proof that a pid really is a
 * GPU user — unlike the pid NVML reports, which inside a container is a host pid that may name an unrelated
 * local process.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { reasonFor } from './host-facts.js';

export interface DeviceFdOptions {
  /** Default "/proc". */
  procRoot?: string;
  /** Paths starting with this count as NVIDIA device nodes. Default "/dev/nvidia"; tests pass a temp path. */
  devicePrefix?: string;
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
  const prefix = options.devicePrefix ?? '/dev/nvidia';
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
    if (target.startsWith(prefix)) paths.add(target);
  }
  return { ok: true, paths: [...paths].sort() };
}
