/**
 * Hugging Face `config.json` → the model's named tensors and its transformer shape. Names and shapes follow
 * the transformers implementations (GPT2Model, BertModel, LlamaModel/MistralModel/Qwen2Model, ViTModel), so
 * parameter counts are exact and freezing by prefix or LoRA by module name work as on a real checkpoint.
 */
import { GpumemError } from '../errors.js';
import { printable } from '../text.js';
import { bytesForElements } from './dtypes.js';
import type { TensorInfo } from './safetensors.js';

export type MlpKind = 'gelu' | 'swiglu';

/** What the activation model needs to know about a transformer. */
export interface TransformerShape {
  family: string;
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  vocab: number;
  mlp: MlpKind;
  /**
   * MLP-wide tensors the GeLU keeps for backward: 1 for PyTorch's kernel (`gelu`, `gelu_pytorch_tanh`); 4 for
   * transformers' `gelu_new`, written as Python arithmetic (pow keeps x, tanh its output, the last product both of
   * its factors). Absent: 1.
   */
  geluSaves?: number;
  norm: 'layernorm' | 'rmsnorm';
  /** Dropout probability used in training (masks cost 1 byte per element when > 0). */
  dropout: number;
  /** Width of the output layer whose logits are kept for the loss: the vocab for LMs, the classes otherwise. */
  outputWidth: number;
  /** Sequence length the config allows; the default when --seq is not given. */
  maxPositions: number;
}

export interface ConfigModel {
  tensors: TensorInfo[];
  shape: TransformerShape;
  architecture: string;
}

type Config = Record<string, unknown>;

/**
 * Derives tensors and shape from a parsed config.json. Supports gpt2, bert, llama, mistral, qwen2/qwen3 and
 * vit `model_type`s; anything else is an input error that suggests a safetensors file or `--params`.
 */
export function modelFromConfig(config: Config, where = 'config.json'): ConfigModel {
  const type = String(config.model_type ?? '');
  const architecture = Array.isArray(config.architectures) ? String(config.architectures[0] ?? '') : '';
  const dtype = dtypeOf(config.torch_dtype ?? config.dtype);
  const ctx: Builder = { tensors: [], dtype };
  let shape: TransformerShape;
  switch (type) {
    case 'gpt2':
      shape = buildGpt2(ctx, config, where);
      break;
    case 'bert':
      shape = buildBert(ctx, config, architecture, where);
      break;
    case 'llama':
    case 'mistral':
    case 'qwen2':
    case 'qwen3':
      shape = buildLlama(ctx, config, type, where);
      break;
    case 'vit':
      shape = buildVit(ctx, config, architecture, where);
      break;
    default:
      // The config is outside text: its model_type is shown escaped, never as raw terminal bytes.
      throw new GpumemError('INPUT_MALFORMED', `${printable(where)}: model_type "${printable(type.slice(0, 100))}" is not one gpumem can derive parameters for`, {
        hint: 'supported: gpt2, bert, llama, mistral, qwen2, qwen3, vit; otherwise give the model.safetensors file or --params',
      });
  }
  return { tensors: ctx.tensors, shape, architecture: architecture || type };
}

interface Builder {
  tensors: TensorInfo[];
  dtype: string;
}

function add(b: Builder, name: string, shape: number[]): void {
  const elements = shape.reduce((a, d) => a * d, 1);
  b.tensors.push({ name, dtype: b.dtype, shape, elements, sizeBytes: bytesForElements(b.dtype, elements) });
}

/** A Linear layer as PyTorch stores it: weight [out, in] and optionally bias [out]. */
function linear(b: Builder, name: string, inDim: number, outDim: number, bias: boolean): void {
  add(b, `${name}.weight`, [outDim, inDim]);
  if (bias) add(b, `${name}.bias`, [outDim]);
}

function norm(b: Builder, name: string, dim: number, bias: boolean): void {
  add(b, `${name}.weight`, [dim]);
  if (bias) add(b, `${name}.bias`, [dim]);
}

