/**
 * Model states per GPU: weights, gradients, optimizer states, EMA copy, and the step-time transients, each
 * computed from the trainable tensors rather than one bytes-per-parameter multiplier (reference §4.1, §7.1).
 */
import { GpumemError } from '../errors.js';
import { isUnderPrefix } from './tensors.js';
import { precisionBytes, type ModelInput, type TrainingSetup } from './setup.js';
import type { TensorInfo } from './safetensors.js';
import { roundAllocation } from './allocator.js';

export interface ModelStates {
  totalParams: number;
  trainableParams: number;
  /** Non-trainable tensors such as BatchNorm running statistics. */
  bufferParams: number;
  loraParams: number;
  weightsBytes: number;
  gradientsBytes: number;
  optimizerStatesBytes: number;
  emaBytes: number;
  /** Extra memory inside optimizer.step(): foreach intermediates (PyTorch issue #97712). */
  stepTransientBytes: number;
  /** 16-bit copies autocast makes of matmul weights and keeps for backward (AMP only). */
  autocastCopyBytes: number;
  /** ZeRO-3/FSDP: the unsharded blocks and collective buffers alive in forward (see {@link fsdpBuffers}). */
  gatheredForwardBytes: number;
  /** ZeRO-3/FSDP: the same in backward, where the gradients' reduce-scatter joins them. */
  gatheredBackwardBytes: number;
  /** Allocator rounding of the persistent tensors (reference §4.6). */
  roundingSlackBytes: number;
}

const BUFFER_SUFFIXES = ['.running_mean', '.running_var', '.num_batches_tracked'];

/** True for tensors a state_dict holds that are buffers, not parameters (never trained). */
export function isBuffer(name: string): boolean {
  return BUFFER_SUFFIXES.some((s) => name.endsWith(s));
}

/**
 * Computes the model states for `setup`. Trainable = every parameter not under a frozen prefix (all base
 * weights when LoRA is on, plus the adapters). Sharding divides what ZeRO/FSDP partition: ZeRO-1 optimizer
 * states, ZeRO-2 also gradients, ZeRO-3/FSDP also weights (DeepSpeed estimator formulas, reference §2).
 */
export function computeModelStates(model: ModelInput, setup: TrainingSetup): ModelStates {
  const bytes = precisionBytes(setup.precision);
  const tensors = model.tensors;
  if (!tensors && setup.freeze.length > 0) {
    throw new GpumemError('USAGE', 'freezing by module prefix needs parameter names', {
      hint: 'give a safetensors file or config.json instead of --params',
    });
  }
  const all: TensorInfo[] = tensors ?? [syntheticTensor(model.totalParams)];
  const buffers = all.filter((t) => isBuffer(t.name));
  const params = all.filter((t) => !isBuffer(t.name));
  const lora = setup.loraRank > 0 ? loraTensors(model, setup) : [];
  const trainable = setup.loraRank > 0 ? lora : params.filter((t) => !setup.freeze.some((p) => isUnderPrefix(t.name, p)));

  const n = setup.sharding === 'none' ? 1 : Math.max(1, setup.gpus);
  const shardWeights = setup.sharding === 'zero3' || setup.sharding === 'fsdp' ? n : 1;
  const shardGrads = setup.sharding === 'zero2' || shardWeights > 1 ? n : 1;
  const shardStates = n;

  const sum = (list: readonly TensorInfo[]): number => list.reduce((a, t) => a + t.elements, 0);
  const totalParams = sum(params) + sum(buffers);
  const trainableParams = sum(trainable);
  const weightsBytes = Math.ceil(((sum(params) + sum(lora)) * bytes.weight + bufferBytes(buffers)) / shardWeights);
  const gradientsBytes = Math.ceil((trainableParams * bytes.grad) / shardGrads);
  const optimizerStatesBytes = Math.ceil(optimizerStateBytes(trainable, setup, bytes.state) / shardStates);
  const emaBytes = setup.ema ? Math.ceil(((sum(params) + sum(buffers)) * bytes.weight) / shardWeights) : 0;
  const stepTransientBytes = Math.ceil(stepTransient(trainable, setup, bytes.state) / shardStates);
  const amp = setup.precision === 'amp-bf16' || setup.precision === 'amp-fp16';
  // Only matrices go through autocast's matmul path; norms and biases stay fp32.
  const matrices = params.filter((t) => t.shape.length >= 2 || tensors === null);
  const autocastCopyBytes = amp ? Math.ceil((sum(matrices) * 2) / shardWeights) : 0;
  const gathered = shardWeights > 1 ? fsdpBuffers(model, params, trainable, bytes.activation, bytes.grad) : { forward: 0, backward: 0 };
  const persistent = [...params, ...lora];
  const roundingSlackBytes = tensors
    ? persistent.reduce((a, t) => a + (roundAllocation(t.elements * bytes.weight) - t.elements * bytes.weight), 0)
    : 0;
  return {
    totalParams,
    trainableParams,
    bufferParams: sum(buffers),
    loraParams: sum(lora),
    weightsBytes,
    gradientsBytes,
    optimizerStatesBytes,
    emaBytes,
    stepTransientBytes,
    autocastCopyBytes,
    gatheredForwardBytes: gathered.forward,
    gatheredBackwardBytes: gathered.backward,
    roundingSlackBytes: Math.ceil(roundingSlackBytes / shardWeights),
  };
}

