/**
 * Host facts for a pid, read from /proc. Every fact is read on its own so one unreadable file (another
 * user's environ, a zombie's exe) nulls only that fact, with the reason. A pid that does not exist in our
 * PID namespace keeps its row, marked not visible: NVML reports host pids, which a container cannot see.
 */
import { closeSync, openSync, readFileSync, readlinkSync, readSync } from 'node:fs';
import type { HostFacts } from '../../core/types.js';
import { parseBootTimeSec, parseCmdline, parseContainerId, parseCudaEnv, parsePasswd, parseProcStat, parseStatmResidentPages, statusNumbers, type ProcStat } from './parse.js';
import { parseJobFacts } from './job.js';
import { openProcFileHandle, readProcText, type ProcFileHandle, type ProcRootOptions } from './stat.js';

export interface ProcOptions extends ProcRootOptions {
  /** Default "/etc/passwd". */
  passwdPath?: string;
  /** USER_HZ; 100 on every mainstream Linux build (sysconf(_SC_CLK_TCK) is not reachable from Node). */
  clockTicksPerSec?: number;
  /**
   * Live views only: a process already known to the enricher has its /proc/PID/stat (state, parent, CPU
   * ticks) re-read at most this often instead of every sample, every known pid in the same round (a burst of
   * reads costs less than the same reads spread thin); each reading is dated (cpuTicksAtMs). Its stable facts
   * stay keyed by start ticks; a pid that leaves the sample is forgotten at once. Never used where a decision
   * is taken on the facts (kill re-reads /proc itself). Default: every sample. A function is asked once per
   * sample, so a command can re-read slowly while nothing shows the facts (serve with no page open) and
   * quickly again once something does; its answer is taken as at least 1 ms.
   */
  restatEveryMs?: number | (() => number);
  /**
   * Live views only: the pids whose /proc/PID/stat is re-read at `focusRestatEveryMs` instead of
   * `restatEveryMs` (the rows a person has on screen, whose CPU % and state must be fresh). Asked once per sample.
   */
  focusPids?: () => ReadonlySet<number>;
  focusRestatEveryMs?: number;
  /**
   * Live views: give each known process `cpuPct` (CPU use between its two latest stat reads) and `rssBytes`
   * (from /proc/PID/statm, read only for the focused pids when `focusPids` is given).
   */
  liveUsage?: boolean;
  /**
   * Live samplers: a process row equal to the previous sample's (same GPU numbers, same facts object) is
   * returned as that very object, so a history of samples shares unchanged rows. Rows are never mutated.
   */
  reuseRows?: boolean;
  /** Clock for `restatEveryMs` and the CPU % of a process (tests). Default Date.now. */
  nowMs?: () => number;
  /** Bytes per page for `rssBytes` (default: the kernel's, read once from /proc/self/smaps, else 4096). */
  pageBytes?: number;
  /** At most this many /proc files held open between samples (default: heldFilesBudget(), from our descriptor limit). */
  maxHeldFiles?: number;
  /**
   * `gpumem status`'s table: read only the facts it shows (user, command line, container, start time, state).
   * The environment (CUDA variables, job) is not read, nor the executable's path unless the command line is
   * empty; those facts are null with the reason NOT_READ_FOR_TABLE. At 8 GPUs × 64 processes that is two
   * /proc files fewer per process, and the environment is the largest of them.
   */
  tableFactsOnly?: boolean;
}

/** Said for each fact a table-only read leaves out (ProcOptions.tableFactsOnly). */
export const NOT_READ_FOR_TABLE = 'not read: the status table does not show it';

/** Why a file could not be read, as a reason string for the `unavailable` map. */
export function reasonFor(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ESRCH') return 'process gone';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied (another user\'s process, or /proc mounted with hidepid)';
  return `unreadable (${code ?? String(error)})`;
}

type Read<T> = { ok: true; value: T } | { ok: false; reason: string };

function tryRead<T>(fn: () => T): Read<T> {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, reason: reasonFor(error) };
  }
}

const root = (o: ProcOptions): string => o.procRoot ?? '/proc';

const NOT_READ: Read<never> = { ok: false, reason: NOT_READ_FOR_TABLE };

let bootCache: { root: string; ms: number | null } | undefined;

