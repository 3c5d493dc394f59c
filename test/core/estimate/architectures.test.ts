import { describe, expect, it } from 'vitest';
import { modelFromConfig, summarizeTensors } from '../../../src/core/estimate/index.js';

// Configs as published with the models on the Hugging Face Hub (the fields that matter).
const GPT2 = { model_type: 'gpt2', n_embd: 768, n_layer: 12, n_head: 12, vocab_size: 50257, n_positions: 1024, resid_pdrop: 0.1 };
const GPT2_MEDIUM = { ...GPT2, n_embd: 1024, n_layer: 24, n_head: 16 };
const BERT = { model_type: 'bert', hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, vocab_size: 30522, max_position_embeddings: 512, type_vocab_size: 2 };
const LLAMA2_7B = { model_type: 'llama', hidden_size: 4096, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: 32, intermediate_size: 11008, vocab_size: 32000, max_position_embeddings: 4096, tie_word_embeddings: false };
const MISTRAL_7B = { model_type: 'mistral', hidden_size: 4096, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: 8, intermediate_size: 14336, vocab_size: 32000, max_position_embeddings: 32768, tie_word_embeddings: false };
const VIT_B16 = { model_type: 'vit', architectures: ['ViTForImageClassification'], hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, image_size: 224, patch_size: 16, num_channels: 3, id2label: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [String(i), `c${i}`])) };

const count = (c: Record<string, unknown>): number => summarizeTensors(modelFromConfig(c).tensors).totalParams;

describe('parameter counts from config.json match published counts', () => {
  // Published: gpt2 124,439,808 and gpt2-medium 354,823,168 (sum of numel of GPT2Model's parameters).
  it('GPT-2 small and medium', () => {
    expect(count(GPT2)).toBe(124_439_808);
    expect(count(GPT2_MEDIUM)).toBe(354_823_168);
  });
  // bert-base-uncased BertModel: 109,482,240; BertForMaskedLM (no pooler, MLM head with tied decoder): 109,514,298.
  it('BERT-base, with and without the MLM head', () => {
    expect(count(BERT)).toBe(109_482_240);
    expect(count({ ...BERT, architectures: ['BertForMaskedLM'] })).toBe(109_514_298);
  });
  it('Llama-2-7B (MHA, untied head) and Mistral-7B (GQA 32/8)', () => {
    expect(count(LLAMA2_7B)).toBe(6_738_415_616);
    expect(count(MISTRAL_7B)).toBe(7_241_732_096);
  });
  it('ViT-B/16 with a 1000-class head (timm/torchvision vit_b_16: 86,567,656)', () => {
    expect(count(VIT_B16)).toBe(86_567_656);
  });
  it('Qwen2 puts biases on q/k/v only; tied embeddings add no lm_head (hand-computed)', () => {
    const c = { model_type: 'qwen2', hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: 128, vocab_size: 100, tie_word_embeddings: true };
    const d = 16;
    const attn = 64 * 64 + 64 + 2 * (64 * 2 * d + 2 * d) + 64 * 64; // q(+b), k(+b), v(+b), o
    const perLayer = attn + 3 * 64 * 128 + 2 * 64;
    expect(count(c)).toBe(100 * 64 + 2 * perLayer + 64);
  });
  it('GQA changes K/V only: Mistral-shaped with MHA would be larger by exactly 2·L·h·(h − k·d)', () => {
    const mha = count({ ...MISTRAL_7B, num_key_value_heads: 32 });
    expect(mha - count(MISTRAL_7B)).toBe(2 * 32 * 4096 * (4096 - 8 * 128));
  });
  it('groups parameters by top-level module', () => {
    const s = summarizeTensors(modelFromConfig(LLAMA2_7B).tensors);
    expect(s.paramsByModule['model.embed_tokens']).toBe(131_072_000);
    expect(s.paramsByModule['lm_head']).toBe(131_072_000);
    expect(s.paramsByModule['model.layers']).toBe(32 * 202_383_360);
    expect(s.paramsByDtype.F32).toBe(6_738_415_616);
  });
  it('rejects unknown model types and missing fields with an input error', () => {
    expect(() => modelFromConfig({ model_type: 't5' })).toThrow(/not one gpumem can derive/);
    expect(() => modelFromConfig({ model_type: 'gpt2', n_embd: 768 })).toThrow(/"n_layer" is missing/);
  });
});
