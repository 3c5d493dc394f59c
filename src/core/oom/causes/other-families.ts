/**
 * Causes for messages that carry few or no numbers: allocations outside the caching allocator (CUDA
 * runtime, cuBLAS, cuDNN, NCCL), MPS where Metal's own allocations dominate, and TensorFlow/JAX, whose
 * allocators take most of the GPU up front.
 */
import { b, GiB, type CauseRule } from './helpers.js';

export const outsideAllocator: CauseRule = (event, context) => {
  if (!['cuda-runtime', 'cublas', 'cudnn', 'nccl'].includes(event.family)) return null;
  const what: Record<string, string> = {
    'cuda-runtime': 'a CUDA context, a kernel launch or pinned host memory',
    cublas: 'the cuBLAS handle and its workspace',
    cudnn: 'the cuDNN workspace',
    nccl: `NCCL communication buffers${event.requestedBytes !== null ? ` (this calloc: ${b(event.requestedBytes)})` : ''}`,
  };
  const live = context.liveChecked && context.liveProcesses ? context.liveProcesses : null;
  const liveTotal = live ? live.reduce((s, p) => s + BigInt(p.usedBytes ?? 0), 0n) : null;
  return {
    id: 'outside-allocator',
    score: 60,
    title: `Memory ran out outside PyTorch's caching allocator (${event.family})`,
    evidence: { family: event.family, requestedBytes: event.requestedBytes, liveProcessesBytes: liveTotal },
    detail:
      `The failed allocation was for ${what[event.family] ?? 'a library buffer'}, which PyTorch's allocator does not manage: the GPU was already full, usually because PyTorch's cache or another process held the rest.` +
      (liveTotal !== null && live ? ` Right now ${live.length} process(es) hold ${b(liveTotal)} on the GPUs.` : ''),
    fix: 'Leave headroom for libraries: cap PyTorch with torch.cuda.set_per_process_memory_fraction(0.9) (10% stays free), initialise NCCL/cuBLAS before the first large allocation, and check `gpumem status` for other processes on the GPU.',
  };
};

export const mpsOtherAllocations: CauseRule = (event) => {
  const mps = event.mps;
  if (!mps || mps.otherAllocationsBytes === null || mps.mpsAllocatedBytes === null) return null;
  const other = mps.otherAllocationsBytes;
  const own = mps.mpsAllocatedBytes;
  const allowed = event.allowedBytes;
  const dominated = other > own;
  const headline = dominated ? `Metal's own allocations (${b(other)}) exceed PyTorch's (${b(own)})` : `PyTorch's MPS heap holds ${b(own)}`;
  const need = allowed !== null && event.requestedBytes !== null ? own + other + event.requestedBytes - allowed : null;
  return {
    id: dominated ? 'mps-other-allocations' : 'mps-limit',
    score: 70,
    title: headline,
    evidence: { mpsAllocatedBytes: own, otherAllocationsBytes: other, allowedBytes: allowed, requestedBytes: event.requestedBytes },
    detail:
      `MPS allocated ${b(own)}, other allocations ${b(other)}${allowed !== null ? `, against a limit of ${b(allowed)} (the high-watermark ratio × the recommended working set)` : ''}` +
      (need !== null && need > 0n ? `; ${b(need)} more than the limit was needed.` : '.') +
      (dominated ? ' "Other allocations" are Metal/MPSGraph buffers PyTorch does not manage.' : ''),
    fix: `Reduce the batch so ${need !== null && need > 0n ? `at least ${b(need)}` : 'the footprint'} is freed, and call torch.mps.empty_cache() between phases; PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 removes the limit but can make macOS unresponsive.`,
  };
};

export const preallocatingFrameworks: CauseRule = (event) => {
  if (event.family !== 'xla' && event.family !== 'tensorflow') return null;
  const req = event.requestedBytes ?? event.tensor?.bytes ?? null;
  const shape = event.tensor ? ` (shape [${event.tensor.shape.join(', ')}] of ${event.tensor.dtype})` : '';
  const jax = event.family === 'xla';
  return {
    id: jax ? 'xla-allocation' : 'tensorflow-allocation',
    score: 55,
    title: req !== null ? `A ${b(req)} buffer did not fit${shape}` : 'An allocation did not fit',
    evidence: { requestedBytes: req, derivedFromShape: event.requestedBytes === null && req !== null, largeRequest: req !== null && req >= GiB },
    detail:
      (req !== null ? `The failed buffer is ${b(req)}${shape}${event.requestedBytes === null ? ', computed from shape × element size' : ''}. ` : '') +
      (jax ? 'JAX preallocates 75% of the GPU at start, so other processes and a second JAX process get only the rest.' : 'TensorFlow grabs nearly all GPU memory at start unless memory growth is enabled.'),
    fix: jax
      ? `Halve the batch (${req !== null ? `the buffer becomes about ${b(req / 2n)}` : 'buffers scale with it'}) or use rematerialisation (jax.checkpoint); with other GPU users set XLA_PYTHON_CLIENT_MEM_FRACTION=.5 or XLA_PYTHON_CLIENT_PREALLOCATE=false.`
      : `Halve the batch (${req !== null ? `this tensor becomes ${b(req / 2n)}` : 'tensors scale with it'}), and call tf.config.experimental.set_memory_growth(gpu, True) when other processes share the GPU.`,
  };
};

