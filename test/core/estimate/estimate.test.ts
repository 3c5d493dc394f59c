import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SETUP,
  computeModelStates,
  estimateMemory,
  findMaxBatch,
  layerBytes,
  modelFromConfig,
  modelFromParams,
  parseStages,
  planAccumulation,
  roundAllocation,
  estimateStages,
  type ModelInput,
  type TrainingSetup,
} from '../../../src/core/estimate/index.js';

const GPT2 = modelFromConfig({ model_type: 'gpt2', n_embd: 768, n_layer: 12, n_head: 12, vocab_size: 50257, n_positions: 1024, resid_pdrop: 0.1 });
// The block of the paper (Megatron's fused GeLU); transformers' GPT-2 defaults to the Python gelu_new instead.
const FUSED = modelFromConfig({ model_type: 'gpt2', n_embd: 768, n_layer: 12, n_head: 12, vocab_size: 50257, n_positions: 1024, resid_pdrop: 0.1, activation_function: 'gelu_pytorch_tanh' }).shape;
const gpt2: ModelInput = { label: 'gpt2', tensors: GPT2.tensors, totalParams: 124_439_808, shape: GPT2.shape };
const P = 124_439_808;
const zeroEnv = { contextBytes: 0, workspaceBytes: 0, fragmentation: 0 };
const setup = (o: Partial<TrainingSetup>): TrainingSetup => ({ ...DEFAULT_SETUP, ...o });

