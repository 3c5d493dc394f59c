/**
 * scaled_dot_product_attention under the tracer takes the kernel CUDA would take on the target GPU (rules from
 * PyTorch's cuda/sdp_utils.cpp, python/gpumem_torch/trace/_sdpa_choice.py) and keeps what that kernel keeps, byte for
 * byte, on small shapes no measured config has (B 2, L 100, H 4, head dim 40 unless said). On the CPU the same call
 * with dropout runs the math path, which keeps the L×L scores, probabilities and mask. Runs the tracer directly on
 * test/fixtures/estimate/trace/sdpa_step.py; needs the .venv/ test environment.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StepTrace, TraceAlloc } from '../../../src/core/estimate/index.js';
import { traceDirect } from '../../helpers/trace-direct.js';

const ROOT = join(__dirname, '../../..');
const SCRIPT = join(ROOT, 'test/fixtures/estimate/trace/sdpa_step.py');
const B = 2, L = 100, H = 4, D = 40;

async function trace(gpu: string, args: string[], torchVersion = '2.11'): Promise<StepTrace> {
  const t = await traceDirect(SCRIPT, args, { GPUMEM_ESTIMATE_GPU_NAME: gpu, GPUMEM_ESTIMATE_TORCH_VERSION: torchVersion });
  expect(t.error).toBeNull();
  return t;
}

const step1 = (t: StepTrace): TraceAlloc[] => t.events.filter((e): e is TraceAlloc => e.kind === 'alloc' && e.step === 1);
const bytesOf = (t: StepTrace, op: string): Array<[string, number]> => step1(t).filter((a) => a.op === op).map((a) => [a.dtype, a.bytes]);
// What the math path allocates per attention call: scores (bmm), probabilities, the dropout mask or noise.
const MATH_OPS = ['bmm', 'baddbmm', '_softmax', 'native_dropout', 'bernoulli_', '_scaled_dot_product_flash_attention_for_cpu'];
const noMath = (t: StepTrace): boolean => !step1(t).some((a) => MATH_OPS.includes(a.op));
const backend = (t: StepTrace): string => t.notes.find((n) => n.startsWith('scaled_dot_product_attention:')) ?? '';

describe('scaled_dot_product_attention as CUDA runs it (real torch, fake tensors)', () => {
  it('bf16 with dropout on an H100: flash keeps the output and a float32 [B, H, L] log-sum-exp, no L×L tensor', async () => {
    const t = await trace('H100-80GB', ['--dtype', 'bfloat16']);
    expect(backend(t)).toMatch(/flash attention/);
    const fwd = bytesOf(t, '_scaled_dot_product_flash_attention').filter(([, n]) => n > 64);
    expect(fwd).toEqual([['bfloat16', B * H * L * D * 2], ['float32', B * H * L * 4]]);
    expect(noMath(t)).toBe(true);
    // mha_bwd's softmax_d [B, H, 128] and dq_accum [B, 128, H, 64] (L rounded to 128, head dim 40 to 32s), float32.
    expect(bytesOf(t, '_scaled_dot_product_flash_attention_backward (workspace)')).toEqual([
      ['float32', B * H * 128 * 4], ['float32', B * 128 * H * 64 * 4]]);
  });

  it('fp32 on an H100: memory-efficient attention, log-sum-exp rounded up to 32 positions (100 → 128)', async () => {
    const t = await trace('H100-80GB', ['--dtype', 'float32']);
    expect(backend(t)).toMatch(/memory-efficient/);
    expect(bytesOf(t, '_scaled_dot_product_efficient_attention').filter(([, n]) => n > 64)).toEqual([
      ['float32', B * H * L * D * 4], ['float32', B * H * 128 * 4]]);
    expect(noMath(t)).toBe(true);
  });

  it('a boolean mask rules flash out; memory-efficient pads the additive mask to a stride that is a multiple of 8', async () => {
    const t = await trace('H100-80GB', ['--dtype', 'bfloat16', '--mask', 'bool']);
    expect(backend(t)).toMatch(/memory-efficient/);
    expect(bytesOf(t, 'zeros_like')).toEqual([['bfloat16', B * L * L * 2]]);
    expect(bytesOf(t, 'constant_pad_nd')).toEqual([['bfloat16', B * L * 104 * 2]]);
    expect(noMath(t)).toBe(true);
  });

  it('head dim 36: flash pads q, k and v to 40 first', async () => {
    const t = await trace('H100-80GB', ['--dtype', 'bfloat16', '--head-dim', '36']);
    expect(backend(t)).toMatch(/flash attention/);
    expect(step1(t).filter((a) => a.phase === 'forward' && a.op === 'constant_pad_nd').map((a) => a.bytes)).toEqual([
      B * H * L * 40 * 2, B * H * L * 40 * 2, B * H * L * 40 * 2]);
  });

  it('grouped-query attention: flash backward expands dk and dv to all query heads while it runs', async () => {
    const t = await trace('H100-80GB', ['--dtype', 'bfloat16', '--kv-heads', '2']);
    const ws = bytesOf(t, '_scaled_dot_product_flash_attention_backward (workspace)');
    expect(ws.slice(2)).toEqual([['bfloat16', B * L * H * D * 2], ['bfloat16', B * L * H * D * 2]]);
    expect(bytesOf(t, '_scaled_dot_product_flash_attention_backward').map(([, n]) => n)).toEqual([
      B * H * L * D * 2, B * 2 * L * D * 2, B * 2 * L * D * 2]);
  });

  it('dropout in steps of 1/16 goes to cuDNN first with torch 2.11 on Hopper, to flash with 2.10', async () => {
    const now = await trace('H100-80GB', ['--dtype', 'bfloat16', '--dropout', '0.125'], '2.11');
    expect(backend(now)).toMatch(/cuDNN/);
    expect(bytesOf(now, '_scaled_dot_product_cudnn_attention').filter(([, n]) => n > 64)).toEqual([
      ['bfloat16', B * H * L * D * 2], ['float32', B * H * L * 4]]);
    expect(backend(await trace('H100-80GB', ['--dtype', 'bfloat16', '--dropout', '0.125'], '2.10'))).toMatch(/flash attention/);
    // 0.1 is not a multiple of 1/16: cuDNN refuses it, flash takes it.
    expect(backend(await trace('H100-80GB', ['--dtype', 'bfloat16', '--dropout', '0.1'], '2.11'))).toMatch(/flash attention/);
  });

  it('the target GPU decides: no flash on a T4 (sm75), none for head dim 200 in training on an A10G (sm86)', async () => {
    expect(backend(await trace('T4-16GB', ['--dtype', 'float16']))).toMatch(/memory-efficient.*7\.5/);
    expect(backend(await trace('A10G-24GB', ['--dtype', 'bfloat16', '--head-dim', '200']))).toMatch(/memory-efficient.*8\.6/);
    expect(backend(await trace('H100-80GB', ['--dtype', 'bfloat16', '--head-dim', '200']))).toMatch(/flash attention.*9\.0/);
  });

  it('under autocast, q and k in float32 (as a float32 rotary embedding leaves them) are cast to bf16 first, as CUDA autocast does, and flash runs', async () => {
    const t = await trace('H100-80GB', ['--dtype', 'bfloat16', '--autocast']);
    expect(backend(t)).toMatch(/flash attention/);
    expect(noMath(t)).toBe(true);
    const casts = step1(t).filter((a) => a.phase === 'forward' && a.op === '_to_copy').map((a) => [a.dtype, a.bytes]);
    expect(casts).toEqual([['float32', B * H * L * D * 4], ['float32', B * H * L * D * 4], ['bfloat16', B * H * L * D * 2], ['bfloat16', B * H * L * D * 2], ['float32', B * H * L * D * 4]]);
  });

  it('a backend the program turned off is not taken', async () => {
    expect(backend(await trace('H100-80GB', ['--dtype', 'bfloat16', '--disable', 'flash']))).toMatch(/memory-efficient/);
  });

  it('when CUDA falls back to math (fp32, head dim 6 not a multiple of 4) it keeps L×L tensors and a one-byte dropout mask', async () => {
    const t = await trace('H100-80GB', ['--dtype', 'float32', '--head-dim', '6']);
    expect(backend(t)).toMatch(/math path/);
    expect(bytesOf(t, 'native_dropout').sort()).toEqual([['bool', B * H * L * L], ['float32', B * H * L * L * 4]]);
    expect(bytesOf(t, '_softmax')).toEqual([['float32', B * H * L * L * 4]]);
  });
});
