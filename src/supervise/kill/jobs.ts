/**
 * Jobs, as `gpumem kill` sees them: a running job is one unit — the process tree from its launcher (or its
 * topmost GPU-holding process) down, DataLoader workers included whether or not they hold GPU memory. 0 % SM
 * is normal for a worker, and for a rank waiting on its input, so "idle" is a verdict on the whole job, and a
 * running job is never ended piecemeal (docs/guarantees.md, "Live jobs").
 */
import { buildContext, isPythonCommand, launcherName } from '../../core/diagnose/index.js';
import type { HostFacts, Sample } from '../../core/types.js';
import { descendantsOf, readHostFacts, readProcStat, readProcTable, type ProcStat } from '../../sources/index.js';

export interface KillJob {
  /** The launcher (torchrun, accelerate, deepspeed, an mp.spawn parent) or the job's topmost GPU process. */
  rootPid: number;
  /** Every pid of the job in /proc: the root and all its descendants, on a GPU or not. */
  members: number[];
  /** The job's pids that the driver lists on a GPU. */
  gpuPids: number[];
}

/**
 * Groups the sample's GPU processes into jobs, keyed by each GPU pid. Pure over its inputs: `ancestors` are
 * the /proc facts of GPU processes' parents that hold no GPU memory, `table` the process table. The root is
 * found from roles (roles.ts): a GPU process's topmost GPU-holding ancestor, and above that its launcher when
 * that process is a rank. A notebook kernel or a main process is a job of its own, so two kernels of one
 * Jupyter server are two jobs.
 */
export function groupJobs(sample: Sample, ancestors: Readonly<Record<number, HostFacts>>, table: ReadonlyMap<number, ProcStat>): Map<number, KillJob> {
  const ctx = buildContext({ samples: [sample], viewer: null, pidNamespace: 'host', ancestors });
  const views = new Map(ctx.processes.map((v) => [v.pid, v]));
  const rootOf = (pid: number): number => {
    let top = pid;
    // One step per process at most: a cycle in bad /proc data ends the walk.
    for (let steps = 0; steps <= views.size; steps++) {
      const ppid = views.get(top)?.ppid ?? null;
      if (ppid === null || ppid === top || !views.has(ppid)) break;
      top = ppid;
    }
    const view = views.get(top);
    // A rank's job starts at the launcher above it (torchrun, an mp.spawn parent); a step daemon or shell that
    // merely started it (srun, a pod) is not part of the job: those ranks are joined by mergeRankJobs.
    const parent = view?.role === 'rank' && view.ppid !== null && view.ppid > 1 ? ancestors[view.ppid] : undefined;
    return parent && (launcherName(parent.cmdline) !== null || isPythonCommand(parent.cmdline, parent.exe)) ? (view?.ppid as number) : top;
  };
  const byRoot = new Map<number, KillJob>();
  const out = new Map<number, KillJob>();
  for (const pid of views.keys()) {
    const root = rootOf(pid);
    let job = byRoot.get(root);
    if (!job) {
      const members = [...new Set([root, ...descendantsOf(table, root)])];
      job = { rootPid: root, members, gpuPids: [] };
      byRoot.set(root, job);
    }
    if (!job.gpuPids.includes(pid)) job.gpuPids.push(pid);
    if (!job.members.includes(pid)) job.members.push(pid);
    out.set(pid, job);
  }
  mergeRankJobs(sample, byRoot, out);
  for (const job of byRoot.values()) job.gpuPids.sort((a, b) => a - b);
  return out;
}

/**
 * Ranks that share no launcher in this tree (srun starts each under its own slurmstepd; a shell or a pod starts
 * one per container) are still one job. Their trees are joined when their roots are ranks of the same job: the
 * same Slurm job, pod or `gpumem run`, else the same user and WORLD_SIZE. Joining too much is the safe side: an
 * idle job is still selected whole, and a busy member keeps everything joined to it alive.
 */
function mergeRankJobs(sample: Sample, byRoot: Map<number, KillJob>, out: Map<number, KillJob>): void {
  const host = new Map(sample.processes.map((p) => [p.pid, p.host]));
  const keyOf = (pid: number): string | null => {
    const h = host.get(pid);
    const world = Number(h?.cudaEnv?.WORLD_SIZE);
    if (!h || h.cudaEnv?.RANK === undefined || !(world > 1)) return null;
    const j = h.job;
    if (j?.slurmJobId) return `slurm ${j.slurmJobId}`;
    if (j?.podUid) return `pod ${j.podUid}`;
    if (j?.runMark) return `run ${j.runMark}`;
    return `uid ${h.uid ?? '?'} world ${world}`;
  };
  const byKey = new Map<string, KillJob>();
  for (const [root, job] of [...byRoot]) {
    const key = job.gpuPids.map(keyOf).find((k) => k !== null) ?? keyOf(root);
    if (!key) continue;
    const into = byKey.get(key);
    if (!into) {
      byKey.set(key, job);
      continue;
    }
    for (const pid of job.members) if (!into.members.includes(pid)) into.members.push(pid);
    for (const pid of job.gpuPids) if (!into.gpuPids.includes(pid)) into.gpuPids.push(pid);
    for (const pid of job.gpuPids) out.set(pid, into);
    byRoot.delete(root);
  }
}

/** Reads /proc for `groupJobs`: the process table and the facts of GPU processes' parents. */
export function readJobs(sample: Sample): Map<number, KillJob> {
  const gpuPids = new Set(sample.processes.map((p) => p.pid));
  const ancestors: Record<number, HostFacts> = {};
  for (const p of sample.processes) {
    const ppid = p.host?.ppid;
    if (ppid === null || ppid === undefined || ppid <= 1 || gpuPids.has(ppid) || ancestors[ppid]) continue;
    const facts = readHostFacts(ppid);
    if (facts.visible && facts.cmdline) ancestors[ppid] = facts;
  }
  return groupJobs(sample, ancestors, readProcTable());
}

/**
 * Which of `pids` ran on the CPU during `windowMs`: CPU time (user + system ticks) read twice. A pid whose
 * ticks cannot be read either time, or that became another process (start time changed), counts as active:
 * "idle" must be proven, never assumed.
 */
export async function cpuActivity(pids: Iterable<number>, windowMs: number): Promise<(pid: number) => boolean> {
  const read = (pid: number) => {
    const s = readProcStat(pid);
    return s && s.cpuTicks !== null ? { ticks: s.cpuTicks, start: s.startTicks } : null;
  };
  const list = [...new Set(pids)];
  const before = new Map(list.map((pid) => [pid, read(pid)]));
  if (list.length > 0) await new Promise((resolve) => setTimeout(resolve, windowMs));
  const active = new Set<number>();
  for (const pid of list) {
    const a = before.get(pid) ?? null;
    const b = read(pid);
    if (a === null || b === null || a.ticks !== b.ticks || a.start !== b.start) active.add(pid);
  }
  return (pid) => active.has(pid);
}
