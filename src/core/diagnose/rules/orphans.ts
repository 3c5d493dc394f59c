import { formatBytes, formatDuration } from '../../units.js';
import { isMultiprocessingChild, isPythonCommand, isReaperCommand, isShell, launcherName } from '../classify.js';
import { THRESHOLDS } from '../thresholds.js';
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

/** Processes whose parent is gone, still holding GPU memory. */
export const orphans: Rule = {
  id: 'orphans',
  description: 'processes whose parent is gone (re-parented to init or a subreaper) still hold GPU memory',
  check(ctx) {
    const rows = ctx.processes.filter((v) => (v.usedBytes ?? 0) > 0 && v.role !== 'kernel' && orphanReason(v, ctx) !== null);
    if (rows.length === 0) return [];
    const busy = (v: ProcessView): boolean => v.util !== null && v.util.meanPct >= THRESHOLDS.activeUtilPct;
    const findings: Finding[] = [];
    const idle = rows.filter((v) => !busy(v));
    const active = rows.filter(busy);
    for (const [group, severity] of [[idle, 'warning'], [active, 'info']] as const) {
      if (group.length === 0) continue;
      const total = sumBytes(group);
      findings.push({
        id: this.id,
        severity,
        title:
          severity === 'warning'
            ? `${group.length} orphaned process${group.length === 1 ? ' holds' : 'es hold'} ${formatBytes(total)}`
            : `${group.length} detached process${group.length === 1 ? '' : 'es'} (parent gone) still computing with ${formatBytes(total)}`,
        evidence: {
          summary: group
            .map((v) => `pid ${v.pid} ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex ?? '?'}: ${orphanReason(v, ctx)}${v.ageMs !== null ? `, age ${formatDuration(v.ageMs)}` : ''}`)
            .join('; '),
          pids: pidsOf(group),
          gpuIndexes: gpusOf(group),
          bytes: total,
          details: { parents: group.map((v) => v.ppid ?? -1) },
        },
        fix:
          severity === 'warning'
            ? `these are leftovers of a run that ended; ending them returns ${formatBytes(total)}`
            : `if this is a run started with nohup/setsid, nothing to do; if its launcher died, end it to return ${formatBytes(total)}`,
        command: `gpumem kill --orphans`,
      });
    }
    return findings;
  },
};
