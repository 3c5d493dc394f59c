import { formatBytes } from '../../units.js';
import type { Rule } from '../types.js';
import { gpusOf, pidsOf, sumBytes } from './helpers.js';

/** GPU processes whose pid does not resolve in this PID namespace (another container, or the host seen from one). */
export const hiddenProcesses: Rule = {
  id: 'hidden-processes',
  description: 'GPU processes are not visible in this PID namespace (other containers)',
  check(ctx) {
    const rows = ctx.processes.filter((v) => !v.visible && !v.gone);
    if (rows.length === 0) return [];
    const total = sumBytes(rows);
    const unsure = ctx.pidNamespace !== 'container';
    return [
      {
        id: this.id,
        severity: 'info',
        title: `${rows.length} GPU process${rows.length === 1 ? ' is' : 'es are'} not visible here (${formatBytes(total)})`,
        evidence: {
          summary: `${rows.map((v) => `pid ${v.pid} ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex ?? '?'}`).join('; ')}; ` +
            (unsure ? 'not in /proc: another PID namespace, or exited' : 'NVML reports host pids, which this container cannot see'),
          pids: pidsOf(rows),
          gpuIndexes: gpusOf(rows),
          bytes: total,
          details: { pidNamespace: ctx.pidNamespace },
        },
        fix:
          'to see who they are, run gpumem on the host, or start this container with --pid=host (docker run --pid=host …; ' +
          'Kubernetes: hostPID: true); gpumem never kills a process it cannot see',
      },
    ];
  },
};