describe('model states (reference §4.1)', () => {
  it('fp32 AdamW: 4 + 4 + 8 bytes per parameter, foreach step adds one 4-byte copy', () => {
    const s = computeModelStates(gpt2, setup({}));
    expect([s.weightsBytes, s.gradientsBytes, s.optimizerStatesBytes, s.stepTransientBytes]).toEqual([4 * P, 4 * P, 8 * P, 4 * P]);
    expect(computeModelStates(gpt2, setup({ optimizerImpl: 'fused' })).stepTransientBytes).toBe(0);
  });
  it('AMP keeps fp32 weights and grads plus 16-bit copies of the matrices; pure bf16 halves everything', () => {
    const amp = computeModelStates(gpt2, setup({ precision: 'amp-bf16' }));
    const matrices = GPT2.tensors.filter((t) => t.shape.length >= 2).reduce((a, t) => a + t.elements, 0);
    expect(amp.weightsBytes).toBe(4 * P);
    expect(amp.autocastCopyBytes).toBe(2 * matrices);
    const bf16 = computeModelStates(gpt2, setup({ precision: 'bf16' }));
    expect([bf16.weightsBytes, bf16.gradientsBytes, bf16.optimizerStatesBytes]).toEqual([2 * P, 2 * P, 4 * P]);
  });
  it('SGD keeps no state, with momentum one buffer; 8-bit Adam ≈ 2 bytes + block scales', () => {
    expect(computeModelStates(gpt2, setup({ optimizer: 'sgd' })).optimizerStatesBytes).toBe(0);
    expect(computeModelStates(gpt2, setup({ optimizer: 'sgd-momentum' })).optimizerStatesBytes).toBe(4 * P);
    const expected = GPT2.tensors.reduce((a, t) => a + (t.elements < 4096 ? 8 * t.elements : 2 * (t.elements + 4 * Math.ceil(t.elements / 2048))), 0);
    expect(computeModelStates(gpt2, setup({ optimizer: 'adam8bit' })).optimizerStatesBytes).toBe(expected);
  });
  it('Adafactor factors matrices into rows + columns', () => {
    const expected = GPT2.tensors.reduce((a, t) => a + 4 * (t.shape.length >= 2 ? (t.shape[0] as number) + t.elements / (t.shape[0] as number) : t.elements), 0);
    expect(computeModelStates(gpt2, setup({ optimizer: 'adafactor' })).optimizerStatesBytes).toBe(expected);
  });
  it('freezing by prefix removes grads and states of exactly those tensors', () => {
    const frozen = GPT2.tensors.filter((t) => t.name.startsWith('transformer.h.')).reduce((a, t) => a + t.elements, 0);
    const s = computeModelStates(gpt2, setup({ freeze: ['transformer.h'] }));
    expect(s.trainableParams).toBe(P - frozen);
    expect(s.gradientsBytes).toBe(4 * (P - frozen));
  });
  it('LoRA r=8 on q_proj,v_proj of Llama-2-7B trains 4,194,304 parameters (as peft reports)', () => {
    const m = modelFromConfig({ model_type: 'llama', hidden_size: 4096, num_hidden_layers: 32, num_attention_heads: 32, intermediate_size: 11008, vocab_size: 32000 });
    const s = computeModelStates({ label: 'l', tensors: m.tensors, totalParams: 0, shape: m.shape }, setup({ loraRank: 8 }));
    expect(s.trainableParams).toBe(4_194_304);
    // The same from --params with the shape.
    const viaParams = computeModelStates(modelFromParams(6_738_415_616, { layers: 32, hidden: 4096, heads: 32 }), setup({ loraRank: 8 }));
    expect(viaParams.trainableParams).toBe(4_194_304);
  });
  it('ZeRO-1 shards states, ZeRO-2 also grads, ZeRO-3 also weights (DeepSpeed §2)', () => {
    const z = (sharding: TrainingSetup['sharding']) => computeModelStates(gpt2, setup({ sharding, gpus: 4, optimizerImpl: 'fused' }));
    expect(z('zero1').optimizerStatesBytes).toBe(2 * P);
    expect(z('zero1').gradientsBytes).toBe(4 * P);
    expect(z('zero2').gradientsBytes).toBe(P);
    expect(z('zero3').weightsBytes).toBe(P);
    expect(z('zero1').gatheredBackwardBytes).toBe(0);
  });
  it("FSDP's buffers: two gathered blocks in forward, three and a reduce-scatter input in backward, the root gathered throughout", () => {
    const s = (precision: TrainingSetup['precision']) => computeModelStates(gpt2, setup({ sharding: 'fsdp', gpus: 4, precision }));
    // GPT-2 small: a block (transformer.h.N) is 7,087,872 parameters; outside the blocks wte, wpe and ln_f.
    const block = 7_087_872;
    const rest = 50257 * 768 + 1024 * 768 + 2 * 768;
    expect(s('fp32').gatheredForwardBytes).toBe(2 * block * 4 + rest * 4);
    expect(s('fp32').gatheredBackwardBytes).toBe(4 * block * 4 + rest * 4);
    // Mixed precision gathers in 16 bits and reduces the gradients in float32.
    expect(s('amp-bf16').gatheredBackwardBytes).toBe(3 * block * 2 + block * 4 + rest * 2);
    expect(s('bf16').gatheredBackwardBytes).toBe(4 * block * 2 + rest * 2);
    // LoRA: the frozen block is gathered, but only the adapters' gradients are unsharded and reduced.
    const lora = computeModelStates(gpt2, setup({ sharding: 'fsdp', gpus: 4, precision: 'bf16', loraRank: 8, loraModules: ['c_attn'] }));
    const adapters = 8 * (768 + 2304);
    expect(lora.gatheredBackwardBytes).toBe(2 * block * 2 + adapters * (2 + 2) + rest * 2);
  });
});

