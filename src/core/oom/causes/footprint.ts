/**
 * Rules about the total footprint: a small request on a full device (the culprit is everything already
 * allocated, not that tensor), memory outside PyTorch's allocator (context, cuBLAS/cuDNN workspaces,
 * NCCL), and CUDA-graph private pools.
 */
import { b, GiB, MiB, pct, shortfallOf, unallocatedOf, type CauseRule } from './helpers.js';

export const fullDevice: CauseRule = (event) => {
  const { requestedBytes: req, freeBytes: free, totalBytes: total } = event;
  // DeepSpeed's inference workspace has its own rule; training advice does not fit it.
  if (req === null || free === null || total === null || req > total || event.family === 'deepspeed') return null;
  const short = shortfallOf(event);
  if (short === null) return null;
  const small = req <= 20n * MiB;
  const allocated = event.allocatedByPytorchBytes;
  const share = allocated !== null ? ` PyTorch has ${b(allocated)} allocated (${pct(allocated, total)} of the GPU).` : '';
  return {
    id: small ? 'small-request-full-device' : 'footprint-too-large',
    score: small ? 75 : 65,
    title: small ? `A ${b(req)} request failed: the GPU is full` : `The run needs at least ${b(short)} more than the GPU had free`,
    evidence: { requestedBytes: req, freeBytes: free, totalBytes: total, shortfallBytes: short, allocatedByPytorchBytes: allocated },
    detail:
      `${b(req)} was requested with only ${b(free)} free of ${b(total)}, so at least ${b(short)} must be freed.${share}` +
      (small ? ' A request this small means the total footprint is the problem, not this tensor.' : ''),
    fix:
      `Free at least ${b(short)}: halve the batch size and double gradient accumulation (same effective batch; activation memory halves), ` +
      'or enable activation checkpointing, or train in bf16/fp16 autocast (activations about half the size); `gpumem fit` finds the largest batch that fits.',
  };
};

export const nonPytorchMemory: CauseRule = (event) => {
  const inUse = event.processInUseBytes;
  const allocated = event.allocatedByPytorchBytes;
  const unallocated = unallocatedOf(event);
  if (inUse === null || inUse === 0n || allocated === null || !unallocated) return null;
  const other = inUse - allocated - unallocated.bytes;
  if (other < GiB) return null;
  return {
    id: 'non-pytorch-memory',
    score: 45,
    title: `${b(other)} of this process is outside PyTorch's allocator`,
    evidence: { processInUseBytes: inUse, allocatedByPytorchBytes: allocated, reservedUnallocatedBytes: unallocated.bytes, nonPytorchBytes: other },
    detail: `This process uses ${b(inUse)}, of which PyTorch accounts for ${b(allocated + unallocated.bytes)}; the other ${b(other)} is the CUDA context (usually 0.3–0.6 GiB), cuBLAS/cuDNN workspaces, NCCL buffers or libraries allocating directly.`,
    fix: `Look for what allocates outside PyTorch (TensorRT, xformers, CuPy, a second framework); cap cuBLAS workspaces with CUBLAS_WORKSPACE_CONFIG=:4096:8 and NCCL buffers with NCCL_BUFFSIZE=4194304 if they account for the ${b(other)}.`,
  };
};

export const privatePools: CauseRule = (event) => {
  const pools = event.privatePoolBytes;
  if (pools === null || pools === 0n) return null;
  const req = event.requestedBytes;
  const allocated = event.allocatedByPytorchBytes;
  if (!((req !== null && pools >= req) || (allocated !== null && pools * 10n >= allocated))) return null;
  return {
    id: 'private-pools',
    score: 60,
    title: `${b(pools)} sit in CUDA-graph private pools`,
    evidence: { privatePoolBytes: pools, allocatedByPytorchBytes: allocated, requestedBytes: req },
    detail: `${b(pools)} of the ${b(allocated)} allocated belong to private pools (CUDA graphs, torch.compile mode="reduce-overhead", vLLM cudagraphs); the normal allocator cannot reuse them.`,
    fix: 'Capture fewer graph shapes (fixed batch sizes), use torch.compile(mode="default") or "max-autotune-no-cudagraphs", or lower the cudagraph capture sizes.',
  };
};
