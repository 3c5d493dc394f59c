/**
 * Whether this process runs inside a container, as far as /proc and the filesystem tell. One answer for the
 * live diagnosis and for the header of a recording, so a recording replayed elsewhere is read the same way.
 */
import { readFileSync } from 'node:fs';

/** Runtimes whose names appear in /proc/1/cgroup under cgroup v1 (v2 shows only "0::/" inside a container). */
const RUNTIME_IN_CGROUP = /docker|containerd|kubepods|libpod|crio|lxc/;

export interface ContainerProbeOptions {
  /** Default "/proc". */
  procRoot?: string;
  /** The file docker creates in every container; default "/.dockerenv". */
  dockerenvPath?: string;
}

function exists(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * true when /proc/1/cgroup names a container runtime or /.dockerenv exists (the only sign under cgroup v2);
 * false when pid 1's cgroup is readable and neither holds; null when nothing could be read.
 */
export function detectContainer(options: ContainerProbeOptions = {}): boolean | null {
  let cgroup: string | null;
  try {
    cgroup = readFileSync(`${options.procRoot ?? '/proc'}/1/cgroup`, 'utf8');
  } catch {
    cgroup = null;
  }
  if (cgroup !== null && RUNTIME_IN_CGROUP.test(cgroup)) return true;
  if (exists(options.dockerenvPath ?? '/.dockerenv')) return true;
  return cgroup === null ? null : false;
}
