/**
 * Which GPU processes `gpumem kill` would end, and which it refuses and why. Selection is pure over an
 * enriched sample: every process on the GPUs becomes a row when it matches all the given filters; a row is
 * refused (never signalled) for pid 1, gpumem itself or its ancestors, another user's process without root
 * and --all-users, a pid not visible in our namespace, one whose start time is unknown (no reuse check), or
 * one the caller cannot prove is a GPU user here (no NVIDIA device open: a container's look-alike pid).
 * A running job is one unit (jobs.ts): --idle matches only a job that is idle as a whole, and filters that
 * match part of a live job refuse that part.
 */
import { GpumemError } from '../../core/errors.js';
import type { GpuProcess, Sample } from '../../core/types.js';
import type { KillJob } from './jobs.js';

export interface KillCriteria {
  pids: number[];
  /** GPU indexes or UUIDs. */
  gpus: string[];
  orphans: boolean;
  zombieHolders: boolean;
  user: string | null;
  olderThanMs: number | null;
  idle: boolean;
}

export interface Caller {
  uid: number;
  /** gpumem's own pid and its ancestors up to pid 1. */
  protectedPids: Set<number>;
  allUsers: boolean;
  nowMs: number;
  /** Why `pid` cannot be proven to be the GPU process the driver reports, or null (see gpuProofReason). */
  gpuProof: (pid: number) => string | null;
  /**
   * True when the process ran on the CPU during the check window (or that could not be read). For --orphans
   * such a process is a live job whose launcher went away (nohup, setsid), not an orphan; for --idle and the
   * live-job rule it makes its whole job live. Absent: not measured, so no job is proven idle.
   */
  activeInWindow?: (pid: number) => boolean;
  /** The job of each GPU pid (jobs.ts). Absent: each process counts as a job of its own. */
  jobs?: ReadonlyMap<number, KillJob>;
}

export interface KillRow {
  pid: number;
  startTicks: number | null;
  gpuUuid: string | null;
  gpuIndex: number | null;
  usedBytes: number | null;
  user: string | null;
  ageMs: number | null;
  cmdline: string;
  action: 'end' | 'refuse';
  reason: string;
}

/** True when no filter or pid was given: kill refuses to guess. */
export function isEmptyCriteria(c: KillCriteria): boolean {
  return c.pids.length === 0 && c.gpus.length === 0 && !c.orphans && !c.zombieHolders && c.user === null && c.olderThanMs === null && !c.idle;
}

/** Reads "90", "45s", "30m", "2h", "1d" (a number alone is seconds) as milliseconds. */
export function parseDurationMs(text: string, what: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text);
  if (!m) throw new GpumemError('BAD_OPTION_VALUE', `${what}: cannot read "${text}" as a duration`, { hint: 'write e.g. 45s, 30m, 2h or 1d' });
  const factor = { ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 }[(m[2] ?? 's').toLowerCase() as 'ms'];
  return Math.round(Number(m[1]) * factor);
}

function matches(p: GpuProcess, c: KillCriteria, sample: Sample, nowMs: number): boolean {
  const h = p.host;
  if (c.pids.length > 0 && !c.pids.includes(p.pid)) return false;
  if (c.gpus.length > 0) {
    const device = sample.devices.find((d) => d.uuid === p.gpuUuid) ?? sample.devices.find((d) => d.index === p.gpuIndex);
    const keys = [String(device?.index ?? p.gpuIndex), device?.uuid?.toLowerCase() ?? ''];
    if (!c.gpus.some((g) => keys.includes(g.toLowerCase()))) return false;
  }
  if (c.orphans && h?.ppid !== 1) return false;
  if (c.zombieHolders && h?.state !== 'Z' && h?.state !== 'T' && h?.state !== 't') return false;
  if (c.user !== null && h?.user !== c.user) return false;
  if (c.olderThanMs !== null && (h?.startTimeMs == null || nowMs - h.startTimeMs < c.olderThanMs)) return false;
  return true;
}

/** The job of `p`: from the caller's grouping, else the process alone. */
function jobOf(p: GpuProcess, caller: Caller): KillJob {
  return caller.jobs?.get(p.pid) ?? { rootPid: p.pid, members: [p.pid], gpuPids: [p.pid] };
}

/**
 * Whether a job is live: any of its GPU processes is busy or has no per-process figure, or any member
 * (workers included) ran on the CPU in the window, or no window was measured. Idle is the whole job's
 * verdict: 0 % SM of one process says nothing about a DataLoader worker's parent.
 */
