import { formatBytes } from '../../units.js';
import { isPythonCommand } from '../classify.js';
import { THRESHOLDS } from '../thresholds.js';
import type { Rule } from '../types.js';
import { gpusOf, pidsOf, sumBytes } from './helpers.js';

/**
 * Python processes holding more than a context without PYTORCH_CUDA_ALLOC_CONF: fragmentation then wastes
 * reserved memory. Only where /proc/PID/environ was readable — an unreadable environment is unknown, not unset.
 */
export const allocConf: Rule = {
  id: 'alloc-conf',
  description: 'PyTorch processes run without PYTORCH_CUDA_ALLOC_CONF (expandable segments off)',
  check(ctx) {
    const rows = ctx.processes.filter((v) => {
      const env = v.row.host?.cudaEnv;
      if (!env || v.role === 'worker' || (v.usedBytes ?? 0) <= THRESHOLDS.allocConfMinBytes) return false;
      if (!isPythonCommand(v.row.host?.cmdline ?? null, v.row.host?.exe ?? null)) return false;
      return env.PYTORCH_CUDA_ALLOC_CONF === undefined && env.PYTORCH_ALLOC_CONF === undefined;
    });
    if (rows.length === 0) return [];
    return [
      {
        id: this.id,
        severity: 'info',
        title: `${rows.length} Python GPU process${rows.length === 1 ? '' : 'es'} run without PYTORCH_CUDA_ALLOC_CONF`,
        evidence: {
          summary: `${rows.map((v) => `pid ${v.pid} ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex ?? '?'}`).join('; ')}; neither PYTORCH_CUDA_ALLOC_CONF nor PYTORCH_ALLOC_CONF is set in their environment`,
          pids: pidsOf(rows),
          gpuIndexes: gpusOf(rows),
          bytes: sumBytes(rows),
          details: {},
        },
        fix:
          'start PyTorch jobs with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the caching allocator then grows segments instead of ' +
          'stranding free blocks, the usual cause of "reserved but unallocated" memory in OOM messages (gpumem run sets it unless you did)',
      },
    ];
  },
};