function buildGpt2(b: Builder, c: Config, where: string): TransformerShape {
  const h = int(c, 'n_embd', where);
  const L = int(c, 'n_layer', where);
  const a = int(c, 'n_head', where);
  const V = int(c, 'vocab_size', where);
  const P = int(c, 'n_positions', where);
  const f = optInt(c, 'n_inner', where) ?? 4 * h;
  divides(where, ['n_head', a], ['n_embd', h]);
  add(b, 'transformer.wte.weight', [V, h]);
  add(b, 'transformer.wpe.weight', [P, h]);
  for (let i = 0; i < L; i++) {
    const p = `transformer.h.${i}`;
    norm(b, `${p}.ln_1`, h, true);
    // GPT-2 uses Conv1D: weight stored [in, out]; same element count as a Linear.
    add(b, `${p}.attn.c_attn.weight`, [h, 3 * h]);
    add(b, `${p}.attn.c_attn.bias`, [3 * h]);
    add(b, `${p}.attn.c_proj.weight`, [h, h]);
    add(b, `${p}.attn.c_proj.bias`, [h]);
    norm(b, `${p}.ln_2`, h, true);
    add(b, `${p}.mlp.c_fc.weight`, [h, f]);
    add(b, `${p}.mlp.c_fc.bias`, [f]);
    add(b, `${p}.mlp.c_proj.weight`, [f, h]);
    add(b, `${p}.mlp.c_proj.bias`, [h]);
  }
  norm(b, 'transformer.ln_f', h, true);
  // lm_head is tied to wte in GPT2LMHeadModel, so it adds no parameters.
  const dropout = num(c, 'resid_pdrop') ?? 0.1;
  // GPT2Config's default activation is transformers' Python `gelu_new`.
  const geluSaves = geluSavesOf(c.activation_function ?? 'gelu_new');
  return { family: 'gpt2', layers: L, hidden: h, heads: a, kvHeads: a, headDim: h / a, intermediate: f, vocab: V, mlp: 'gelu', geluSaves, norm: 'layernorm', dropout, outputWidth: V, maxPositions: P };
}

function buildBert(b: Builder, c: Config, arch: string, where: string): TransformerShape {
  const h = int(c, 'hidden_size', where);
  const L = int(c, 'num_hidden_layers', where);
  const a = int(c, 'num_attention_heads', where);
  const V = int(c, 'vocab_size', where);
  const P = int(c, 'max_position_embeddings', where);
  const f = int(c, 'intermediate_size', where);
  const types = optInt(c, 'type_vocab_size', where) ?? 2;
  divides(where, ['num_attention_heads', a], ['hidden_size', h]);
  add(b, 'bert.embeddings.word_embeddings.weight', [V, h]);
  add(b, 'bert.embeddings.position_embeddings.weight', [P, h]);
  add(b, 'bert.embeddings.token_type_embeddings.weight', [types, h]);
  norm(b, 'bert.embeddings.LayerNorm', h, true);
  for (let i = 0; i < L; i++) {
    const p = `bert.encoder.layer.${i}`;
    for (const m of ['query', 'key', 'value']) linear(b, `${p}.attention.self.${m}`, h, h, true);
    linear(b, `${p}.attention.output.dense`, h, h, true);
    norm(b, `${p}.attention.output.LayerNorm`, h, true);
    linear(b, `${p}.intermediate.dense`, h, f, true);
    linear(b, `${p}.output.dense`, f, h, true);
    norm(b, `${p}.output.LayerNorm`, h, true);
  }
  const maskedLm = arch === 'BertForMaskedLM' || arch === 'BertForPreTraining';
  // BertForMaskedLM builds BertModel without the pooler; every other head keeps it.
  if (arch !== 'BertForMaskedLM') linear(b, 'bert.pooler.dense', h, h, true);
  let outputWidth = h;
  if (maskedLm) {
    linear(b, 'cls.predictions.transform.dense', h, h, true);
    norm(b, 'cls.predictions.transform.LayerNorm', h, true);
    add(b, 'cls.predictions.bias', [V]); // decoder weight is tied to word_embeddings
    outputWidth = V;
  }
  if (arch === 'BertForPreTraining') linear(b, 'cls.seq_relationship', h, 2, true);
  if (arch === 'BertForSequenceClassification') {
    outputWidth = labelCount(c);
    linear(b, 'classifier', h, outputWidth, true);
  }
  const dropout = num(c, 'hidden_dropout_prob') ?? 0.1;
  return { family: 'bert', layers: L, hidden: h, heads: a, kvHeads: a, headDim: h / a, intermediate: f, vocab: V, mlp: 'gelu', norm: 'layernorm', dropout, outputWidth, maxPositions: P };
}

