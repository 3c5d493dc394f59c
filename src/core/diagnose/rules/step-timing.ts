import { batchOverrideFinding, describeSteps, inputBoundFinding, type StepSummary } from '../../companion/steps.js';
import type { RunFinding } from '../../run/utilization.js';
import type { Finding, Rule, RuleContext } from '../types.js';

/**
 * The run report's step findings for every process a running `gpumem run` publishes step timing for,
 * with the GPUs the process is on in the latest sample.
 */
function stepFindings(ctx: RuleContext, make: (pid: number, s: StepSummary) => RunFinding | null): Finding[] {
  const out: Finding[] = [];
  for (const p of Object.values(ctx.companion)) {
    if (!p.steps) continue;
    const f = make(p.pid, p.steps);
    if (!f) continue;
    const gpuIndexes = [...new Set(ctx.processes.filter((v) => v.pid === p.pid && v.gpuIndex !== null).map((v) => v.gpuIndex as number))];
    out.push({
      id: f.id,
      severity: 'warning',
      title: f.title,
      evidence: { summary: describeSteps(p.steps), pids: [p.pid], gpuIndexes, bytes: null, details: f.details },
      fix: f.fix,
    });
  }
  return out;
}

/** A supervised loop that spends a large share of each step waiting for its next batch (companion step timing). */
export const inputBound: Rule = {
  id: 'input-bound',
  description: 'a supervised PyTorch loop waited for its DataLoader ≥ 30% of step time over ≥ 5 steps (companion step timing)',
  check: (ctx) => stepFindings(ctx, inputBoundFinding),
};

/** A supervised loop whose batches are not the size `gpumem run --batch` asked for. */
export const batchOverride: Rule = {
  id: 'batch-override',
  description: 'a supervised PyTorch loop\'s batches are not the size `gpumem run --batch` asked for (the program overrides it)',
  check: (ctx) => stepFindings(ctx, batchOverrideFinding),
};
