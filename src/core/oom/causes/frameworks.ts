/**
 * Causes for frameworks with their own memory pool or driver calls: CuPy's and PaddlePaddle's pools, ONNX
 * Runtime's BFC arena, TensorRT's builder and runtime, MXNet's pooled storage, numba's driver calls, and
 * DeepSpeed's inference workspace. Each rule names the framework's own setting, with the printed numbers.
 */
import { b, type CauseRule } from './helpers.js';

/** Larger than any device made: a size computed from garbage (an unset dynamic dimension, an overflow). */
const CORRUPT_BYTES = 1n << 50n;

export const cupyPool: CauseRule = (event) => {
  if (event.family !== 'cupy') return null;
  const { requestedBytes: req, poolBytes: pool, allowedBytes: limit } = event;
  const overLimit = limit !== null && req !== null && (pool ?? 0n) + req > limit;
  return {
    id: overLimit ? 'cupy-pool-limit' : 'cupy-pool',
    score: overLimit ? 85 : 60,
    title: overLimit ? `CuPy's pool limit of ${b(limit)} was reached` : `CuPy's memory pool could not grow by ${b(req)}`,
    evidence: { requestedBytes: req, poolBytes: pool, limitBytes: limit },
    detail:
      `CuPy asked for ${b(req)} with ${b(pool)} already in its pool${limit !== null ? ` (limit ${b(limit)})` : ''}; ` +
      'the pool keeps freed blocks for reuse, so memory of arrays you no longer use stays on the GPU until the pool releases it.',
    fix: overLimit
      ? `Raise the limit (cupy.get_default_memory_pool().set_limit(size=…)) to at least ${b((pool ?? 0n) + (req ?? 0n))}, or free arrays and call free_all_blocks() first.`
      : 'Call cupy.get_default_memory_pool().free_all_blocks() between phases (after `del` of large arrays); with PyTorch in the same process each framework caches its own memory, so cap one (set_limit(fraction=0.5)) or process smaller chunks.',
  };
};

export const paddleAllocation: CauseRule = (event) => {
  if (event.family !== 'paddle') return null;
  const { requestedBytes: req, freeBytes: free, poolBytes: pool } = event;
  const own = pool !== null && req !== null && pool >= req;
  return {
    id: 'paddle-allocation',
    score: 60,
    title: `Paddle could not allocate ${b(req)} with ${b(free)} available`,
    evidence: { requestedBytes: req, freeBytes: free, poolBytes: pool },
    detail:
      `Paddle asked for ${b(req)} on GPU ${event.gpuIndex ?? '?'} with ${b(free)} available` +
      (pool !== null ? ` and ${b(pool)} already allocated by Paddle itself` : '') +
      (own ? ': its own allocations are the footprint.' : ': the rest is held by this run or other processes.'),
    fix:
      'Decrease the batch size; use FLAGS_allocator_strategy=auto_growth (allocate as needed instead of a fixed share); ' +
      'check `gpumem status` for other processes on the GPU and pick a free one with CUDA_VISIBLE_DEVICES.',
  };
};

export const onnxRuntimeArena: CauseRule = (event) => {
  if (event.family !== 'onnxruntime') return null;
  const req = event.requestedBytes;
  if (req !== null && req >= CORRUPT_BYTES) {
    return {
      id: 'corrupt-size',
      score: 95,
      title: `The requested size is corrupt (${b(req)})`,
      evidence: { requestedBytes: req },
      detail: `No device has ${b(req)}: the buffer size was computed from a wrong shape (an unset dynamic dimension, an overflow).`,
      fix: 'Check the input shapes the session receives against the model\'s inputs (dynamic axes, batch of 0 or -1); freeing memory will not help.',
    };
  }
  return {
    id: 'onnxruntime-arena',
    score: 60,
    title: `ONNX Runtime's arena could not grow by ${b(req)}`,
    evidence: { requestedBytes: req },
    detail: `The BFC arena asked the device for ${b(req)} more; by default it grows in doubling steps and never returns memory, so each session keeps its peak.`,
    fix: "Set the CUDA provider's arena_extend_strategy to kSameAsRequested and a gpu_mem_limit; run smaller batches; with several sessions or models on one GPU, cap each one's gpu_mem_limit so they fit together.",
  };
};