function bufferBytes(buffers: readonly TensorInfo[]): number {
  // Running statistics stay fp32 under autocast; num_batches_tracked is int64.
  return buffers.reduce((a, t) => a + (t.name.endsWith('.num_batches_tracked') ? 8 : 4) * t.elements, 0);
}

/**
 * Optimizer state bytes for the trainable tensors. Adam/AdamW keep m and v; SGD with momentum one buffer;
 * Adafactor factored second moments (rows + columns for a matrix, the full vector otherwise; no first
 * moment by default); bitsandbytes 8-bit Adam 1 byte per state with one fp32 absmax per 2048-element
 * block, and full 32-bit states for tensors under 4096 elements (bnb `min_8bit_size`).
 */
function optimizerStateBytes(trainable: readonly TensorInfo[], setup: TrainingSetup, stateBytes: number): number {
  let total = 0;
  for (const t of trainable) {
    switch (setup.optimizer) {
      case 'adam':
      case 'adamw':
        total += 2 * t.elements * stateBytes;
        break;
      case 'sgd':
        break;
      case 'sgd-momentum':
        total += t.elements * stateBytes;
        break;
      case 'adafactor': {
        if (t.name === '*') {
          throw new GpumemError('USAGE', 'Adafactor state size depends on tensor shapes', {
            hint: 'give a safetensors file or config.json instead of --params',
          });
        }
        const [rows, cols] = t.shape.length >= 2 ? [t.shape[0] as number, t.elements / (t.shape[0] as number)] : [t.elements, 0];
        total += (t.shape.length >= 2 ? rows + cols : rows) * 4;
        break;
      }
      case 'adam8bit':
        total += t.elements < 4096 ? 2 * t.elements * 4 : 2 * (t.elements + Math.ceil(t.elements / 2048) * 4);
        break;
    }
  }
  return total;
}

/**
 * The optimizer step's temporary memory. foreach Adam/AdamW materialises sqrt(v) for every parameter of the
 * group at once (≈ one state-sized copy of all trainable params, PyTorch #97712, torchtune PR #389); the
 * for-loop variant needs that only for the largest tensor; fused kernels need none.
 */
function stepTransient(trainable: readonly TensorInfo[], setup: TrainingSetup, stateBytes: number): number {
  if (setup.optimizer !== 'adam' && setup.optimizer !== 'adamw') return 0;
  if (setup.optimizerImpl === 'fused') return 0;
  if (setup.optimizerImpl === 'for-loop') return Math.max(0, ...trainable.map((t) => t.elements)) * stateBytes;
  return trainable.reduce((a, t) => a + t.elements, 0) * stateBytes;
}

/** LoRA adapters: A [r, in] and B [out, r] for every matrix whose module name is one of `loraModules`. */
function loraTensors(model: ModelInput, setup: TrainingSetup): TensorInfo[] {
  const r = setup.loraRank;
  const out: TensorInfo[] = [];
  const targets = new Set(setup.loraModules);
  const source = model.tensors ?? syntheticLlamaMatrices(model);
  for (const t of source) {
    const parts = t.name.split('.');
    if (parts[parts.length - 1] !== 'weight' || t.shape.length !== 2) continue;
    if (!targets.has(parts[parts.length - 2] ?? '')) continue;
    const [outDim, inDim] = t.shape as [number, number];
    const elements = r * (inDim + outDim);
    out.push({ name: t.name.replace(/\.weight$/, '.lora'), dtype: 'F32', shape: [elements], elements, sizeBytes: elements * 4 });
  }
  if (out.length === 0) {
    throw new GpumemError('USAGE', `LoRA targets ${setup.loraModules.join(', ')} match no weight matrix in ${model.label}`, {
      hint: 'name the modules as they appear in the parameter names, e.g. --lora-modules q_proj,v_proj',
    });
  }
  return out;
}

