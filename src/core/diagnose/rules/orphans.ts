import { formatBytes, formatDuration } from '../../units.js';
import { isMultiprocessingChild, isPythonCommand, isReaperCommand, isShell, launcherName } from '../classify.js';
import type { Finding, ProcessView, Rule, RuleContext } from '../types.js';
import { gpusOf, pidsOf, sumBytes } from './helpers.js';

/**
 * Why a process counts as orphaned: its parent is pid 1 or a process reaper (its real parent is gone), or it
 * is a multiprocessing child whose parent is no longer a Python process. Null when it is not.
 */
export function orphanReason(v: ProcessView, ctx: RuleContext): string | null {
  if (!v.visible || v.ppid === null || v.state === 'Z') return null;
  const parent = ctx.ancestors[v.ppid];
  if (v.ppid === 1) {
    // In a container pid 1 may be the job itself (docker run python launch.py): its children are not orphans.
    const init = ctx.ancestors[1]?.cmdline ?? null;
    if (init && !isReaperCommand(init) && (isPythonCommand(init) || launcherName(init) !== null || isShell(init))) return null;
    return 'parent is pid 1 (its own parent exited)';
  }
  if (parent?.cmdline && isReaperCommand(parent.cmdline)) return `re-parented to ${parent.cmdline[0]} (pid ${v.ppid})`;
  if (isMultiprocessingChild(v.row.host?.cmdline ?? null) && parent?.cmdline && !isPythonCommand(parent.cmdline, parent.exe)) {
    return `a multiprocessing child whose parent pid ${v.ppid} is no longer its Python parent`;
  }
  return null;
}

/**
 * Whether a process ran during the window: on the GPU (per-process or idle-device utilization above 0) or on
 * the CPU (its CPU time grew). "idle" needs both to be known and zero; anything unmeasured is "unknown".
 */
export function activityOf(v: ProcessView): 'active' | 'idle' | 'unknown' {
  const cpu = v.cpuTicksInWindow ?? null;
  if ((v.util !== null && v.util.maxPct > 0) || (cpu !== null && cpu > 0)) return 'active';
  return v.util !== null && cpu === 0 ? 'idle' : 'unknown';
}

/**
 * `pid` and the GPU processes below it (its DataLoader workers, its ranks' workers), from the rows' parents:
 * what ending it ends. Used so that no command ever names part of a job that is running.
 */
export function subtreeOf(ctx: RuleContext, pid: number): ProcessView[] {
  const { children, byPid } = indexOf(ctx.processes);
  const seen = new Set<number>([pid]);
  const out = [...(byPid.get(pid) ?? [])];
  for (let i = 0; i < out.length; i++) {
    for (const c of children.get((out[i] as ProcessView).pid) ?? []) {
      if (seen.has(c.pid)) continue;
      seen.add(c.pid);
      out.push(c);
    }
  }
  return out;
}

interface RowIndex {
  /** The rows under each parent pid. */
  children: Map<number, ProcessView[]>;
  /** The rows of each pid (one per GPU it uses). */
  byPid: Map<number, ProcessView[]>;
}

/**
 * Built once per list of rows: rules ask for the subtree of every row, and scanning the rows per question made a
 * window of 512 rows cost 512 × 512 steps.
 */
const INDEXES = new WeakMap<readonly ProcessView[], RowIndex>();
function indexOf(processes: readonly ProcessView[]): RowIndex {
  const cached = INDEXES.get(processes);
  if (cached) return cached;
  const add = (map: Map<number, ProcessView[]>, key: number, v: ProcessView): void => {
    const list = map.get(key);
    if (list) list.push(v);
    else map.set(key, [v]);
  };
  const index: RowIndex = { children: new Map(), byPid: new Map() };
  for (const v of processes) {
    add(index.byPid, v.pid, v);
    if (v.ppid !== null && v.ppid !== v.pid) add(index.children, v.ppid, v);
  }
  INDEXES.set(processes, index);
  return index;
}

