import { batchOverrideFinding, describeSteps, inputBoundFinding, MIN_STEPS, type StepSummary } from '../../companion/steps.js';
import type { RunFinding } from '../../run/utilization.js';
import { blockingCopyFinding, syncCallsFinding } from '../../companion/transfers.js';
import type { Finding, Rule, RuleContext, Severity } from '../types.js';

/**
 * The run report's step findings for every process a running `gpumem run` publishes step timing for,
 * with the GPUs the process is on in the latest sample.
 */
function fromLiveSteps(ctx: RuleContext, make: (pid: number, s: StepSummary) => RunFinding | null, severity: Severity = 'warning'): Finding[] {
  const out: Finding[] = [];
  for (const p of Object.values(ctx.companion)) {
    if (!p.steps) continue;
    const f = make(p.pid, p.steps);
    if (!f) continue;
    const gpuIndexes = [...new Set(ctx.processes.filter((v) => v.pid === p.pid && v.gpuIndex !== null).map((v) => v.gpuIndex as number))];
    out.push({
      id: f.id,
      severity,
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
  check: (ctx) => fromLiveSteps(ctx, inputBoundFinding),
};

/** A supervised loop whose batches are not the size `gpumem run --batch` asked for. */
export const batchOverride: Rule = {
  id: 'batch-override',
  description: 'a supervised PyTorch loop\'s batches are not the size `gpumem run --batch` asked for (the program overrides it)',
  check: (ctx) => fromLiveSteps(ctx, batchOverrideFinding),
};

/** A supervised loop whose host waits for its host-to-device copies (pageable memory, non_blocking=False). */
export const blockingCopy: Rule = {
  id: 'blocking-copy',
  description: 'a supervised PyTorch loop spends ≥ 5% of step time in host-to-device copies the host waits for (companion copy timing)',
  check: (ctx) => fromLiveSteps(ctx, (pid, s) => blockingCopyFinding(pid, s.steps, s.copies, MIN_STEPS)),
};

/** A supervised loop that makes the host wait for the GPU in (nearly) every step. */
export const syncCalls: Rule = {
  id: 'sync-calls',
  description: 'a supervised PyTorch loop calls .item(), .cpu(), .tolist() or torch.cuda.synchronize() on CUDA tensors in ≥ 90% of its steps',
  check: (ctx) => fromLiveSteps(ctx, (pid, s) => syncCallsFinding(pid, s.steps, s.syncs, MIN_STEPS), 'info'),
};
