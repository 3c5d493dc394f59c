/**
 * Pure parsers for the /proc and /etc files host facts come from. Kept apart from the file reading so each
 * format quirk (a comm with spaces and parentheses, cgroup v1 vs v2 paths) is tested with plain strings.
 */
import type { CudaEnv, ProcessState } from '../../core/types.js';

export interface ProcStat {
  pid: number;
  /** The comm field: up to 15 bytes, may hold spaces and parentheses. */
  comm: string;
  state: ProcessState | null;
  ppid: number;
  /** Field 5: the process group id. */
  pgid: number;
  /** Field 22: start time in clock ticks after boot. */
  startTicks: number;
  /** Fields 14 + 15: CPU time used so far (user + system), in clock ticks; null when unreadable. */
  cpuTicks: number | null;
}

const STATES = new Set(['R', 'S', 'D', 'Z', 'T', 't', 'X', 'I', 'W', 'P', 'K']);

/** Whitespace as /\s/ knows it in ASCII: a stat line is separated by single spaces, but be lenient. */
const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13);

/**
 * Parses /proc/PID/stat. The comm sits in parentheses and may itself contain ") (", so the fields after it
 * are read from the *last* ")". Only fields 3–5, 14–15 and 22 are read, scanning without splitting the ~50 fields
 * (this runs for every GPU process on every sample). Returns null when the text is not a stat line.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  // field n of the line is token n - 2 after the ")" (state is field 3).
  let state = '';
  let ppid = Number.NaN;
  let pgid = Number.NaN;
  let startTicks = Number.NaN;
  let utime = Number.NaN;
  let stime = Number.NaN;
  let field = 2;
  let i = close + 1;
  while (i < text.length && field < 22) {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (i >= text.length) break;
    const from = i;
    while (i < text.length && !isSpace(text.charCodeAt(i))) i++;
    field++;
    if (field === 3) state = text.slice(from, i);
    else if (field === 4) ppid = Number(text.slice(from, i));
    else if (field === 5) pgid = Number(text.slice(from, i));
    else if (field === 14) utime = Number(text.slice(from, i));
    else if (field === 15) stime = Number(text.slice(from, i));
    else if (field === 22) startTicks = Number(text.slice(from, i));
  }
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid) || !Number.isSafeInteger(startTicks)) return null;
  const cpu = utime + stime;
  const cpuTicks = Number.isSafeInteger(cpu) && cpu >= 0 ? cpu : null;
  return { pid, comm: text.slice(open + 1, close), state: STATES.has(state) ? (state as ProcessState) : null, ppid, pgid, startTicks, cpuTicks };
}

/**
 * The resident pages of /proc/PID/statm (its second field). Its count is the exact one `VmRSS` in
 * /proc/PID/status shows, where field 24 of /proc/PID/stat reads the kernel's per-CPU counters approximately.
 */
export function parseStatmResidentPages(text: string): number | null {
  const fields = text.trim().split(' ');
  const pages = Number(fields[1]);
  return fields.length >= 2 && Number.isSafeInteger(pages) && pages >= 0 && /^\d+$/.test(fields[1] as string) ? pages : null;
}

/** A numeric list line of /proc/PID/status ("Uid:\t1000\t1000\t1000\t1000", "NSpid:\t812\t1"). */
export function statusNumbers(text: string, key: string): number[] | null {
  const line = text.split('\n').find((l) => l.startsWith(`${key}:`));
  if (!line) return null;
  const values = line.slice(key.length + 1).trim().split(/\s+/).map(Number);
  return values.length > 0 && values.every(Number.isInteger) ? values : null;
}

/** `btime` from /proc/stat: boot time in seconds since the epoch. */
export function parseBootTimeSec(text: string): number | null {
  const m = /^btime\s+(\d+)\s*$/m.exec(text);
  return m ? Number(m[1]) : null;
}

const CONTAINER_PATTERNS: readonly RegExp[] = [
  /(?:docker|cri-containerd|containerd|crio|libpod|conmon)-([0-9a-f]{64})(?:\.scope)?/,
  /\/(?:docker|kubepods[^/]*(?:\/[^/]+)*|libpod|containerd|crio|actions_job|ecs\/[^/]+)\/([0-9a-f]{64})\b/,
];

/**
 * The container id a /proc/PID/cgroup places the process in (docker, containerd/k8s, podman, cri-o; cgroup
 * v1 or v2), or null when its cgroups name none — a process on the host.
 */
export function parseContainerId(cgroupText: string): string | null {
  for (const line of cgroupText.split('\n')) {
    const path = line.split(':').slice(2).join(':');
    for (const re of CONTAINER_PATTERNS) {
      const m = re.exec(path);
      if (m) return m[1]!;
    }
  }
  return null;
}

/** uid → user name from /etc/passwd text. */
export function parsePasswd(text: string): Map<number, string> {
  const users = new Map<number, string>();
  for (const line of text.split('\n')) {
    const [name, , uid] = line.split(':');
    if (name && uid !== undefined && /^\d+$/.test(uid) && !users.has(Number(uid))) users.set(Number(uid), name);
  }
  return users;
}

// RANK / LOCAL_RANK / WORLD_SIZE are what torchrun, accelerate and deepspeed give each rank: evidence of a
// process's role in its job (docs/guarantees.md, "Live jobs").
const CUDA_KEYS = ['CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER', 'PYTORCH_CUDA_ALLOC_CONF', 'PYTORCH_ALLOC_CONF', 'RANK', 'LOCAL_RANK', 'WORLD_SIZE'] as const;

/** The CUDA-relevant variables of a NUL-separated /proc/PID/environ, with the rank environment. */
export function parseCudaEnv(environ: string): CudaEnv {
  const env: CudaEnv = {};
  for (const entry of environ.split('\0')) {
    const eq = entry.indexOf('=');
    const key = entry.slice(0, eq) as (typeof CUDA_KEYS)[number];
    if (eq > 0 && CUDA_KEYS.includes(key)) env[key] = entry.slice(eq + 1);
  }
  return env;
}

/** argv from a NUL-separated /proc/PID/cmdline; null when empty (zombie, kernel thread). */
export function parseCmdline(text: string): string[] | null {
  if (text === '') return null;
  const parts = text.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}