describe('activations (Korthikanti et al. 2022)', () => {
  it('a GPT-2 layer at 16 bits with dropout and eager attention is sbh(34 + 5as/h)', () => {
    const s = 1024;
    expect(layerBytes(FUSED, s, 2, 'eager', true)).toBe(s * 768 * (34 + (5 * 12 * s) / 768));
  });
  it("transformers' default gelu_new keeps three MLP-wide tensors more than PyTorch's GeLU kernel", () => {
    expect(layerBytes(GPT2.shape, 1024, 2, 'sdpa', true) - layerBytes(FUSED, 1024, 2, 'sdpa', true)).toBe(3 * 2 * 1024 * 3072);
  });
  it('--params with --mlp gelu is shaped as a GPT-2 block with PyTorch\'s GeLU kernel (4h MLP, LayerNorm): the same bytes per layer', () => {
    const shaped = modelFromParams(P, { layers: 12, hidden: 768, heads: 12, vocab: 50257, mlp: 'gelu' }).shape!;
    expect(shaped).toMatchObject({ mlp: 'gelu', norm: 'layernorm', intermediate: 3072 });
    const noDropout = { ...FUSED, dropout: 0 };
    for (const attention of ['sdpa', 'eager'] as const) {
      expect(layerBytes(shaped, 1024, 2, attention, true)).toBe(layerBytes(noDropout, 1024, 2, attention, true));
    }
    // The default stays the modern decoder: SwiGLU at 8h/3 rounded up to 256, RMSNorm.
    expect(modelFromParams(P, { layers: 12, hidden: 768 }).shape).toMatchObject({ mlp: 'swiglu', norm: 'rmsnorm', intermediate: 2048 });
  });
  it('SDPA drops the s² term for a fp32 log-sum-exp; selective recompute matches 34sbh', () => {
    expect(layerBytes(FUSED, 1024, 2, 'sdpa', true)).toBe(1024 * 768 * 34 + 4 * 12 * 1024);
    expect(layerBytes(FUSED, 1024, 2, 'eager', false)).toBe(1024 * 768 * 34);
  });
  it('batch scales activations linearly; full checkpointing keeps only layer inputs', () => {
    const a = estimateMemory(gpt2, setup({ batch: 1, seq: 512, precision: 'amp-bf16' }), zeroEnv);
    const b = estimateMemory(gpt2, setup({ batch: 4, seq: 512, precision: 'amp-bf16' }), zeroEnv);
    expect(b.activations.savedBytesPerSample).toBe(a.activations.savedBytesPerSample);
    const fe = (e: typeof a) => e.phases[0]!.breakdown.activationsBytes;
    expect(fe(b)).toBe(4 * fe(a));
    const full = estimateMemory(gpt2, setup({ batch: 1, seq: 512, precision: 'amp-bf16', checkpointing: 'full' }), zeroEnv);
    // Each block's input is the residual stream, float32 under autocast.
    expect(full.activations.savedBytesPerSample - full.activations.outputBytesPerSample).toBe(12 * 4 * 512 * 768);
  });
  it('freezing the lower layers stops them saving activations', () => {
    const frozen = Array.from({ length: 6 }, (_, i) => `transformer.h.${i}`).concat(['transformer.wte', 'transformer.wpe']);
    const e = estimateMemory(gpt2, setup({ freeze: frozen, seq: 128 }), zeroEnv);
    expect(e.activations.savingLayers).toBe(6);
  });
});

