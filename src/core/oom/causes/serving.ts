/**
 * Causes for inference servers whose OOM is a sizing decision, not a leak: llama.cpp's device buffers (model
 * weights, KV cache, compute buffer; the fix is how much goes to the GPU) and vLLM's start-up KV-cache check
 * (max_model_len against the memory left under gpu_memory_utilization).
 */
import { b, type CauseRule } from './helpers.js';

/** Which llama.cpp buffer failed, from the function that reported it. */
function ggmlBuffer(message: string): 'weights' | 'compute' | 'kv' | null {
  if (/alloc_tensor_range|load_tensors|llama_model_load/i.test(message)) return 'weights';
  if (/kv_cache_init|KV buffer/i.test(message)) return 'kv';
  if (/gallocr|compute buffer|graph_reserve/i.test(message)) return 'compute';
  return null;
}

export const llamaCppBuffer: CauseRule = (event) => {
  if (!event.family.startsWith('ggml-')) return null;
  const size = event.requestedBytes;
  const buffer = ggmlBuffer(event.message);
  const where = event.backend ?? event.family.slice(5);
  const fixes: Record<'weights' | 'compute' | 'kv', string> = {
    weights: 'offload fewer layers (lower -ngl / --n-gpu-layers until the weights fit; the rest run on the CPU), or use a smaller quantisation of the model (Q4_K_M instead of Q8_0)',
    kv: 'use a smaller context (-c), or quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0, about half of f16)',
    compute: 'use a smaller micro-batch (-ub 256 or 128), turn on flash attention (-fa), or a smaller context (-c)',
  };
  const fix = buffer
    ? `${fixes[buffer].charAt(0).toUpperCase()}${fixes[buffer].slice(1)}.`
    : `In order of effect: ${fixes.weights}; ${fixes.kv}; ${fixes.compute}.`;
  return {
    id: 'llama-cpp-buffer',
    score: 70,
    title: `llama.cpp could not allocate a ${size !== null ? `${b(size)} ` : ''}${buffer === 'weights' ? 'model-weights' : buffer === 'kv' ? 'KV-cache' : buffer === 'compute' ? 'compute' : 'device'} buffer on ${where}`,
    evidence: { requestedBytes: size, buffer: buffer ?? 'unknown', backend: where },
    detail:
      `The ${where} buffer of ${b(size)} did not fit in the memory left on the device` +
      (event.family === 'ggml-metal' ? ' (Metal caps one process near recommendedMaxWorkingSetSize, about 2/3–3/4 of unified memory)' : '') +
      '. llama.cpp sizes its buffers from -ngl, -c and -ub, so the fix is a setting, not a leak.',
    fix: `${fix} With several GPUs, --tensor-split moves part of it to the others.`,
  };
};

export const vllmKvCache: CauseRule = (event) => {
  if (event.family !== 'vllm-kv-cache') return null;
  const kv = event.kvCache;
  const common = 'or give the cache more room: raise --gpu-memory-utilization (default 0.9), split the weights over GPUs with --tensor-parallel-size 2, load quantised weights (--quantization fp8/awq), or store the cache in fp8 (--kv-cache-dtype fp8, half of bf16)';
  if (!kv) {
    return {
      id: 'vllm-no-cache-memory',
      score: 70,
      title: 'Nothing was left for the KV cache after the weights and the profiling run',
      evidence: {},
      detail: 'vLLM gives itself gpu_memory_utilization × the GPU; the weights, the activation peak of its profiling run and CUDA graphs used all of it (memory held by other processes on the GPU counts against the same budget).',
      fix: `Check \`gpumem status\` for other processes on the GPU; lower --max-num-seqs or --max-num-batched-tokens (smaller activation peak), add --enforce-eager (no CUDA graphs), ${common}.`,
    };
  }
  const len = kv.maxModelLenTokens;
  if (kv.cacheTokens !== null) {
    return {
      id: 'vllm-kv-cache',
      score: 75,
      title: `max_model_len ${len} is longer than the ${kv.cacheTokens} tokens the KV cache holds`,
      evidence: { maxModelLenTokens: len, cacheTokens: kv.cacheTokens },
      detail: `One request of ${len} tokens needs more KV cache than the ${kv.cacheTokens} tokens that fit in the memory left after the weights.`,
      fix: `Set --max-model-len ${kv.cacheTokens} (or less), ${common}.`,
    };
  }
  const short = kv.neededBytes !== null && kv.availableBytes !== null ? kv.neededBytes - kv.availableBytes : null;
  const fitting = kv.estimatedMaxModelLenTokens;
  return {
    id: 'vllm-kv-cache',
    score: 75,
    title: `max_model_len ${len} needs ${b(kv.neededBytes)} of KV cache; ${b(kv.availableBytes)} is available`,
    evidence: { maxModelLenTokens: len, neededBytes: kv.neededBytes, availableBytes: kv.availableBytes, shortfallBytes: short, estimatedMaxModelLenTokens: fitting },
    detail: `One request of ${len} tokens needs ${b(kv.neededBytes)} of KV cache; after the weights and activations ${b(kv.availableBytes)} is left${short !== null && short > 0n ? `, ${b(short)} short` : ''} (vLLM rounds these to 0.01 GiB).`,
    fix: `${fitting !== null ? `Set --max-model-len ${fitting} (what vLLM estimates fits)` : 'Lower --max-model-len'}, ${common}${short !== null && short > 0n ? `; the cache needs ${b(short)} more` : ''}.`,
  };
};
