import { formatBytes } from '../../units.js';
import type { Finding, ProcessView, Rule } from '../types.js';
import { freestGpu, pidsOf, sumBytes } from './helpers.js';

/**
 * Other users' processes on a GPU you use. When gpumem does not know who "you" are (a recording), every GPU
 * shared by more than one user is reported instead.
 */
export const otherUsers: Rule = {
  id: 'other-users',
  description: "other users' processes hold memory on a GPU you are using (or, for a recording, on a shared GPU)",
  check(ctx) {
    const findings: Finding[] = [];
    for (const acc of ctx.accounting) {
      const rows = ctx.processes.filter((v) => v.gpuIndex === acc.gpuIndex && v.user !== null);
      const users = [...new Set(rows.map((v) => v.user as string))].sort();
      if (users.length < 2 && ctx.viewer === null) continue;
      let mine: ProcessView[];
      let others: ProcessView[];
      if (ctx.viewer) {
        const viewer = ctx.viewer;
        const isMine = (v: ProcessView): boolean => v.uid === viewer.uid;
        mine = rows.filter(isMine);
        others = rows.filter((v) => !isMine(v));
        if (mine.length === 0 || others.length === 0) continue;
      } else {
        // Without a viewer, the user holding the most memory on the GPU is the one the others share it with.
        const byUser = users.map((u) => ({ u, bytes: sumBytes(rows.filter((v) => v.user === u)) })).sort((a, b) => b.bytes - a.bytes);
        const top = byUser[0]?.u;
        mine = rows.filter((v) => v.user === top);
        others = rows.filter((v) => v.user !== top);
      }
      const otherBytes = sumBytes(others);
      const perUser = [...new Set(others.map((v) => v.user as string))]
        .map((u) => `${u} ${formatBytes(sumBytes(others.filter((v) => v.user === u)))} (pid ${pidsOf(others.filter((v) => v.user === u)).join(', ')})`)
        .join('; ');
      const alternative = freestGpu(ctx, [acc.gpuIndex]);
      const subject = ctx.viewer ? 'you' : (mine[0]?.user ?? 'the main user');
      findings.push({
        id: this.id,
        severity: ctx.viewer ? 'warning' : 'info',
        title: `GPU ${acc.gpuIndex} is shared: other users hold ${formatBytes(otherBytes)} beside ${subject}`,
        evidence: {
          summary: `${perUser}; ${subject} ${formatBytes(sumBytes(mine))}; free ${formatBytes(acc.freeBytes)} of ${formatBytes(acc.totalBytes)}`,
          pids: pidsOf(others),
          gpuIndexes: [acc.gpuIndex],
          bytes: otherBytes,
          details: { otherUsers: [...new Set(others.map((v) => v.user as string))].join(','), freeBytes: acc.freeBytes },
        },
        fix:
          alternative && alternative.freeBytes !== null
            ? `agree on GPUs with ${[...new Set(others.map((v) => v.user))].join(', ')}, or move to GPU ${alternative.gpuIndex} (${formatBytes(alternative.freeBytes)} free): gpumem run --gpus ${alternative.gpuIndex} -- …`
            : `agree on GPUs with ${[...new Set(others.map((v) => v.user))].join(', ')}; your headroom on GPU ${acc.gpuIndex} is ${formatBytes(acc.freeBytes)}`,
      });
    }
    return findings;
  },
};
