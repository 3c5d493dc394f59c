/**
 * The role of each GPU process in its job, from evidence only: the process tree (its parent, fork children
 * that share their parent's command line), Python multiprocessing's spawn/forkserver markers, the launcher
 * above it, the rank environment (RANK / LOCAL_RANK that torchrun, accelerate and deepspeed set) and the
 * companion. Never from how much memory a process holds: a DataLoader worker that builds CUDA tensors can
 * hold gigabytes, a small rank a few hundred MiB, so a byte count says nothing about either.
 */
import type { LiveCompanionProcess } from '../companion/live.js';
import type { CudaEnv, HostFacts } from '../types.js';
import { isKernelCommand, isMultiprocessingChild, isPythonCommand, launcherName } from './classify.js';
import type { ProcessRole } from './types.js';

/** What the role of one GPU row is decided from. */
export interface RoleSubject {
  pid: number;
  ppid: number | null;
  host: HostFacts | null;
}

/** The rank a process's environment names (RANK, else LOCAL_RANK), or null when it names none. */
function rankOf(env: CudaEnv | null | undefined): string | null {
  return env?.RANK ?? env?.LOCAL_RANK ?? null;
}

function sameArgv(a: readonly string[] | null | undefined, b: readonly string[] | null | undefined): boolean {
  return !!a && !!b && a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Roles of every row, keyed by pid. A worker is a multiprocessing child (spawn/forkserver markers in its
 * argv, or a fork child with its parent's argv) of a GPU process that is not a launcher and that does not
 * name a rank of its own (workers inherit their rank's environment, so the same RANK is no evidence). A rank
 * is a child of a known launcher, a process whose RANK differs from its parent's, one naming a RANK of a
 * WORLD_SIZE above 1 whose parent is no GPU process (ranks a shell or Slurm started), or a multiprocessing child
 * of a Python parent that holds no GPU memory (mp.spawn). A process the companion saw running a training
 * loop (step timing) is never a worker. Everything else is a job's main process.
 */
export function assignRoles(
  rows: readonly RoleSubject[],
  ancestors: Readonly<Record<number, HostFacts>>,
  companion: Readonly<Record<number, LiveCompanionProcess>> = {},
): Map<number, ProcessRole> {
  const gpuHosts = new Map<number, HostFacts | null>();
  for (const r of rows) if (!gpuHosts.has(r.pid) || gpuHosts.get(r.pid) === null) gpuHosts.set(r.pid, r.host);
  const roles = new Map<number, ProcessRole>();
  for (const r of rows) {
    if (roles.has(r.pid)) continue;
    roles.set(r.pid, roleOf(r, gpuHosts, ancestors, companion));
  }
  return roles;
}

function roleOf(
  r: RoleSubject,
  gpuHosts: ReadonlyMap<number, HostFacts | null>,
  ancestors: Readonly<Record<number, HostFacts>>,
  companion: Readonly<Record<number, LiveCompanionProcess>>,
): ProcessRole {
  const argv = r.host?.cmdline ?? null;
  if (r.ppid === null || r.ppid === r.pid) return isKernelCommand(argv) ? 'kernel' : 'main';
  const parentOnGpu = gpuHosts.has(r.ppid);
  const parent = gpuHosts.get(r.ppid) ?? ancestors[r.ppid] ?? null;
  const parentArgv = parent?.cmdline ?? null;
  if (launcherName(parentArgv)) return 'rank';
  const ownRank = rankOf(r.host?.cudaEnv);
  const namesOwnRank = ownRank !== null && ownRank !== rankOf(parent?.cudaEnv);
  const trainingLoop = (companion[r.pid]?.steps ?? null) !== null;
  const mpChild = isMultiprocessingChild(argv) || sameArgv(argv, parentArgv);
  // Before the kernel check: a notebook's fork DataLoader workers carry the kernel's own argv.
  if (mpChild && parentOnGpu && !namesOwnRank && !trainingLoop) return 'worker';
  if (isKernelCommand(argv)) return 'kernel';
  if (namesOwnRank) return 'rank';
  // Started by no launcher (a shell or Slurm's step daemon exported RANK before starting it, so its parent
  // names the same rank): a process of a job of more than one process that is not a GPU process's child.
  if (ownRank !== null && !parentOnGpu && Number(r.host?.cudaEnv?.WORLD_SIZE ?? '1') > 1) return 'rank';
  if (mpChild && !parentOnGpu && parent !== null && isPythonCommand(parentArgv, parent.exe)) return 'rank';
  return 'main';
}
