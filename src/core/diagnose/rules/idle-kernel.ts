import { formatBytes, formatDuration } from '../../units.js';
import { THRESHOLDS } from '../thresholds.js';
import type { Finding, Rule } from '../types.js';
import { pidsOf } from './helpers.js';
import { subtreeOf } from './orphans.js';

/** Jupyter/IPython kernels holding GPU memory while doing nothing over the window. */
export const idleKernel: Rule = {
  id: 'idle-kernel',
  description: 'a Jupyter/IPython kernel holds GPU memory and did no GPU work over the window',
  check(ctx) {
    const findings: Finding[] = [];
    for (const v of ctx.processes) {
      if (v.role !== 'kernel' || v.usedBytes === null || v.usedBytes === 0 || v.gpuIndex === null) continue;
      const util = v.util;
      const idle = util !== null && util.samples >= THRESHOLDS.minUtilSamples && util.idleWholeWindow;
      if (!idle) continue;
      const owner = v.user ?? 'unknown user';
      // Ending a kernel ends its DataLoader workers too: the command names them all, and is given only when
      // none of them ran on the CPU (a cell may be preprocessing a data set while the GPU waits).
      const tree = subtreeOf(ctx, v.pid);
      const busy = tree.some((m) => (m.cpuTicksInWindow ?? 0) > 0 || (m.util?.maxPct ?? 0) > 0);
      findings.push({
        id: this.id,
        severity: 'warning',
        title: `idle notebook kernel pid ${v.pid} (${owner}) holds ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex}`,
        evidence: {
          summary: `0% ${util.basis === 'process' ? 'SM utilization of the process' : 'GPU utilization'} in all ${util.samples} samples (idle ≥ ${formatDuration(util.idleMs)})${v.ageMs !== null ? `, running for ${formatDuration(v.ageMs)}` : ''}`,
          pids: [v.pid],
          gpuIndexes: [v.gpuIndex],
          bytes: v.usedBytes,
          details: { user: v.user, idleMs: util.idleMs, ageMs: v.ageMs, utilBasis: util.basis },
        },
        // `del` alone often frees nothing: Out[n], the last traceback or a kept loss still hold the tensors, which
        // %gpumem (the companion's notebook extension, docs/notebooks.md) names and %gpumem free drops.
        fix: `in the notebook: %load_ext gpumem_torch (its folder: gpumem python-path; docs/notebooks.md), then %gpumem shows what holds the memory (Out[n], the last traceback, a kept loss…) and %gpumem free NAME… gives it back; or shut the kernel down (Kernel → Shut Down) to return all ${formatBytes(v.usedBytes)}`,
        ...(busy ? {} : { command: `gpumem kill ${pidsOf(tree).join(' ')}` }),
      });
    }
    return findings;
  },
};