function buildLlama(b: Builder, c: Config, type: string, where: string): TransformerShape {
  const h = int(c, 'hidden_size', where);
  const L = int(c, 'num_hidden_layers', where);
  const a = int(c, 'num_attention_heads', where);
  const k = optInt(c, 'num_key_value_heads', where) ?? a;
  const V = int(c, 'vocab_size', where);
  const f = int(c, 'intermediate_size', where);
  if (c.head_dim === undefined || c.head_dim === null) divides(where, ['num_attention_heads', a], ['hidden_size', h]);
  divides(where, ['num_key_value_heads', k], ['num_attention_heads', a]);
  const d = optInt(c, 'head_dim', where) ?? h / a;
  // Qwen2 puts biases on q/k/v only; Llama's `attention_bias` puts them on all four projections.
  const qkvBias = type === 'qwen2' || c.attention_bias === true;
  const oBias = type !== 'qwen2' && c.attention_bias === true;
  const mlpBias = c.mlp_bias === true;
  add(b, 'model.embed_tokens.weight', [V, h]);
  for (let i = 0; i < L; i++) {
    const p = `model.layers.${i}`;
    linear(b, `${p}.self_attn.q_proj`, h, a * d, qkvBias);
    linear(b, `${p}.self_attn.k_proj`, h, k * d, qkvBias);
    linear(b, `${p}.self_attn.v_proj`, h, k * d, qkvBias);
    linear(b, `${p}.self_attn.o_proj`, a * d, h, oBias);
    if (type === 'qwen3') {
      norm(b, `${p}.self_attn.q_norm`, d, false);
      norm(b, `${p}.self_attn.k_norm`, d, false);
    }
    linear(b, `${p}.mlp.gate_proj`, h, f, mlpBias);
    linear(b, `${p}.mlp.up_proj`, h, f, mlpBias);
    linear(b, `${p}.mlp.down_proj`, f, h, mlpBias);
    norm(b, `${p}.input_layernorm`, h, false);
    norm(b, `${p}.post_attention_layernorm`, h, false);
  }
  norm(b, 'model.norm', h, false);
  if (c.tie_word_embeddings !== true) linear(b, 'lm_head', h, V, false);
  const P = optInt(c, 'max_position_embeddings', where) ?? 4096;
  const dropout = num(c, 'attention_dropout') ?? 0;
  return { family: type, layers: L, hidden: h, heads: a, kvHeads: k, headDim: d, intermediate: f, vocab: V, mlp: 'swiglu', norm: 'rmsnorm', dropout, outputWidth: V, maxPositions: P };
}

function buildVit(b: Builder, c: Config, arch: string, where: string): TransformerShape {
  const h = int(c, 'hidden_size', where);
  const L = int(c, 'num_hidden_layers', where);
  const a = int(c, 'num_attention_heads', where);
  const f = int(c, 'intermediate_size', where);
  const image = optInt(c, 'image_size', where) ?? 224;
  const patch = optInt(c, 'patch_size', where) ?? 16;
  const channels = optInt(c, 'num_channels', where) ?? 3;
  divides(where, ['num_attention_heads', a], ['hidden_size', h]);
  divides(where, ['patch_size', patch], ['image_size', image]);
  const tokens = (image / patch) ** 2 + 1; // patches + [CLS]
  add(b, 'vit.embeddings.cls_token', [1, 1, h]);
  add(b, 'vit.embeddings.position_embeddings', [1, tokens, h]);
  add(b, 'vit.embeddings.patch_embeddings.projection.weight', [h, channels, patch, patch]);
  add(b, 'vit.embeddings.patch_embeddings.projection.bias', [h]);
  for (let i = 0; i < L; i++) {
    const p = `vit.encoder.layer.${i}`;
    for (const m of ['query', 'key', 'value']) linear(b, `${p}.attention.attention.${m}`, h, h, true);
    linear(b, `${p}.attention.output.dense`, h, h, true);
    linear(b, `${p}.intermediate.dense`, h, f, true);
    linear(b, `${p}.output.dense`, f, h, true);
    norm(b, `${p}.layernorm_before`, h, true);
    norm(b, `${p}.layernorm_after`, h, true);
  }
  norm(b, 'vit.layernorm', h, true);
  let outputWidth = h;
  if (arch === 'ViTForImageClassification') {
    outputWidth = labelCount(c);
    linear(b, 'classifier', h, outputWidth, true);
  } else {
    linear(b, 'vit.pooler.dense', h, h, true); // ViTModel's default pooler
  }
  const dropout = num(c, 'hidden_dropout_prob') ?? 0;
  return { family: 'vit', layers: L, hidden: h, heads: a, kvHeads: a, headDim: h / a, intermediate: f, vocab: 0, mlp: 'gelu', norm: 'layernorm', dropout, outputWidth, maxPositions: tokens };
}