/** The activity of a whole subtree: active when any member ran, idle only when every member is known idle. */
export function subtreeActivity(ctx: RuleContext, pid: number): 'active' | 'idle' | 'unknown' {
  const kinds = subtreeOf(ctx, pid).map(activityOf);
  return kinds.includes('active') ? 'active' : kinds.every((k) => k === 'idle') ? 'idle' : 'unknown';
}

const stopped = (v: ProcessView): boolean => v.state === 'T' || v.state === 't';

/**
 * Processes whose launcher is gone and that did nothing during the window: what a user means by an orphan.
 * A detached job that still computes (started with nohup or setsid) is only mentioned; one whose activity
 * could not be measured is reported as such; stopped processes belong to the `stopped` rule. Suggested
 * commands name exactly the pids of the finding.
 */
export const orphans: Rule = {
  id: 'orphans',
  description: 'processes whose launcher is gone and that did not run on the CPU or GPU during the window still hold GPU memory',
  check(ctx) {
    const rows = ctx.processes.filter((v) => (v.usedBytes ?? 0) > 0 && v.role !== 'kernel' && !stopped(v) && orphanReason(v, ctx) !== null);
    if (rows.length === 0) return [];
    const findings: Finding[] = [];
    const groups = { idle: rows.filter((v) => activityOf(v) === 'idle'), unknown: rows.filter((v) => activityOf(v) === 'unknown'), active: rows.filter((v) => activityOf(v) === 'active') };
    for (const kind of ['idle', 'unknown', 'active'] as const) {
      const group = groups[kind];
      if (group.length === 0) continue;
      const total = sumBytes(group);
      const pids = pidsOf(group);
      const s = group.length === 1 ? '' : 'es';
      const title = {
        idle: `${group.length} orphaned process${group.length === 1 ? ' holds' : 'es hold'} ${formatBytes(total)} (launcher gone, no CPU or GPU activity in ${formatDuration(ctx.windowMs)})`,
        unknown: `${group.length} detached process${s} (launcher gone) hold${group.length === 1 ? 's' : ''} ${formatBytes(total)}; whether ${group.length === 1 ? 'it runs' : 'they run'} is not known from this window`,
        active: `${group.length} detached process${s} (launcher gone) still computing with ${formatBytes(total)}`,
      }[kind];
      const fix = {
        idle: `these are leftovers of a run that ended; ending them returns ${formatBytes(total)}`,
        unknown: `look over a longer window (gpumem doctor --window 10): a leftover shows no CPU or GPU activity; if ${group.length === 1 ? 'it is one' : 'they are leftovers'}, \`gpumem kill ${pids.join(' ')}\` returns ${formatBytes(total)}`,
        active: `a job started with nohup or setsid keeps running when its shell goes: nothing to do unless you meant to stop it (then \`gpumem kill ${pids.join(' ')}\`)`,
      }[kind];
      findings.push({
        id: this.id,
        severity: kind === 'idle' ? 'warning' : 'info',
        title,
        evidence: {
          summary: group
            .map((v) => `pid ${v.pid} ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex ?? '?'}: ${orphanReason(v, ctx)}${v.ageMs !== null ? `, age ${formatDuration(v.ageMs)}` : ''}${activityText(v)}`)
            .join('; '),
          pids,
          gpuIndexes: gpusOf(group),
          bytes: total,
          details: { parents: group.map((v) => v.ppid ?? -1), activity: kind },
        },
        fix,
        ...(kind === 'idle' ? { command: `gpumem kill ${pids.join(' ')}` } : {}),
      });
    }
    return findings;
  },
};

function activityText(v: ProcessView): string {
  const gpu = v.util === null ? 'GPU use unknown' : v.util.maxPct > 0 ? `GPU up to ${v.util.maxPct}%` : 'GPU idle';
  const cpu = v.cpuTicksInWindow === null || v.cpuTicksInWindow === undefined ? 'CPU use unknown' : v.cpuTicksInWindow > 0 ? `${v.cpuTicksInWindow} CPU ticks` : 'CPU idle';
  return `, ${gpu}, ${cpu}`;
}