export const tensorRtMemory: CauseRule = (event) => {
  if (event.family !== 'tensorrt') return null;
  const req = event.requestedBytes;
  const tactic = /could not be allocated/i.test(event.message);
  return {
    id: 'tensorrt-memory',
    score: tactic ? 40 : 60,
    title: tactic ? `TensorRT skipped a tactic that needed ${b(req)}` : `TensorRT ran out of device memory${req !== null ? ` (${b(req)})` : ''}`,
    evidence: { requestedBytes: req, tacticSkipped: tactic },
    detail: tactic
      ? `The builder tried a kernel that wanted ${b(req)} of workspace; it skips it and goes on, so the engine may be slower but is built.`
      : 'Building or running the engine needed more device memory than was free.',
    fix: 'Lower the workspace pool (IBuilderConfig::setMemoryPoolLimit(kWORKSPACE, …), trtexec --memPoolSize=workspace:…), build with smaller optimisation-profile shapes (max batch and sequence), use FP16/INT8, and free other GPU users while building.',
  };
};

export const mxnetPool: CauseRule = (event) => {
  if (event.family !== 'mxnet') return null;
  return {
    id: 'mxnet-pool',
    score: 55,
    title: "MXNet's pooled storage could not get more device memory",
    evidence: {},
    detail: 'MXNet keeps freed blocks in its pool (and retries once after releasing them); the failure means the live arrays plus the pool filled the GPU.',
    fix: 'Decrease the batch size; set MXNET_GPU_MEM_POOL_TYPE=Round (fewer size classes) or raise MXNET_GPU_MEM_POOL_RESERVE; run one training process per GPU.',
  };
};

export const numbaDriver: CauseRule = (event) => {
  if (event.family !== 'numba') return null;
  const host = /HostAlloc/i.test(event.backend ?? '');
  return {
    id: host ? 'numba-pinned-host' : 'numba-driver',
    score: 55,
    title: host ? 'numba could not allocate pinned host memory' : `numba's ${event.backend ?? 'cuMemAlloc'} found the GPU full`,
    evidence: { call: event.backend },
    detail: host
      ? 'cuMemHostAlloc pins host RAM; it fails when the host is short of memory or the pinned limit is reached, not the GPU.'
      : 'numba allocates with the driver directly, outside any framework pool: memory cached by PyTorch, CuPy or RMM in the same process is invisible to it.',
    fix: host
      ? 'Pin less (smaller staging buffers) or use pageable arrays.'
      : "Let numba allocate through the other library's pool (an External Memory Management plugin: RMM's or CuPy's), or release their caches first (torch.cuda.empty_cache(), cupy's free_all_blocks()), and delete device arrays you no longer need.",
  };
};

export const deepspeedWorkspace: CauseRule = (event) => {
  if (event.family !== 'deepspeed') return null;
  const { requestedBytes: req, freeBytes: free, totalBytes: total } = event;
  return {
    id: 'deepspeed-workspace',
    score: 65,
    title: `DeepSpeed's inference workspace of ${b(req)} did not fit (${b(free)} free)`,
    evidence: { requestedBytes: req, freeBytes: free, totalBytes: total },
    detail: `DeepSpeed's inference kernels reserve one workspace, sized from the first batch and max_out_tokens; it asked for ${b(req)} with ${b(free)} free of ${b(total)}.`,
    fix: 'Lower max_out_tokens (and the batch) in deepspeed.init_inference, keep other models off this GPU, or run without kernel injection (replace_with_kernel_inject=False).',
  };
};
