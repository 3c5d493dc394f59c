import { formatBytes } from '../../units.js';
import { treeOf } from '../trees.js';
import type { Finding, ProcessView, Rule } from '../types.js';
import { describeRows, pidsOf, shortCommand, sumBytes } from './helpers.js';
import { subtreeActivity, subtreeOf } from './orphans.js';

/** Two or more processes running the same command on one GPU: a second copy of a job, or ranks that all chose the same GPU. */
export const duplicateInstances: Rule = {
  id: 'duplicate-instances',
  description: 'the same training command runs more than once on one GPU',
  check(ctx) {
    const groups = new Map<string, ProcessView[]>();
    for (const v of ctx.processes) {
      if (v.role === 'worker' || v.role === 'kernel' || v.gpuIndex === null || v.command === null) continue;
      const key = `${v.gpuIndex}\u0000${v.command}`;
      const group = groups.get(key);
      if (group) group.push(v);
      else groups.set(key, [v]);
    }
    const findings: Finding[] = [];
    for (const rows of groups.values()) {
      const pids = pidsOf(rows);
      if (pids.length < 2) continue;
      const gpu = rows[0]?.gpuIndex as number;
      const roots = new Set(pids.map((p) => treeOf(ctx.trees, p)?.rootPid ?? p));
      const sameLauncher = roots.size === 1;
      const total = sumBytes(rows);
      // Which copy was meant cannot be known; a command is suggested only for copies that did not run on the
      // CPU or GPU during the window, so it never ends the copy that is doing the work.
      // A copy is idle only with everything under it (its workers): ending it ends them, so they are named too.
      const idle = pidsOf(rows.filter((v) => subtreeActivity(ctx, v.pid) === 'idle'));
      const spare = idle.length === pids.length ? idle.slice(1) : idle;
      const ends = pidsOf(spare.flatMap((pid) => subtreeOf(ctx, pid)));
      findings.push({
        id: this.id,
        severity: 'warning',
        title: sameLauncher
          ? `${pids.length} ranks of one launcher (pid ${[...roots][0]}) all run on GPU ${gpu}`
          : `${pids.length} copies of \`${shortCommand(rows[0]?.command ?? null)}\` run on GPU ${gpu}`,
        evidence: {
          summary: `${describeRows(rows)}; together ${formatBytes(total)} on GPU ${gpu}`,
          pids,
          gpuIndexes: [gpu],
          bytes: total,
          details: { command: rows[0]?.command ?? null, sameLauncher, copies: pids.length },
        },
        fix: sameLauncher
          ? `each rank must select its own GPU: call torch.cuda.set_device(int(os.environ["LOCAL_RANK"])) before any CUDA work; the extra ranks hold ${formatBytes(total - (rows[0]?.usedBytes ?? 0))} on GPU ${gpu}`
          : `${spare.length > 0 ? `pid${spare.length === 1 ? '' : 's'} ${spare.join(', ')} did not run on the CPU or GPU during the window: \`gpumem kill ${ends.join(' ')}\` ends ${spare.length === 1 ? 'it' : 'them'}; otherwise end` : 'no copy is known to have been idle during the window: end'} the copies you did not mean to start (together they hold ${formatBytes(total)}); start one run per GPU with \`gpumem run --gpus N -- …\``,
        ...(sameLauncher || spare.length === 0 ? {} : { command: `gpumem kill ${ends.join(' ')}` }),
      });
    }
    return findings;
  },
};