/** Tensors a transformers activation keeps (TransformerShape.geluSaves): 4 for the Python `gelu_new`, else 1. */
function geluSavesOf(name: unknown): number {
  return name === 'gelu_new' ? 4 : 1;
}

function labelCount(c: Config): number {
  const labels = c.id2label;
  if (labels && typeof labels === 'object') return Math.max(1, Object.keys(labels).length);
  return optInt(c, 'num_labels') ?? 2;
}

function dtypeOf(value: unknown): string {
  const map: Record<string, string> = { float32: 'F32', float16: 'F16', bfloat16: 'BF16', float64: 'F64' };
  return (typeof value === 'string' && map[value]) || 'F32';
}

function num(c: Config, key: string): number | undefined {
  const v = c[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * Largest value gpumem accepts per size key, each far above any published model (the deepest have under 200
 * layers, the widest a hidden size of about 25,000, the largest vocabularies about 260,000). Beyond them the
 * config is crafted or damaged, and building its tensors would take minutes and gigabytes.
 */
export const CONFIG_LIMITS: Readonly<Record<string, number>> = {
  num_hidden_layers: 10_000, n_layer: 10_000,
  hidden_size: 1 << 20, n_embd: 1 << 20, intermediate_size: 1 << 22, n_inner: 1 << 22, head_dim: 1 << 16,
  num_attention_heads: 1 << 16, n_head: 1 << 16, num_key_value_heads: 1 << 16,
  vocab_size: 1 << 24, max_position_embeddings: 1 << 27, n_positions: 1 << 27, type_vocab_size: 1 << 16, num_labels: 1 << 20,
  image_size: 1 << 16, patch_size: 1 << 16, num_channels: 1 << 10,
};

function optInt(c: Config, key: string, where = 'config.json'): number | undefined {
  const v = c[key];
  if (!(typeof v === 'number' && Number.isSafeInteger(v) && v > 0)) return undefined;
  const limit = CONFIG_LIMITS[key];
  if (limit !== undefined && v > limit) {
    throw new GpumemError('INPUT_MALFORMED', `${where}: "${key}" is ${v}; gpumem estimates models with ${key} up to ${limit.toLocaleString('en-US')}`, {
      hint: 'no published model comes near this; check that this is the config.json that ships with the model',
    });
  }
  return v;
}

function int(c: Config, key: string, where: string): number {
  const v = optInt(c, key, where);
  if (v === undefined) {
    throw new GpumemError('INPUT_MALFORMED', `${where}: "${key}" is missing or not a positive integer`, {
      hint: 'use the config.json that ships with the model',
    });
  }
  return v;
}

/** `what` must divide evenly (heads into the hidden size, KV heads into heads, patches into the image). */
function divides(where: string, part: [string, number], whole: [string, number]): void {
  if (whole[1] % part[1] === 0) return;
  throw new GpumemError('INPUT_MALFORMED', `${where}: "${whole[0]}" ${whole[1]} is not a multiple of "${part[0]}" ${part[1]}`, {
    hint: 'the attention would not split evenly; check that this is the config.json that ships with the model',
  });
}
