import { formatBytes } from '../../units.js';
import type { Finding, Rule } from '../types.js';
import { gpusOf, pidsOf, sumBytes } from './helpers.js';

/** Zombie (defunct) processes still listed with GPU memory: exited, but their parent never reaped them. */
export const zombies: Rule = {
  id: 'zombies',
  description: 'zombie (defunct) processes still hold GPU memory because their parent does not reap them',
  check(ctx) {
    const rows = ctx.processes.filter((v) => v.state === 'Z' && v.usedBytes !== 0);
    if (rows.length === 0) return [];
    const total = sumBytes(rows);
    const parents = [...new Set(rows.map((v) => v.ppid).filter((p): p is number => p !== null))];
    const parentText = parents
      .map((p) => {
        const cmd = ctx.processes.find((v) => v.pid === p)?.command ?? ctx.ancestors[p]?.cmdline?.join(' ') ?? null;
        return `pid ${p}${cmd ? ` (${cmd.slice(0, 50)})` : ''}`;
      })
      .join(', ');
    const finding: Finding = {
      id: this.id,
      severity: 'warning',
      title: `${rows.length} zombie process${rows.length === 1 ? '' : 'es'} still listed with ${formatBytes(total)}`,
      evidence: {
        summary: `${rows.map((v) => `pid ${v.pid} state Z ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex ?? '?'}`).join('; ')}; not reaped by ${parentText || 'an unknown parent'}`,
        pids: pidsOf(rows),
        gpuIndexes: gpusOf(rows),
        bytes: total,
        details: { parents },
      },
      fix:
        `a zombie cannot be killed; its parent must reap it. End or restart ${parentText || 'the parent'} ` +
        `(the zombies are then reaped by init and the driver frees ${formatBytes(total)}); if a zombie's threads still run CUDA work, end the whole group`,
    };
    return [finding];
  },
};
