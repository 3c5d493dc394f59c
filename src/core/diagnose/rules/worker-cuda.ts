import { maxOf, minOf } from '../../arrays.js';
import { formatBytes } from '../../units.js';
import type { Finding, ProcessView, Rule } from '../types.js';
import { gpusOf, pidsOf, sumBytes } from './helpers.js';

/** Children of a training process that hold a CUDA context each: DataLoader workers that touched CUDA. */
export const workerCuda: Rule = {
  id: 'worker-cuda',
  description: 'children of a GPU process (DataLoader workers) hold their own CUDA context',
  check(ctx) {
    const byParent = new Map<number, ProcessView[]>();
    for (const v of ctx.processes) {
      // A worker that did GPU work (augmentation on the GPU) is using what it holds, not just carrying a context.
      if (v.role !== 'worker' || !v.contextOnly || v.ppid === null) continue;
      byParent.set(v.ppid, [...(byParent.get(v.ppid) ?? []), v]);
    }
    const findings: Finding[] = [];
    for (const [parent, rows] of byParent) {
      const total = sumBytes(rows);
      const pids = pidsOf(rows);
      const each = rows.map((r) => r.usedBytes ?? 0);
      findings.push({
        id: this.id,
        severity: 'warning',
        title: `${pids.length} worker${pids.length === 1 ? '' : 's'} of pid ${parent} hold ${formatBytes(total)} of GPU memory, a CUDA context each`,
        evidence: {
          summary: `children of pid ${parent} on GPU ${gpusOf(rows).join(', ')}: ${rows.map((r) => `pid ${r.pid} ${formatBytes(r.usedBytes)}`).join(', ')}; none did GPU work in the window`,
          pids,
          gpuIndexes: gpusOf(rows),
          bytes: total,
          details: { parentPid: parent, workers: pids.length, minBytes: minOf(each), maxBytes: maxOf(each) },
        },
        fix:
          `keep CUDA out of the workers: no .cuda()/.to("cuda")/torch.cuda calls in Dataset.__getitem__, collate_fn or worker_init_fn; ` +
          `return CPU tensors and move each batch in the training loop (pin_memory=True, non_blocking=True). That frees ${formatBytes(total)}. ` +
          `To confirm, run once with num_workers=0 and these processes disappear`,
      });
    }
    return findings;
  },
};