function jobLive(job: KillJob, sample: Sample, caller: Caller): boolean {
  if (!caller.activeInWindow) return true;
  if (sample.processes.some((q) => job.gpuPids.includes(q.pid) && q.smUtilPct !== 0)) return true;
  return job.members.some((pid) => caller.activeInWindow?.(pid) === true);
}

function refusal(p: GpuProcess, caller: Caller): string | null {
  const h = p.host;
  if (p.pid === 1) return 'pid 1 is never ended';
  if (caller.protectedPids.has(p.pid)) return 'gpumem itself or one of its ancestors';
  if (!h || !h.visible) return 'not visible in this PID namespace (host pid of another container?)';
  // A zombie has already exited: there is nothing to signal, and its fds are gone, so the device check below
  // would give a misleading reason. Its parent has to reap it.
  if (h.state === 'Z') return `a zombie: it has already exited and holds nothing itself; its parent (pid ${h.ppid ?? '?'}) has not reaped it — end or fix the parent`;
  if (h.startTicks === null) return `start time unreadable (${h.unavailable.startTicks ?? 'unknown'}): pid reuse cannot be ruled out`;
  if (h.uid !== caller.uid) {
    if (caller.uid !== 0) return `belongs to ${h.user ?? `uid ${h.uid}`}; you can only end your own processes`;
    if (!caller.allUsers) return `belongs to ${h.user ?? `uid ${h.uid}`}; add --all-users to end other users' processes`;
  }
  return caller.gpuProof(p.pid);
}

/**
 * The GPUs named by `--gpu` that the sample does not have (by index or UUID, case-insensitive): selecting
 * on a GPU the machine lacks is a mistake to report, not an empty match.
 */
export function unknownGpus(sample: Sample, gpus: readonly string[]): string[] {
  return gpus.filter((g) => !sample.devices.some((d) => String(d.index) === g || d.uuid?.toLowerCase() === g.toLowerCase()));
}

/**
 * Why selecting `p` by filters would end part of a running job, or null: the filters matched some of the
 * job's GPU processes but not all, and the job is live. Named pids are the user's explicit choice.
 */
function piecemeal(p: GpuProcess, matchedPids: ReadonlySet<number>, sample: Sample, caller: Caller): string | null {
  const job = jobOf(p, caller);
  const rest = job.gpuPids.filter((pid) => !matchedPids.has(pid));
  if (rest.length === 0 || !jobLive(job, sample, caller)) return null;
  return `part of the running job of pid ${job.rootPid} (GPU pids ${job.gpuPids.join(', ')}); ${rest.join(', ')} ${rest.length === 1 ? 'does' : 'do'} not match, ` +
    'and a running job is never ended in part — name its pids to end them';
}

/**
 * Builds the rows: one per (pid, GPU) that matches. Pids given explicitly but not on any GPU are refused
 * rows of their own, so the user hears about them.
 */
export function selectTargets(sample: Sample, c: KillCriteria, caller: Caller): KillRow[] {
  const rows: KillRow[] = [];
  const matched = sample.processes.filter((p) => {
    if (!matches(p, c, sample, caller.nowMs)) return false;
    if (c.orphans && (caller.activeInWindow?.(p.pid) === true || (p.smUtilPct ?? 0) > 0)) return false;
    return !c.idle || !jobLive(jobOf(p, caller), sample, caller);
  });
  const matchedPids = new Set(matched.map((p) => p.pid));
  for (const p of matched) {
    const refused = refusal(p, caller) ?? (c.pids.length === 0 ? piecemeal(p, matchedPids, sample, caller) : null);
    rows.push({
      pid: p.pid, startTicks: p.host?.startTicks ?? null, gpuUuid: p.gpuUuid,
      gpuIndex: p.gpuIndex ?? sample.devices.find((d) => d.uuid === p.gpuUuid)?.index ?? null,
      usedBytes: p.usedBytes, user: p.host?.user ?? null,
      ageMs: p.host?.startTimeMs == null ? null : caller.nowMs - p.host.startTimeMs,
      cmdline: p.host?.cmdline?.join(' ') ?? p.name ?? '?',
      action: refused ? 'refuse' : 'end', reason: refused ?? 'matches',
    });
  }
  for (const pid of c.pids) {
    if (!sample.processes.some((p) => p.pid === pid)) {
      rows.push({ pid, startTicks: null, gpuUuid: null, gpuIndex: null, usedBytes: null, user: null, ageMs: null, cmdline: '?', action: 'refuse', reason: 'not a GPU process (not in the driver\'s process list)' });
    }
  }
  return rows;
}
