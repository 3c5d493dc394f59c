import { formatBytes } from '../../units.js';
import type { Rule } from '../types.js';
import { gpusOf, pidsOf, sumBytes } from './helpers.js';

/** Memory the driver still lists for pids that no longer exist. */
export const stalePids: Rule = {
  id: 'stale-pids',
  description: 'the driver lists memory for pids that no longer exist',
  check(ctx) {
    const rows = ctx.processes.filter((v) => v.gone);
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
          `nothing is left to end under that pid; the driver frees this once the last file descriptor on /dev/nvidia* closes; something still holds one: ` +
          `find it with \`sudo fuser -v /dev/nvidia*\` (often a surviving child of the dead process) and end it`,
      },
    ];
  },
};