/** Boot time in ms since the epoch from `btime` in /proc/stat (cached: it does not change while we run). */
export function readBootTimeMs(options: ProcOptions = {}): number | null {
  if (bootCache?.root === root(options)) return bootCache.ms;
  const r = tryRead(() => readFileSync(`${root(options)}/stat`, 'utf8'));
  const sec = r.ok ? parseBootTimeSec(r.value) : null;
  bootCache = { root: root(options), ms: sec === null ? null : sec * 1000 };
  return bootCache.ms;
}

const passwdCache = new Map<string, Map<number, string>>();

function passwdUsers(options: ProcOptions): Map<number, string> {
  const path = options.passwdPath ?? '/etc/passwd';
  let users = passwdCache.get(path);
  if (!users) {
    const r = tryRead(() => readFileSync(path, 'utf8'));
    users = r.ok ? parsePasswd(r.value) : new Map();
    passwdCache.set(path, users);
  }
  return users;
}

/** uid → user name, from /etc/passwd (read once per path). Null when the uid has no entry there. */
export function userName(uid: number, options: ProcOptions = {}): string | null {
  return passwdUsers(options).get(uid) ?? null;
}

/** True when /etc/passwd has a user of this name (the same table host facts name users from). */
export function userNameExists(name: string, options: ProcOptions = {}): boolean {
  for (const known of passwdUsers(options).values()) if (known === name) return true;
  return false;
}

let pageCache: { root: string; bytes: number } | undefined;

/** The kernel's page size: `KernelPageSize` of the first mapping of /proc/self/smaps (read once), else 4096. */
export function readPageBytes(options: ProcOptions = {}): number {
  if (options.pageBytes !== undefined) return options.pageBytes;
  if (pageCache?.root === root(options)) return pageCache.bytes;
  // Only the first mapping's block is needed: the whole file of a large process is megabytes.
  const head = tryRead(() => {
    const fd = openSync(`${root(options)}/self/smaps`, 'r');
    try {
      const buffer = Buffer.alloc(4096);
      return buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0));
    } finally {
      closeSync(fd);
    }
  });
  const kib = head.ok ? Number(/KernelPageSize:\s+(\d+) kB/.exec(head.value)?.[1]) : Number.NaN;
  pageCache = { root: root(options), bytes: Number.isSafeInteger(kib) && kib > 0 ? kib * 1024 : 4096 };
  return pageCache.bytes;
}

/** A held /proc/PID/statm giving the resident set size in bytes (× page size) at each read, null once gone. */
export function openRssHandle(pid: number, options: ProcOptions = {}): ProcFileHandle<number> {
  const pageBytes = readPageBytes(options);
  return openProcFileHandle(pid, 'statm', (bytes, length) => {
    const pages = parseStatmResidentPages(bytes.toString('utf8', 0, length));
    return pages === null ? null : pages * pageBytes;
  }, options);
}

/** Facts of a pid that do not change while it lives (reused by the enricher while start ticks match). */
type StableFacts = Omit<HostFacts, 'state' | 'ppid' | 'visible' | 'cpuTicks' | 'rssBytes' | 'cpuPct'>;

