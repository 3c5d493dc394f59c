import { formatBytes } from '../../units.js';
import type { ProcessView, Rule, RuleContext } from '../types.js';
import { gpusOf, pidsOf, sumBytes } from './helpers.js';

/**
 * True when a row's pid no longer exists: /proc cannot find it, and either gpumem sees the host's pids (so a
 * missing pid is a gone pid) or the same pid was visible earlier in the window.
 */
export function isStale(v: ProcessView, ctx: RuleContext): boolean {
  if (v.visible) return false;
  if (ctx.pidNamespace === 'host') return true;
  return ctx.samples.some((s) => s.processes.some((p) => p.pid === v.pid && p.host?.visible === true));
}

/** Memory the driver still lists for pids that no longer exist. */
export const stalePids: Rule = {
  id: 'stale-pids',
  description: 'the driver lists memory for pids that no longer exist',
  check(ctx) {
    const rows = ctx.processes.filter((v) => isStale(v, ctx));
    if (rows.length === 0) return [];
    const total = sumBytes(rows);
    return [
      {
        id: this.id,
        severity: 'warning',
        title: `${formatBytes(total)} held by ${rows.length} pid${rows.length === 1 ? '' : 's'} that no longer exist${rows.length === 1 ? 's' : ''}`,
        evidence: {
          summary: `${rows.map((v) => `pid ${v.pid} ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex ?? '?'}`).join('; ')}; /proc has no such process`,
          pids: pidsOf(rows),
          gpuIndexes: gpusOf(rows),
          bytes: total,
          details: { pidNamespace: ctx.pidNamespace },
        },
        fix:
          `the driver frees this once the last file descriptor on /dev/nvidia* closes; something still holds one: ` +
          `find it with \`sudo fuser -v /dev/nvidia*\` (often a surviving child of the dead process) and end it`,
        command: 'gpumem kill --orphans',
      },
    ];
  },
};