/** Llama-shaped projection matrices for `--params` with `--layers/--hidden`, so LoRA can be sized. */
function syntheticLlamaMatrices(model: ModelInput): TensorInfo[] {
  const s = model.shape;
  if (!s) {
    throw new GpumemError('USAGE', 'LoRA needs the model shape', { hint: 'give a config.json, a safetensors file, or --layers and --hidden' });
  }
  const m = (name: string, o: number, i: number): TensorInfo => ({ name: `${name}.weight`, dtype: 'F32', shape: [o, i], elements: o * i, sizeBytes: 0 });
  const list: TensorInfo[] = [];
  for (let l = 0; l < s.layers; l++) {
    const p = `model.layers.${l}`;
    list.push(m(`${p}.self_attn.q_proj`, s.heads * s.headDim, s.hidden), m(`${p}.self_attn.k_proj`, s.kvHeads * s.headDim, s.hidden));
    list.push(m(`${p}.self_attn.v_proj`, s.kvHeads * s.headDim, s.hidden), m(`${p}.self_attn.o_proj`, s.hidden, s.heads * s.headDim));
    list.push(m(`${p}.mlp.gate_proj`, s.intermediate, s.hidden), m(`${p}.mlp.up_proj`, s.intermediate, s.hidden), m(`${p}.mlp.down_proj`, s.hidden, s.intermediate));
  }
  return list;
}

/**
 * FSDP2's buffers per rank, for the usual recipe (`fully_shard` on every block, then on the root), read from
 * torch 2.15's torch/distributed/fsdp/_fully_shard/. B = the largest block's parameters, R = those outside
 * every block (embeddings, output head, final norm: the root's group), g = the dtype FSDP2 gathers in
 * (MixedPrecisionPolicy.param_dtype: 16-bit under mixed precision), r = the reduce dtype (the gradients'):
 * - forward: the block being computed, gathered (B·g: `foreach_all_gather` allocates the all-gather output,
 *   the unsharded parameters are views of it, freed at post_forward when reshard_after_forward), and the next
 *   block's all-gather issued ahead of it (B·g); the root's parameters are gathered once and not resharded
 *   after forward (`_fsdp_state.py`: "For the root, do not reshard after forward"), R·g for the whole step.
 * - backward, inside a block: that block gathered again (B·g), the block before it prefetched
 *   (`FSDPParamGroup._backward_prefetch`, one group by default: B·g), the block's own unsharded gradients
 *   (T·g, T = the block's trainable parameters, B without LoRA or freezing), and the previous block's
 *   reduce-scatter input kept alive until this block's
 *   reduce (`reduce_scatter_states`, `reduce_scatter_max_input_buffers` = 1: T·r); plus the root's R·g.
 *   The reduce-scatter output is the new gradient shard, counted with the gradients.
 * Not counted: the root's unsharded gradients (reduced once, at the end of backward: the output head's
 * gradient exists through the blocks' backward), which the block gradients counted in full (only part of
 * them exist at the peak) roughly offset. ZeRO-3 (DeepSpeed) is counted the same way, one block prefetched.
 */
export function fsdpBuffers(
  model: ModelInput,
  params: readonly TensorInfo[],
  trainable: readonly TensorInfo[],
  gatherBytes: number,
  reduceBytes: number,
): { forward: number; backward: number } {
  // The blocks are the numbered modules; an embedding may be larger, but it sits in the root's group.
  const inBlock = (t: TensorInfo): boolean => t.name.split('.').some((p) => /^\d+$/.test(p));
  const blocks = params.filter(inBlock);
  const block = largestLayerParams(model, blocks.length > 0 ? blocks : params);
  const rest = model.tensors && blocks.length > 0 ? params.filter((t) => !inBlock(t)).reduce((a, t) => a + t.elements, 0) : 0;
  // Frozen parameters are gathered but get no gradient: only the trainable ones (LoRA's adapters) are reduced.
  const trainedBlocks = trainable.filter(inBlock);
  const trained = trainable.length === 0 ? 0 : largestLayerParams(model, trainedBlocks.length > 0 ? trainedBlocks : trainable);
  return {
    forward: 2 * block * gatherBytes + rest * gatherBytes,
    backward: 2 * block * gatherBytes + trained * (gatherBytes + reduceBytes) + rest * gatherBytes,
  };
}

/** The parameters of the largest block ("model.layers.7", "backbone.layer3"), or of the largest tensor. */
export function largestLayerParams(model: ModelInput, params: readonly TensorInfo[]): number {
  if (!model.tensors) return model.shape ? Math.ceil(model.totalParams / model.shape.layers) : model.totalParams;
  const blocks = new Map<string, number>();
  for (const t of params) {
    const parts = t.name.split('.');
    const idx = parts.findIndex((p) => /^\d+$/.test(p));
    const key = idx >= 0 ? parts.slice(0, idx + 1).join('.') : parts.slice(0, -1).join('.');
    blocks.set(key, (blocks.get(key) ?? 0) + t.elements);
  }
  return Math.max(0, ...blocks.values());
}

function syntheticTensor(elements: number): TensorInfo {
  return { name: '*', dtype: 'F32', shape: [elements], elements, sizeBytes: elements * 4 };
}
