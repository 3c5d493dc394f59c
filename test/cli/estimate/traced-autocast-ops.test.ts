/**
 * Ops CUDA autocast runs in float32 and CPU autocast does not (found by listing every aten op with an AutocastCUDA
 * kernel and no AutocastCPU one; docs/estimate.md, "the op-log comparison"): interpolation under bf16 autocast
 * gives float32 outputs in the trace, as on the GPU. Runs the tracer directly; needs the .venv/ test environment.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TraceAlloc } from '../../../src/core/estimate/index.js';
import { traceDirect } from '../../helpers/trace-direct.js';

const ROOT = join(__dirname, '../../..');

describe('CUDA autocast float32 ops that CPU autocast lacks (real torch, fake tensors)', () => {
  it('nearest and bilinear interpolation of a bf16 convolution output are float32: 2 × 4 × 16 × 16 × 4 bytes each', async () => {
    const t = await traceDirect(join(ROOT, 'test/fixtures/estimate/trace/autocast_fp32_ops.py'), [], { GPUMEM_ESTIMATE_GPU_NAME: 'H100-80GB' });
    const forward = t.events.filter((e): e is TraceAlloc => e.kind === 'alloc' && e.step === 1 && e.phase === 'forward');
    expect(forward.filter((a) => a.op === 'convolution').map((a) => [a.dtype, a.bytes])).toEqual([['bfloat16', 2 * 4 * 8 * 8 * 2]]);
    for (const op of ['upsample_nearest2d', 'upsample_bilinear2d']) {
      expect(forward.filter((a) => a.op === op).map((a) => [a.dtype, a.bytes])).toEqual([['float32', 2 * 4 * 16 * 16 * 4]]);
    }
  });
});
