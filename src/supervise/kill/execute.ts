/**
 * Carries out a kill plan. Right before signalling, GPU state is read again: a pid must still be in the
 * driver's list for the GPU it was selected on, its (pid, start ticks) must still match /proc, and it must
 * hold an NVIDIA device node open — otherwise it is skipped with the reason. Then TERM, grace, KILL, with one
 * outcome per pid.
 */
import { readNvidiaDeviceFds, readProcStat, type GpuSource } from '../../sources/index.js';
import { endProcesses, type EndResult } from '../terminate.js';
import type { KillRow } from './select.js';

export interface KillOutcome {
  pid: number;
  outcome: EndResult['outcome'] | 'refused';
  detail: string;
}

export interface KillOptions {
  /** Default "/proc". */
  procRoot?: string;
  /** Paths that count as NVIDIA device nodes start with this. Default "/dev/nvidia"; tests pass a temp path. */
  devicePrefix?: string;
}

/**
 * Why `pid` cannot be proven to be the GPU process the driver reports, or null when it can: it must have an
 * NVIDIA device node open here. Start time and "still in the driver's list" cannot catch a container's local
 * process whose pid happens to equal a host pid NVML reports — both checks read the same wrong /proc entry —
 * but such a process has no NVIDIA device open.
 */
export function gpuProofReason(pid: number, options: KillOptions = {}): string | null {
  const fds = readNvidiaDeviceFds(pid, options);
  const lead = `cannot prove pid ${pid} is the GPU process NVML reports`;
  const why = 'in a container NVML shows host pids';
  if (!fds.ok) return `${lead}: its open files cannot be read (${fds.reason}) — ${why}`;
  if (fds.paths.length === 0) return `${lead}: it has no NVIDIA device open here — ${why}`;
  return null;
}

/**
 * Ends the rows marked "end" (each pid once, whatever number of GPUs it was on), re-checking each pid right
 * before its signal: same start time, still on that GPU, NVIDIA device still open (gpuProofReason).
 */
export async function executeKill(rows: readonly KillRow[], source: GpuSource, graceMs: number, options: KillOptions = {}): Promise<KillOutcome[]> {
  const fresh = await source.readSample();
  const byPid = new Map<number, KillRow[]>();
  for (const r of rows) byPid.set(r.pid, [...(byPid.get(r.pid) ?? []), r]);
  const outcomes: KillOutcome[] = [];
  const targets: Array<{ pid: number; startTicks: number }> = [];
  for (const [pid, list] of byPid) {
    const refused = list.find((r) => r.action === 'refuse');
    if (refused) {
      outcomes.push({ pid, outcome: 'refused', detail: refused.reason });
      continue;
    }
    targets.push({ pid, startTicks: list[0]?.startTicks as number });
  }
  const stillOnGpu = (pid: number): string | null => {
    const list = byPid.get(pid) ?? [];
    const present = list.some((r) => fresh.processes.some((p) => p.pid === pid && p.gpuUuid === r.gpuUuid));
    return present ? null : 'no longer in the driver\'s process list for that GPU';
  };
  const results = await endProcesses(targets, {
    graceMs, procRoot: options.procRoot, beforeSignal: (t) => stillOnGpu(t.pid) ?? gpuProofReason(t.pid, options),
  });
  for (const r of results) outcomes.push({ pid: r.pid, outcome: r.outcome, detail: r.detail });
  return outcomes;
}

/** gpumem's pid and every ancestor up to pid 1: never ended. */
export function protectedPids(selfPid: number): Set<number> {
  const out = new Set<number>([1, selfPid]);
  let pid = selfPid;
  for (let i = 0; i < 4096; i++) {
    const entry = readProcStat(pid);
    if (!entry || entry.ppid <= 1) break;
    out.add(entry.ppid);
    pid = entry.ppid;
  }
  return out;
}
