import { formatBytes } from '../../units.js';
import { treeOf } from '../trees.js';
import type { Finding, ProcessView, Rule } from '../types.js';
import { describeRows, pidsOf, shortCommand, sumBytes } from './helpers.js';
import { subtreeActivity, subtreeOf } from './orphans.js';

/**
 * The ranks of one job, when `rows` are that: every row a rank with a rank number of its own, no two alike,
 * and the same WORLD_SIZE where they name one. A Slurm step daemon or a shell starting ranks is no launcher
 * in the tree, so this is the evidence that they are one live job and none of them a spare copy.
 */
function oneJobRanks(rows: readonly ProcessView[]): { ranks: number[]; worldSize: string | null } | null {
  const ranks = rows.map((v) => (v.role === 'rank' ? (v.rank ?? null) : null));
  if (ranks.some((r) => r === null) || new Set(ranks).size !== ranks.length) return null;
  const worlds = new Set(rows.map((v) => v.row.host?.cudaEnv?.WORLD_SIZE ?? null));
  if (worlds.size > 1) return null;
  return { ranks: (ranks as number[]).sort((a, b) => a - b), worldSize: [...worlds][0] ?? null };
}

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
      const job = sameLauncher ? null : oneJobRanks(rows);
      // Ranks of one live job are never spare copies: nothing is offered to end (docs/guarantees.md, "Live jobs").
      const ranksOfJob = sameLauncher || job !== null;
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
          : job
            ? `${pids.length} ranks of one job (RANK ${job.ranks.join(', ')}${job.worldSize !== null ? ` of WORLD_SIZE ${job.worldSize}` : ''}) all run on GPU ${gpu}`
            : `${pids.length} copies of \`${shortCommand(rows[0]?.command ?? null)}\` run on GPU ${gpu}`,
        evidence: {
          summary: `${describeRows(rows)}; together ${formatBytes(total)} on GPU ${gpu}`,
          pids,
          gpuIndexes: [gpu],
          bytes: total,
          details: { command: rows[0]?.command ?? null, sameLauncher, ranksOfJob, copies: pids.length },
        },
        fix: ranksOfJob
          ? `each rank must select its own GPU: call torch.cuda.set_device(int(os.environ["LOCAL_RANK"])) before any CUDA work; the extra ranks hold ${formatBytes(total - (rows[0]?.usedBytes ?? 0))} on GPU ${gpu}`
          : `${spare.length > 0 ? `pid${spare.length === 1 ? '' : 's'} ${spare.join(', ')} did not run on the CPU or GPU during the window: \`gpumem kill ${ends.join(' ')}\` ends ${spare.length === 1 ? 'it' : 'them'}; otherwise end` : 'no copy is known to have been idle during the window: end'} the copies you did not mean to start (together they hold ${formatBytes(total)}); start one run per GPU with \`gpumem run --gpus N -- …\``,
        ...(ranksOfJob || spare.length === 0 ? {} : { command: `gpumem kill ${ends.join(' ')}` }),
      });
    }
    return findings;
  },
};