/** Reads everything but state/ppid; `stat` was read just before. */
export function readStableFacts(pid: number, stat: ProcStat, options: ProcOptions = {}): StableFacts {
  const dir = `${root(options)}/${pid}`;
  const unavailable: Record<string, string> = {};
  const take = <T>(field: string, r: Read<T>): T | null => {
    if (r.ok) return r.value;
    unavailable[field] = r.reason;
    return null;
  };
  const status = tryRead(() => readFileSync(`${dir}/status`, 'utf8'));
  const uid = take('uid', status.ok ? { ok: true, value: statusNumbers(status.value, 'Uid')?.[0] ?? null } : status);
  const nspid = take('nspid', status.ok ? { ok: true, value: statusNumbers(status.value, 'NSpid') } : status);
  if (status.ok && nspid === null) unavailable.nspid = 'no NSpid line (kernel older than 4.1)';
  const user = uid === null ? null : userName(uid, options);
  if (uid !== null && user === null) unavailable.user = `uid ${uid} has no /etc/passwd entry here`;
  else if (uid === null) unavailable.user = unavailable.uid ?? 'uid unknown';
  const cmdline = take('cmdline', tryRead(() => parseCmdline(readFileSync(`${dir}/cmdline`, 'utf8'))));
  if (cmdline === null && !unavailable.cmdline) unavailable.cmdline = stat.state === 'Z' ? 'zombie: command line released' : 'empty command line (kernel thread?)';
  const tableOnly = options.tableFactsOnly === true;
  // The table shows the executable only in place of an empty command line.
  const exe = tableOnly && cmdline !== null && cmdline.length > 0 ? take('exe', NOT_READ) : take('exe', tryRead(() => readlinkSync(`${dir}/exe`)));
  const cgroup = tryRead(() => readFileSync(`${dir}/cgroup`, 'utf8'));
  const containerId = take('containerId', cgroup.ok ? { ok: true, value: parseContainerId(cgroup.value) } : cgroup);
  const environ: Read<string> = tableOnly ? NOT_READ : tryRead(() => readFileSync(`${dir}/environ`, 'utf8'));
  const cudaEnv = take('cudaEnv', environ.ok ? { ok: true, value: parseCudaEnv(environ.value) } : environ);
  const job = tableOnly ? null : parseJobFacts(cgroup.ok ? cgroup.value : null, environ.ok ? environ.value : null);
  // No job is a fact ("in no Slurm job, pod or gpumem run") only when both places it could show were read.
  if (tableOnly) unavailable.job = NOT_READ_FOR_TABLE;
  else if (job === null && !(cgroup.ok && environ.ok)) unavailable.job = `${cgroup.ok ? 'environment' : 'cgroup'} not readable: the job is unknown`;
  const boot = readBootTimeMs(options);
  const hz = options.clockTicksPerSec ?? 100;
  const startTimeMs = boot === null ? null : Math.round(boot + (stat.startTicks * 1000) / hz);
  if (startTimeMs === null) unavailable.startTimeMs = 'no btime in /proc/stat';
  return { uid, user, cmdline, exe, startTimeMs, startTicks: stat.startTicks, containerId, nspid, cudaEnv, job, unavailable };
}

const GONE_FIELDS = ['uid', 'user', 'ppid', 'cmdline', 'exe', 'startTimeMs', 'startTicks', 'state', 'containerId', 'nspid', 'cudaEnv'] as const;

/** Host facts for a pid that cannot be seen here: every fact null with one reason, `visible` false. */
export function invisibleFacts(reason: string): HostFacts {
  const unavailable: Record<string, string> = {};
  for (const f of GONE_FIELDS) unavailable[f] = reason;
  return { visible: false, uid: null, user: null, ppid: null, cmdline: null, exe: null, startTimeMs: null, startTicks: null, state: null, containerId: null, nspid: null, cudaEnv: null, unavailable };
}

export const NOT_HERE = 'pid not found in this PID namespace (gone, a host pid seen from a container, or hidden by hidepid)';

/**
 * Reads the host facts of `pid` from /proc (uid, user, ppid, cmdline, exe, start time, state, container,
 * NSpid, CUDA env). Never throws: a pid absent here gives `visible: false` and every fact null with the
 * reason; an unreadable file nulls only its facts.
 */
export function readHostFacts(pid: number, options: ProcOptions = {}): HostFacts {
  const raw = tryRead(() => readProcText(`${root(options)}/${pid}/stat`));
  if (!raw.ok && raw.reason !== 'process gone') return { ...invisibleFacts(raw.reason), visible: true };
  const stat = raw.ok ? parseProcStat(raw.value) : null;
  if (!stat) return invisibleFacts(NOT_HERE);
  return { visible: true, state: stat.state, ppid: stat.ppid, cpuTicks: stat.cpuTicks, ...readStableFacts(pid, stat, options) };
}

/**
 * readHostFacts for a pid read before: one stat file (state, parent, CPU ticks), and status, cmdline, exe,
 * cgroup and environ again only when the pid's start ticks differ from `previous` (another process under the
 * pid) or there is none. `previous` itself comes back when nothing in it changed, so a caller comparing by
 * reference sees "unchanged" without looking inside.
 */
export function refreshHostFacts(pid: number, previous: HostFacts | undefined, options: ProcOptions = {}): HostFacts {
  if (previous === undefined || !previous.visible || previous.startTicks === null) return readHostFacts(pid, options);
  const raw = tryRead(() => readProcText(`${root(options)}/${pid}/stat`));
  const stat = raw.ok ? parseProcStat(raw.value) : null;
  if (stat === null || stat.startTicks !== previous.startTicks) return readHostFacts(pid, options);
  if (previous.state === stat.state && previous.ppid === stat.ppid && previous.cpuTicks === stat.cpuTicks) return previous;
  return { ...previous, state: stat.state, ppid: stat.ppid, cpuTicks: stat.cpuTicks };
}
