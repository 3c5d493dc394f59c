/**
 * Ops CUDA autocast runs in float32 and CPU autocast does not (found by listing every aten op with an AutocastCUDA
 * kernel and no AutocastCPU one; docs/estimate.md, "the op-log comparison"): interpolation under bf16 autocast
 * gives float32 outputs in the trace, as on the GPU. Runs the tracer directly; needs the .venv/ test environment.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStepTrace, type TraceAlloc } from '../../../src/core/estimate/index.js';
import { requireTestPython } from '../../setup/python-venv.js';
import { runProcess } from '../../helpers/run-process.js';

const ROOT = join(__dirname, '../../..');

describe('CUDA autocast float32 ops that CPU autocast lacks (real torch, fake tensors)', () => {
  it('nearest and bilinear interpolation of a bf16 convolution output are float32: 2 × 4 × 16 × 16 × 4 bytes each', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-autocast-'));
    try {
      const out = join(dir, 'trace.ndjson');
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '',
        PYTHONPATH: `${join(ROOT, 'python/_site')}:${join(ROOT, 'python')}`,
        GPUMEM_ESTIMATE_TRACE: out, GPUMEM_ESTIMATE_STEPS: '2', GPUMEM_ESTIMATE_GPU_NAME: 'H100-80GB',
      };
      const r = await runProcess(requireTestPython(), [join(ROOT, 'test/fixtures/estimate/trace/autocast_fp32_ops.py')], { env, encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      const t = parseStepTrace(readFileSync(out, 'utf8'));
      const forward = t.events.filter((e): e is TraceAlloc => e.kind === 'alloc' && e.step === 1 && e.phase === 'forward');
      expect(forward.filter((a) => a.op === 'convolution').map((a) => [a.dtype, a.bytes])).toEqual([['bfloat16', 2 * 4 * 8 * 8 * 2]]);
      for (const op of ['upsample_nearest2d', 'upsample_bilinear2d']) {
        expect(forward.filter((a) => a.op === op).map((a) => [a.dtype, a.bytes])).toEqual([['float32', 2 * 4 * 16 * 16 * 4]]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
