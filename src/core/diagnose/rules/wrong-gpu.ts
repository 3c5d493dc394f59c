import { formatBytes } from '../../units.js';
import { allowedGpuIndexes } from '../cuda-visible.js';
import { treeOf } from '../trees.js';
import type { Finding, ProcessView, Rule } from '../types.js';
import { gpusOf, pidsOf, sumBytes } from './helpers.js';

/**
 * Memory on a GPU that the process's own CUDA_VISIBLE_DEVICES does not name. Rows of one tree with the same
 * value (a trainer and the workers that inherited its environment) make one finding.
 */
export const wrongGpu: Rule = {
  id: 'wrong-gpu',
  description: 'a process holds memory on a GPU its CUDA_VISIBLE_DEVICES does not include',
  check(ctx) {
    const groups = new Map<string, { cvd: string; allowed: number[]; rows: ProcessView[] }>();
    for (const v of ctx.processes) {
      const env = v.row.host?.cudaEnv;
      const cvd = env?.CUDA_VISIBLE_DEVICES;
      if (cvd === undefined || v.gpuIndex === null || (v.usedBytes ?? 0) === 0) continue;
      const allowed = allowedGpuIndexes(cvd, env?.CUDA_DEVICE_ORDER, ctx.devices);
      if (allowed === null || allowed.includes(v.gpuIndex)) continue;
      const key = `${treeOf(ctx.trees, v.pid)?.rootPid ?? v.pid}\u0000${cvd}`;
      const group = groups.get(key) ?? { cvd, allowed, rows: [] };
      group.rows.push(v);
      groups.set(key, group);
    }
    const findings: Finding[] = [];
    for (const { cvd, allowed, rows } of groups.values()) {
      const total = sumBytes(rows);
      const gpus = gpusOf(rows);
      const first = rows[0] as ProcessView;
      const who = rows.length === 1 ? `pid ${first.pid}` : `pid ${first.pid} and ${rows.length - 1} more of its tree`;
      const target = allowed.join(',') || 'N';
      findings.push({
        id: this.id,
        severity: 'warning',
        title: `${who} hold${rows.length === 1 ? 's' : ''} ${formatBytes(total)} on GPU ${gpus.join(', ')}, outside CUDA_VISIBLE_DEVICES=${cvd}`,
        evidence: {
          summary: `CUDA_VISIBLE_DEVICES="${cvd}" at start allows GPU ${allowed.length > 0 ? allowed.join(', ') : 'none'}; found ${rows.map((v) => `pid ${v.pid} ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex}`).join(', ')}`,
          pids: pidsOf(rows),
          gpuIndexes: gpus,
          bytes: total,
          details: { cudaVisibleDevices: cvd, allowed },
        },
        fix:
          'the variable was changed after CUDA started (setting os.environ inside the script is too late once torch touched CUDA) or a library picked its own device; ' +
          `set it before the process starts: CUDA_VISIBLE_DEVICES=${target} python …, or gpumem run --gpus ${target} -- …`,
      });
    }
    return findings;
  },
};
