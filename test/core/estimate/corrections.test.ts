import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SETUP,
  EAGER_CONTEXT_BYTES,
  EAGER_CONTEXT_HIGH_BYTES,
  EAGER_CONTEXT_LOW_BYTES,
  configAssumptions,
  estimateMemory,
  layerBytes,
  loraTraining,
  modelFromConfig,
  moduleLoadingFor,
  parseCudaVersion,
  type ModelInput,
  type TrainingSetup,
} from '../../../src/core/estimate/index.js';
import { GpumemError } from '../../../src/core/errors.js';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const BERT = modelFromConfig({
  model_type: 'bert', hidden_size: 1024, num_hidden_layers: 24, num_attention_heads: 16, intermediate_size: 4096,
  vocab_size: 30522, max_position_embeddings: 512, hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1,
});
const bert: ModelInput = { label: 'bert-large', tensors: BERT.tensors, totalParams: BERT.tensors.reduce((a, t) => a + t.elements, 0), shape: BERT.shape };
const zeroEnv = { contextBytes: 0, workspaceBytes: 0, fragmentation: 0 };
const setup = (o: Partial<TrainingSetup>): TrainingSetup => ({ ...DEFAULT_SETUP, ...o });

describe('autocast keeps CUDA\'s float32 ops at 4 bytes (ATen autocast_mode.h)', () => {
  const s = 512;
  const h = 1024;
  const a = 16;
  const f = 4096;
  it('a BERT-large layer under autocast: float32 LayerNorm inputs and softmax, mask and 16-bit probabilities', () => {
    // LayerNorm inputs 2·4; QKV input, Q, K, V, out-proj input 5·2; masks 2·1; MLP input 2; GeLU in and out 2·2·4h.
    const hiddenBytes = (2 * 4 + 5 * 2 + 2 * 1 + 2) * s * h + 2 * 2 * s * f;
    const scoreBytes = (4 + 1 + 2) * a * s * s;
    expect(layerBytes(BERT.shape, s, 2, 'eager', true, true)).toBe(hiddenBytes + scoreBytes);
  });
  it('without autocast the 16-bit layer is unchanged (Korthikanti\'s sbh(34 + 5as/h))', () => {
    expect(layerBytes(BERT.shape, s, 2, 'eager', true)).toBe(s * h * (34 + (5 * a * s) / h));
  });
  it('autocast adds 2 bytes per LayerNorm input element and 2 per score element over pure 16 bits', () => {
    const diff = layerBytes(BERT.shape, s, 2, 'eager', true, true) - layerBytes(BERT.shape, s, 2, 'eager', true);
    expect(diff).toBe(2 * 2 * s * h + 2 * a * s * s);
  });
  it('full checkpointing under autocast keeps each layer\'s float32 input', () => {
    const e = estimateMemory(bert, setup({ precision: 'amp-fp16', checkpointing: 'full', seq: s, attention: 'eager' }), zeroEnv);
    expect(e.activations.savedBytesPerSample - e.activations.outputBytesPerSample).toBe(24 * 4 * s * h);
  });
});

describe('softmax keeping its input (PyTorch before 1.11)', () => {
  const s = 512;
  const a = 16;
  it('adds the pre-softmax scores: float32 under autocast and fp32, 16-bit in pure bf16', () => {
    const extra = (p: number, autocast: boolean) =>
      layerBytes(BERT.shape, s, p, 'eager', true, autocast, true) - layerBytes(BERT.shape, s, p, 'eager', true, autocast);
    expect(extra(2, true)).toBe(4 * a * s * s);
    expect(extra(4, false)).toBe(4 * a * s * s);
    expect(extra(2, false)).toBe(2 * a * s * s);
  });
  it('changes nothing where no score matrix is kept (SDPA, selective recompute)', () => {
    expect(layerBytes(BERT.shape, s, 2, 'sdpa', true, true, true)).toBe(layerBytes(BERT.shape, s, 2, 'sdpa', true, true));
    expect(layerBytes(BERT.shape, s, 2, 'eager', false, true, true)).toBe(layerBytes(BERT.shape, s, 2, 'eager', false, true));
  });
  it('reaches the estimate through the setup: 24 layers × 4 bytes × a·s² per sample', () => {
    const base = estimateMemory(bert, setup({ seq: s, attention: 'eager' }), zeroEnv);
    const old = estimateMemory(bert, setup({ seq: s, attention: 'eager', softmaxKeepsInput: true }), zeroEnv);
    expect(old.activations.savedBytesPerSample - base.activations.savedBytesPerSample).toBe(24 * 4 * a * s * s);
  });
});

