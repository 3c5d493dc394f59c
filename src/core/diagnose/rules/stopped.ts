import { formatBytes } from '../../units.js';
import type { Finding, Rule } from '../types.js';
import { gpusOf, pidsOf, sumBytes } from './helpers.js';

/**
 * Stopped processes (state T: Ctrl-Z, SIGSTOP, a debugger) holding GPU memory. A stopped job keeps all its
 * memory and does nothing until resumed; the user chooses: resume it or end it. Both commands name exactly
 * the pids of the finding.
 */
export const stoppedProcesses: Rule = {
  id: 'stopped',
  description: 'stopped processes (state T) hold GPU memory while doing nothing',
  check(ctx) {
    const rows = ctx.processes.filter((v) => (v.state === 'T' || v.state === 't') && (v.usedBytes ?? 0) > 0);
    if (rows.length === 0) return [];
    const total = sumBytes(rows);
    const pids = pidsOf(rows);
    const finding: Finding = {
      id: this.id,
      severity: 'warning',
      title: `${rows.length} stopped process${rows.length === 1 ? ' holds' : 'es hold'} ${formatBytes(total)} (state T)`,
      evidence: {
        summary: rows.map((v) => `pid ${v.pid} state ${v.state} ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex ?? '?'}${v.command ? ` (${v.command.slice(0, 50)})` : ''}`).join('; '),
        pids,
        gpuIndexes: gpusOf(rows),
        bytes: total,
        details: { stoppedCount: rows.length },
      },
      fix: `a stopped process keeps its memory until it runs again: resume it with \`kill -CONT ${pids.join(' ')}\` (it was suspended with Ctrl-Z, SIGSTOP or a debugger), or end it to return ${formatBytes(total)}`,
      command: `gpumem kill ${pids.join(' ')}`,
    };
    return [finding];
  },
};
