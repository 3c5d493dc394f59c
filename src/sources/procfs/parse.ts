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

/** The one-letter states by character code (a state token of any other letter or length is unknown). */
const STATE_BY_CODE: ReadonlyArray<ProcessState | undefined> = (() => {
  const table: Array<ProcessState | undefined> = new Array(128).fill(undefined);
  for (const c of 'RSDZTtXIWPK') table[c.charCodeAt(0)] = c as ProcessState;
  return table;
})();

/** Whitespace as /\s/ knows it in ASCII: a stat line is separated by single spaces, but be lenient. */
const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13);

/** The decimal integer (optionally negative, as the kernel prints a signed field) in bytes[from, to); NaN if it is not one. */
function intIn(bytes: Uint8Array, from: number, to: number): number {
  const negative = from < to && bytes[from] === 45;
  let i = negative ? from + 1 : from;
  if (i >= to) return Number.NaN;
  let value = 0;
  for (; i < to; i++) {
    const digit = (bytes[i] as number) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}

/** `previous` when its comm is the ASCII text of bytes[from, to) (a comm rarely changes), else null. */
function sameAsciiComm(bytes: Uint8Array, from: number, to: number, previous: string): boolean {
  if (previous.length !== to - from) return false;
  for (let i = 0; i < previous.length; i++) if (previous.charCodeAt(i) !== bytes[from + i] || previous.charCodeAt(i) >= 128) return false;
  return true;
}

/**
 * Parses /proc/PID/stat from the bytes a read left in `bytes[0, length)`. The comm sits in parentheses and may
 * itself contain ") (", so the fields after it are read from the *last* ")". Only fields 3–5, 14–15 and 22 are
 * read, straight from the bytes without decoding the line or splitting the ~50 fields (this runs for every GPU
 * process on every sample); the numeric fields are decimal integers, as the kernel writes them. The comm is
 * decoded as UTF-8, or taken from `previous` when it is the same ASCII text; when every field equals
 * `previous`'s, `previous` itself is returned. Returns null when the bytes are not a stat line.
 */
export function parseProcStatBytes(bytes: Buffer, length: number, previous: ProcStat | null = null): ProcStat | null {
  const end = Math.min(length, bytes.length);
  // The "(" is a few bytes in: a loop. The last ")" is ~300 bytes back from the end: Buffer's memrchr.
  let open = 0;
  while (open < end && bytes[open] !== 40) open++;
  const close = end > 0 ? bytes.lastIndexOf(41, end - 1) : -1;
  if (open >= end || close <= open) return null;
  let pidFrom = 0;
  let pidTo = open;
  while (pidFrom < pidTo && isSpace(bytes[pidFrom] as number)) pidFrom++;
  while (pidTo > pidFrom && isSpace(bytes[pidTo - 1] as number)) pidTo--;
  const pid = intIn(bytes, pidFrom, pidTo);
  // field n of the line is token n - 2 after the ")" (state is field 3).
  let state: ProcessState | null = null;
  let ppid = Number.NaN;
  let pgid = Number.NaN;
  let startTicks = Number.NaN;
  let utime = Number.NaN;
  let stime = Number.NaN;
  let field = 2;
  let i = close + 1;
  while (i < end && field < 22) {
    while (i < end && isSpace(bytes[i] as number)) i++;
    if (i >= end) break;
    const from = i;
    while (i < end && !isSpace(bytes[i] as number)) i++;
    field++;
    if (field === 3) state = i - from === 1 ? (STATE_BY_CODE[bytes[from] as number] ?? null) : null;
    else if (field === 4) ppid = intIn(bytes, from, i);
    else if (field === 5) pgid = intIn(bytes, from, i);
    else if (field === 14) utime = intIn(bytes, from, i);
    else if (field === 15) stime = intIn(bytes, from, i);
    else if (field === 22) startTicks = intIn(bytes, from, i);
  }
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid) || !Number.isSafeInteger(startTicks)) return null;
  const cpu = utime + stime;
  const cpuTicks = Number.isSafeInteger(cpu) && cpu >= 0 ? cpu : null;
  const sameComm = previous !== null && sameAsciiComm(bytes, open + 1, close, previous.comm);
  // Nothing changed (a process that sleeps): the previous object itself, so a steady sample allocates nothing.
  if (sameComm && previous.pid === pid && previous.state === state && previous.ppid === ppid && previous.pgid === pgid
    && previous.startTicks === startTicks && previous.cpuTicks === cpuTicks) return previous;
  const comm = sameComm ? previous.comm : bytes.toString('utf8', open + 1, close);
  return { pid, comm, state, ppid, pgid, startTicks, cpuTicks };
}

/** parseProcStatBytes on the text of a stat line (a line already read as a string, and the tests). */
export function parseProcStat(text: string): ProcStat | null {
  const bytes = Buffer.from(text, 'utf8');
  return parseProcStatBytes(bytes, bytes.length);
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