describe('LoRA: frozen linear layers keep no input (autograd saves a matmul input only for a weight gradient)', () => {
  // tiny_llama (hidden 256, 4 heads, 2 KV heads, MLP 688) at 128 tokens; each figure equals the per-layer bytes
  // the tracer recorded for the same model and setup (HF LlamaForCausalLM, SDPA, adapters on q_proj and v_proj).
  const cfg = { model_type: 'llama', hidden_size: 256, intermediate_size: 688, num_attention_heads: 4, num_key_value_heads: 2, num_hidden_layers: 4, vocab_size: 1024, max_position_embeddings: 512 };
  const tiny = modelFromConfig(cfg).shape!;
  const s = 128;
  const sh = s * 256;
  const sf = s * 688;
  const lora = loraTraining(['q_proj', 'v_proj'], 8);
  it('full fp32: norms keep input, normalised value and rsqrt; q/k/v input, Q, K, V, attention output; MLP input and four 688-wide tensors', () => {
    const expected = 2 * (4 + 4) * sh + 2 * 4 * s + 4 * sh + 4 * sh + 2 * 4 * s * 128 + 4 * sh + 4 * 4 * s + 4 * sh + 4 * 4 * sf;
    expect(layerBytes(tiny, s, 4, 'sdpa', true)).toBe(expected);
    expect(expected).toBe(2_591_744);
  });
  it('LoRA on q and v, fp32: the norms\' inputs, the adapters\' input and middles, Q, K, V, attention output, gate, up, SiLU', () => {
    const expected = 2 * 4 * sh + 2 * 4 * s + 4 * sh + 2 * 4 * s * 8 + 4 * sh + 2 * 4 * s * 128 + 4 * sh + 4 * 4 * s + 3 * 4 * sf;
    expect(layerBytes(tiny, s, 4, 'sdpa', true, false, false, lora)).toBe(expected);
    expect(expected).toBe(1_854_464);
  });
  it('bf16: the norms keep a float32 up-cast; LoRA drops the normalised values, the MLP input and the product', () => {
    expect(layerBytes(tiny, s, 2, 'sdpa', true)).toBe(1_428_480);
    expect(layerBytes(tiny, s, 2, 'sdpa', true, false, false, lora)).toBe(1_059_840);
  });
  it('names adapters by module: LoRA on the MLP keeps its input and product again', () => {
    const mlp = loraTraining(['gate_proj', 'up_proj', 'down_proj'], 8);
    expect(mlp).toMatchObject({ attnIn: false, mlpIn: true, mlpOut: true, adapters: 3 });
    const diff = layerBytes(tiny, s, 2, 'sdpa', true, false, false, mlp) - layerBytes(tiny, s, 2, 'sdpa', true, false, false, loraTraining([], 8));
    expect(diff).toBe(2 * sh + 2 * sf + 3 * 2 * s * 8);
  });
});

describe('gradients kept between steps (zero_grad(set_to_none=False))', () => {
  it('puts every gradient beside the forward pass, as accumulation does', () => {
    // Batch 16 at 512 tokens: the start of backward (all activations) is the peak, not the optimizer step.
    const freed = estimateMemory(bert, setup({ seq: 512, batch: 16 }), zeroEnv);
    const kept = estimateMemory(bert, setup({ seq: 512, batch: 16, keepGrads: true }), zeroEnv);
    expect(freed.peak.phase).toBe('backward');
    const forwardEnd = (e: typeof freed) => e.phases.find((p) => p.phase === 'forward-end')!.breakdown;
    expect(forwardEnd(freed).gradientsBytes).toBe(0);
    expect(forwardEnd(kept).gradientsBytes).toBe(4 * bert.totalParams);
    expect(kept.peak.totalBytes - freed.peak.totalBytes).toBe(4 * bert.totalParams);
  });
  it('is named among the assumptions', () => {
    const r = configAssumptions(setup({ keepGrads: true }), { ...zeroEnv, contextBytes: 512 * MiB }, GiB, true);
    expect(r.assumptions.some((x) => x.includes('--keep-grads'))).toBe(true);
  });
});

describe('CUDA context by CUDA version', () => {
  it('reads major.minor from a version or an nvidia-smi style text', () => {
    expect(parseCudaVersion('11.2')).toEqual({ major: 11, minor: 2 });
    expect(parseCudaVersion('12.1 (PyTorch 2.1.0+cu121)')).toEqual({ major: 12, minor: 1 });
    expect(parseCudaVersion('11.8.0')).toEqual({ major: 11, minor: 8 });
    expect(() => parseCudaVersion('cu121')).toThrow(GpumemError);
    expect(() => parseCudaVersion('')).toThrow(GpumemError);
  });
  it('any text gives a version of whole numbers or one GpumemError, never another exception', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        try {
          const v = parseCudaVersion(text);
          expect(Number.isInteger(v.major) && Number.isInteger(v.minor)).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(GpumemError);
        }
      }),
    );
  });
  it('loads modules eagerly before 11.7 and lazily from it', () => {
    expect(moduleLoadingFor({ major: 10, minor: 2 })).toBe('eager');
    expect(moduleLoadingFor({ major: 11, minor: 6 })).toBe('eager');
    expect(moduleLoadingFor({ major: 11, minor: 7 })).toBe('lazy');
    expect(moduleLoadingFor({ major: 12, minor: 0 })).toBe('lazy');
  });
  it('gives eager loading its own context range around the 1343 MiB assumed', () => {
    const env = { ...zeroEnv, contextBytes: EAGER_CONTEXT_BYTES };
    const r = configAssumptions(DEFAULT_SETUP, env, 10 * GiB, false, 'eager');
    expect(EAGER_CONTEXT_BYTES).toBe(1343 * MiB);
    expect(r.peakRangeBytes).toEqual({ lowBytes: 10 * GiB - EAGER_CONTEXT_BYTES + EAGER_CONTEXT_LOW_BYTES, highBytes: 10 * GiB - EAGER_CONTEXT_BYTES + EAGER_CONTEXT_HIGH_BYTES });
    expect(r.assumptions.some((x) => x.includes('eager module loading'))).toBe(true);
  });
});
