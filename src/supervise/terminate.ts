/**
 * Ending processes safely: before every signal the (pid, start ticks) pair is re-read from /proc and
 * compared with what was selected, so a pid the kernel has meanwhile given to another process is never
 * signalled. TERM first, then KILL after a grace period; each pid gets an outcome with the reason.
 */
import { readProcStat } from '../sources/index.js';

export interface Target {
  pid: number;
  /** Start ticks as seen when the process was selected. */
  startTicks: number;
}

export interface EndResult {
  pid: number;
  outcome: 'exited' | 'terminated' | 'killed' | 'skipped' | 'failed';
  detail: string;
}

/** True while `target` is still the same, running (non-zombie) process. */
export function isSameProcess(target: Target, procRoot = '/proc'): boolean {
  const entry = readProcStat(target.pid, { procRoot });
  return entry !== null && entry.startTicks === target.startTicks && entry.state !== 'Z' && entry.state !== 'X';
}

/** Why a target may not be signalled now, or null when it may. */
export function refuseReason(target: Target, procRoot = '/proc'): string | null {
  const entry = readProcStat(target.pid, { procRoot });
  if (entry === null) return 'already gone';
  if (entry.startTicks !== target.startTicks) {
    return `pid ${target.pid} now belongs to another process (start time changed: ${target.startTicks} → ${entry.startTicks} ticks)`;
  }
  if (entry.state === 'Z' || entry.state === 'X') return 'already exited (zombie waiting for its parent)';
  return null;
}

function signal(pid: number, sig: NodeJS.Signals): string | null {
  try {
    process.kill(pid, sig);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ESRCH' ? 'gone' : code === 'EPERM' ? 'not permitted (another user\'s process)' : String(code);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Ends every target: TERM, wait up to `graceMs` for all of them, then KILL the ones left and wait briefly
 * for the kernel to reap them. `beforeSignal` may veto a pid (e.g. kill's "still on that GPU" check) by
 * returning a reason. Never throws; every target gets exactly one result.
 */
export async function endProcesses(
  targets: readonly Target[],
  options: { graceMs: number; pollMs?: number; procRoot?: string; beforeSignal?: (t: Target) => string | null },
): Promise<EndResult[]> {
  const pollMs = options.pollMs ?? 50;
  const results = new Map<number, EndResult>();
  const pending: Target[] = [];
  for (const t of targets) {
    const refused = refuseReason(t, options.procRoot) ?? options.beforeSignal?.(t) ?? null;
    if (refused) {
      results.set(t.pid, { pid: t.pid, outcome: refused === 'already gone' ? 'exited' : 'skipped', detail: refused });
      continue;
    }
    const failed = signal(t.pid, 'SIGTERM');
    if (failed && failed !== 'gone') results.set(t.pid, { pid: t.pid, outcome: 'failed', detail: `SIGTERM: ${failed}` });
    else pending.push(t);
  }
  const deadline = Date.now() + options.graceMs;
  let alive = pending;
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(pollMs);
    alive = alive.filter((t) => isSameProcess(t, options.procRoot));
  }
  for (const t of pending) {
    if (alive.includes(t)) continue;
    // Gone during the grace period; its pid may already be another process's, which was never signalled.
    const reused = readProcStat(t.pid, { procRoot: options.procRoot })?.startTicks;
    const detail = reused !== undefined && reused !== t.startTicks
      ? `ended after SIGTERM; pid ${t.pid} already belongs to another process, which was left alone`
      : 'ended after SIGTERM';
    results.set(t.pid, { pid: t.pid, outcome: 'terminated', detail });
  }
  for (const t of alive) {
    // Re-check right before KILL: the grace period is long enough for a pid to be reused.
    const refused = refuseReason(t, options.procRoot);
    if (refused) {
      results.set(t.pid, { pid: t.pid, outcome: 'terminated', detail: `ended after SIGTERM (${refused})` });
      continue;
    }
    const failed = signal(t.pid, 'SIGKILL');
    results.set(t.pid, failed && failed !== 'gone'
      ? { pid: t.pid, outcome: 'failed', detail: `SIGKILL: ${failed}` }
      : { pid: t.pid, outcome: 'killed', detail: `ignored SIGTERM for ${options.graceMs} ms; sent SIGKILL` });
  }
  const killDeadline = Date.now() + 2000;
  while (alive.some((t) => isSameProcess(t, options.procRoot)) && Date.now() < killDeadline) await sleep(pollMs);
  return targets.map((t) => results.get(t.pid) as EndResult);
}
