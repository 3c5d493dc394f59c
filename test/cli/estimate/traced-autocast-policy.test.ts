/**
 * Where CPU and CUDA autocast cast differently, the trace takes CUDA's policy (python/gpumem_torch/trace/_autocast.py,
 * following ATen autocast_mode.cpp): one op per rule in test/fixtures/estimate/trace/autocast_policy.py, each found
 * by op name in step 2's forward and checked for the dtype and bytes CUDA gives it. CPU autocast's own result is
 * named beside each case; every one of them fails without the rule. Needs the .venv/ test environment.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StepTrace, TraceAlloc } from '../../../src/core/estimate/index.js';
import { requireOldTorchPython, requireTestPython } from '../../setup/python-venv.js';
import { traceDirect, traceWithStderr } from '../../helpers/trace-direct.js';
import { estimate, SCRIPTS } from './traced-helpers.js';

const SCRIPT = join(SCRIPTS, 'autocast_policy.py');

describe('CUDA autocast policy while tracing (real torch, fake tensors)', () => {
  let t: StepTrace;
  beforeAll(async () => {
    t = await traceDirect(SCRIPT);
  }, 180_000);
  const step2 = (phase: string): TraceAlloc[] => t.events.filter((e): e is TraceAlloc => e.kind === 'alloc' && e.step === 1 && e.phase === phase);
  const of = (phase: string, op: string) => step2(phase).filter((a) => a.op === op).map((a) => [a.dtype, a.bytes]);
  const line = (n: number) => step2('forward').filter((a) => a.frame === `autocast_policy.py:${n}`);

  it('cross_entropy_loss falls through: log-probabilities stay bf16 (6 × 40 × 2), nll_loss keeps a float32 copy', () => {
    // CPU autocast casts the logits to float32 first and keeps float32 log-probabilities (960 bytes).
    expect(of('forward', '_log_softmax')).toEqual([['bfloat16', 6 * 40 * 2]]);
    expect(line(26).filter((a) => a.op === '_to_copy').map((a) => [a.dtype, a.bytes])).toEqual([['float32', 6 * 40 * 4]]);
    // Backward: nll_loss's float32 gradient, cast back to bf16, then log_softmax's bf16 gradient.
    expect(of('backward', 'nll_loss_backward')).toEqual([['float32', 6 * 40 * 4]]);
    expect(of('backward', '_log_softmax_backward_data')).toEqual([['bfloat16', 6 * 40 * 2]]);
  });

  it('mv is cast to the lower precision: bf16 [10] (CPU autocast: float32, 40 bytes)', () => {
    expect(of('forward', 'mv')).toEqual([['bfloat16', 10 * 2]]);
  });

  it('grid_sampler promotes: bf16 input and grid give bf16 1 × 3 × 3 × 3 (CPU autocast: float32, 108 bytes)', () => {
    expect(of('forward', 'grid_sampler_2d')).toEqual([['bfloat16', 27 * 2]]);
    expect(line(28).filter((a) => a.dtype === 'float32')).toEqual([]);
  });

  it('norm gets float32 appended: a float32 scalar (CPU autocast: bf16, 2 bytes)', () => {
    expect(of('forward', 'norm')).toEqual([['float32', 4]]);
  });

  it('max_pool3d falls through: bf16 values 1 × 2 × 2 × 2 × 2 and no float32 copy of its input', () => {
    expect(of('forward', 'max_pool3d_with_indices')).toEqual([['bfloat16', 16 * 2], ['int64', 16 * 8]]);
    expect(line(30).filter((a) => a.op === '_to_copy').map((a) => a.dtype)).toEqual(['bfloat16']); // the script's own .to
  });

  it('cat falls through: float32 6 × 40 from a bf16 and a float32 part, with no float32 copy of the bf16 one', () => {
    expect(line(31).map((a) => [a.op, a.dtype, a.bytes])).toEqual([['new_ones', 'float32', 3 * 40 * 4], ['cat', 'float32', 6 * 40 * 4]]);
  });

  it('torch 2.4 gives the same bytes, and replacing CPU autocast\'s kernels prints nothing to the program\'s stderr', async () => {
    const old = await traceWithStderr(SCRIPT, [], {}, requireOldTorchPython());
    expect(old.stderr).not.toMatch(/Overriding a previously registered kernel/);
    const ops = (x: StepTrace) => x.events.filter((e): e is TraceAlloc => e.kind === 'alloc' && e.step === 1 && e.phase === 'forward')
      .filter((a) => ['_log_softmax', 'mv', 'grid_sampler_2d', 'norm', 'max_pool3d_with_indices', 'cat'].includes(a.op)).map((a) => [a.op, a.dtype, a.bytes]);
    expect(ops(old.trace)).toEqual(ops(t));
  }, 180_000);

  it('binary_cross_entropy under autocast ends the trace as CUDA refuses it, with the line that calls it', async () => {
    const r = await estimate(['--', requireTestPython(), SCRIPT, 'bce']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/binary_cross_entropy is refused under CUDA autocast/);
    expect(r.stderr).toMatch(/autocast_policy\.py:24/);
    expect(r.stderr).toMatch(/^hint: the program fails the same way on a GPU: use binary_cross_entropy_with_logits/m);
    expect(r.stderr).not.toMatch(/Traceback/);
  }, 180_000);
});
