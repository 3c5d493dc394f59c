/**
 * Whether a pid the companion channel names is a process of the run. The channel's other end cannot be
 * asked who it is (Node does not expose the socket's peer credentials), and a message's `pid` is whatever
 * the sender wrote: "OOM in pid 1" must not be believed. A process of the run either descends from gpumem
 * (its child's tree, or an orphan re-parented to gpumem as a subreaper), or it carries the channel variable
 * gpumem put in the run's environment, which also finds a helper that left the tree with setsid.
 */
import { readEnviron, readProcStat } from '../../sources/index.js';

/** Parent links followed at most: deeper trees than this do not occur in training jobs. */
const MAX_DEPTH = 64;

/** True when `pid` descends from gpumem (this process) — a zombie still names its parent. */
function descendsFromUs(pid: number, procRoot: string): boolean {
  let at = pid;
  for (let i = 0; i < MAX_DEPTH && at > 1; i++) {
    const stat = readProcStat(at, { procRoot });
    if (stat === null) return false;
    if (stat.ppid === process.pid) return true;
    at = stat.ppid;
  }
  return false;
}

/**
 * True when `pid` is a process of the run whose environment holds `channelVariable`
 * ("GPUMEM_COMPANION_CHANNEL=unix:…"): a descendant of gpumem, or a process carrying the variable.
 */
export function isRunProcess(pid: number, channelVariable: string, procRoot = '/proc'): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid) return false;
  if (descendsFromUs(pid, procRoot)) return true;
  return readEnviron(pid, { procRoot })?.split('\0').includes(channelVariable) === true;
}