describe('phases, peak and max batch', () => {
  it('fp32 AdamW with small activations peaks at the optimizer step: 4P weights + 4P grads + 8P states + 4P foreach', () => {
    const e = estimateMemory(gpt2, setup({ batch: 1, seq: 16 }), zeroEnv);
    expect(e.peak.phase).toBe('optimizer-step');
    const slack = e.states.roundingSlackBytes;
    expect(e.peak.totalBytes).toBe(20 * P + slack);
  });
  it('max batch is the largest b with peak ≤ budget (hand-computed with a measured per-sample size)', () => {
    const model = modelFromParams(1_000_000, {});
    const perSample = 1024 ** 3;
    const s = setup({ activationBytesPerSample: perSample });
    const fit = findMaxBatch(model, s, zeroEnv, 10 * 1024 ** 3, 0);
    // peak = weights 4e6 + states 8e6 + b·perSample: a measured slope of the peak holds its working set already
    const expected = Math.floor((10 * 1024 ** 3 - 12e6) / perSample);
    expect(fit.maxBatch).toBe(expected);
    expect(fit.peakAtMax.totalBytes).toBeLessThanOrEqual(fit.budgetBytes);
    expect(findMaxBatch(model, s, zeroEnv, 1e6, 0).maxBatch).toBe(0);
  });
  it('a measured per-sample slope gets no working set and no fragmentation on top; a transformer model gets both', () => {
    const model = modelFromParams(1_000_000, {});
    const perSample = 3 * 1024 ** 2;
    const env = { ...zeroEnv, fragmentation: 0.05 };
    const e = estimateMemory(model, setup({ activationBytesPerSample: perSample, batch: 8 }), env);
    const backward = e.phases.find((p) => p.phase === 'backward')!;
    expect(backward.breakdown.activationsBytes).toBe(8 * perSample);
    expect(backward.breakdown.transientsBytes).toBe(0);
    expect(backward.breakdown.allocatorSlackBytes).toBe(e.states.roundingSlackBytes);
    const t = estimateMemory(gpt2, setup({ batch: 2, seq: 64 }), env);
    const tb = t.phases.find((p) => p.phase === 'backward')!;
    expect(tb.breakdown.transientsBytes).toBeGreaterThan(0);
    expect(tb.breakdown.allocatorSlackBytes).toBe(t.states.roundingSlackBytes + Math.round(0.05 * (tb.breakdown.activationsBytes + tb.breakdown.transientsBytes)));
  });
  it('accumulation splits an effective batch into the fewest steps, exactly when it can', () => {
    expect(planAccumulation(64, 9)).toEqual({ effectiveBatch: 64, microBatch: 8, steps: 8, realisedBatch: 64 });
    // No exact split within twice the minimum steps: the realised batch says so.
    expect(planAccumulation(7, 3)).toEqual({ effectiveBatch: 7, microBatch: 3, steps: 3, realisedBatch: 9 });
    expect(planAccumulation(10, 0)).toBeNull();
  });
  it('accumulation over data-parallel ranks keeps the global batch: micro × steps × ranks', () => {
    // 256 over 2 ranks of at most 23: 128 per rank in 6 steps does not divide, 8 steps of 16 does.
    expect(planAccumulation(256, 23, 2)).toEqual({ effectiveBatch: 256, microBatch: 16, steps: 8, realisedBatch: 256 });
    expect(planAccumulation(256, 32, 8)).toEqual({ effectiveBatch: 256, microBatch: 32, steps: 1, realisedBatch: 256 });
    // 10 over 4 ranks: no exact split, 3 per rank in one step realises 12.
    expect(planAccumulation(10, 3, 4)).toEqual({ effectiveBatch: 10, microBatch: 3, steps: 1, realisedBatch: 12 });
  });
  it('allocator rounds to 512 B, and to 2 MiB from 10 MiB on', () => {
    expect(roundAllocation(1)).toBe(512);
    expect(roundAllocation(1024 * 1024 + 1)).toBe(1024 * 1024 + 512);
    expect(roundAllocation(10 * 1024 * 1024 + 1)).toBe(12 * 1024 * 1024);
  });
});

describe('stages', () => {
  it('parses stage settings and rejects unknown ones', () => {
    expect(parseStages('s1:freeze=a+b,batch=2 s2:full,ckpt=full,act=1GiB')).toEqual([
      { name: 's1', overrides: { freeze: ['a', 'b'], batch: 2 } },
      { name: 's2', overrides: { freeze: [], loraRank: 0, checkpointing: 'full', activationBytesPerSample: 1024 ** 3, activationsForTrainableSet: true } },
    ]);
    expect(() => parseStages('s1:warp=9')).toThrow(/unknown setting "warp"/);
    expect(() => parseStages('s1:batch=0')).toThrow(/positive integer/);
  });
  it('unfreezing a stage adds gradients and optimizer states for the newly trainable parameters', () => {
    const r = estimateStages(gpt2, setup({ seq: 128 }), parseStages('a:freeze=transformer.h b:full'), zeroEnv, null);
    const frozen = GPT2.tensors.filter((t) => t.name.startsWith('transformer.h.')).reduce((x, t) => x + t.elements, 0);
    const stepA = r[0]!.estimate.phases[2]!.breakdown;
    const stepB = r[1]!.estimate.phases[2]!.breakdown;
    expect(stepB.optimizerStatesBytes - stepA.optimizerStatesBytes).toBe(8 * frozen);
    expect(stepB.gradientsBytes - stepA.gradientsBytes).toBe(4 * frozen);
    expect(r[1]!.growth.map((g) => g.component)).toContain('optimizerStatesBytes');
  });
});
