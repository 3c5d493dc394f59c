/**
 * One test per family and era the corpus does not already cover, from the exact templates in the
 * reference (§A.2, §A.6), with real-world wrappers around them.
 */
import { describe, expect, it } from 'vitest';
import { parseOomText, type OomEvent } from '../../../src/core/oom/index.js';

const G = 2n ** 30n;
const M = 2n ** 20n;
function one(text: string): OomEvent {
  const events = parseOomText(text);
  expect(events).toHaveLength(1);
  return events[0] as OomEvent;
}

describe('families and eras', () => {
  it('THC era (no sizes)', () => {
    const e = one('RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:58');
    expect(e.family).toBe('pytorch-cuda');
    expect(e.era?.version).toBe('≤0.4');
    expect(e.requestedBytes).toBeNull();
  });

  it('v2 with allowed (memory fraction)', () => {
    const e = one('RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 7.60 GiB already allocated; 6.81 GiB free; 7.89 GiB allowed; 7.62 GiB reserved in total by PyTorch)');
    expect(e.allowedBytes).toBe(BigInt(Math.round(7.89 * 2 ** 30)));
    expect(e.reservedTotalBytes).toBe(BigInt(Math.round(7.62 * 2 ** 30)));
    expect(e.era?.version).toBe('1.4–1.9');
  });

  it('v3 with RuntimeError is 1.10–1.12', () => {
    const e = one('RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.00 GiB already allocated; 0 bytes free; 3.10 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF');
    expect(e.era?.version).toBe('1.10–1.12');
  });

  it('v4 2.1 typo with process lines in NVML order', () => {
    const e = one('torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacty of 23.65 GiB of which 1.06 MiB is free. Process 1234 has 1.19 GiB memory in use. Including non-PyTorch memory, this process has 22.44 GiB memory in use. Process 99 has 17179869184.00 GiB memory in use. Of the allocated memory 21.80 GiB is allocated by PyTorch, and 120.50 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF');
    expect(e.era?.version).toBe('2.1');
    expect(e.processInUseBytes).toBe(BigInt(Math.round(22.44 * 2 ** 30)));
    expect(e.otherProcesses).toEqual([{ pid: 1234, bytes: BigInt(Math.round(1.19 * 2 ** 30)) }, { pid: 99, bytes: null }]);
    expect(e.unavailable['otherProcesses.99']).toMatch(/sentinel/);
  });

  it('v6 PYTORCH_ALLOC_CONF and v7 docs link', () => {
    const base = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 1 has a total capacity of 79.14 GiB of which 512.00 MiB is free. Including non-PyTorch memory, this process has 78.60 GiB memory in use. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 8.00 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting ';
    const v6 = one(`${base}PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)`);
    expect(v6.era?.version).toBe('2.9–2.10');
    expect(v6.hintVariable).toBe('PYTORCH_ALLOC_CONF');
    const v7 = one(`${base}PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)`);
    expect(v7.era?.version).toBe('≥2.11');
    expect(v7.gpuIndex).toBe(1);
  });

  it('2.3 NUL-truncated message', () => {
    const e = one('torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU ');
    expect(e.requestedBytes).toBe(64n * M);
    expect(e.gpuIndex).toBeNull();
    expect(e.era?.version).toBe('2.3');
  });

  it('more than 1EB keeps 2^60 exactly', () => {
    expect(one('CUDA out of memory. Tried to allocate more than 1EB memory.').requestedBytes).toBe(1n << 60n);
  });

  it('sizes above 2^53 keep every digit', () => {
    const e = one('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 37252902.99 GiB. GPU 0 has a total capacity of 79.14 GiB of which 78.00 GiB is free.');
    expect(e.requestedBytes).toBe((3725290299n * G + 50n) / 100n);
    expect(e.requestedBytes! > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it('HIP with HIP Graphs private pools, XPU with allowed', () => {
    const hip = one('torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 191.98 GiB of which 1.00 GiB is free. Of the allocated memory 180.00 GiB is allocated by PyTorch, with 20.00 GiB allocated in private pools (e.g., HIP Graphs), and 3.00 GiB is reserved by PyTorch but unallocated.');
    expect(hip.family).toBe('pytorch-hip');
    expect(hip.privatePoolBytes).toBe(20n * G);
    const xpu = one('torch.OutOfMemoryError: XPU out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 15.11 GiB of which 3.00 GiB is free. 12.00 GiB allowed; Of the allocated memory 11.50 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.');
    expect(xpu.family).toBe('pytorch-xpu');
    expect(xpu.allowedBytes).toBe(12n * G);
    expect(xpu.reservedUnallocatedBytes).toBe(100n * M);
  });

  it('cudaMallocAsync cut after "Allocation on device"', () => {
    const e = one('torch.cuda.OutOfMemoryError: Allocation on device ');
    expect(e.family).toBe('pytorch-cuda-async');
    expect(e.gpuIndex).toBeNull();
  });

  it('MPS invalid buffer size', () => {
    const e = one('RuntimeError: Invalid buffer size: 24.50 GB');
    expect(e.family).toBe('pytorch-mps');
    expect(e.requestedBytes).toBe(BigInt(Math.round(24.5 * 2 ** 30)));
  });

  it('CUDA error as AcceleratorError with its trailer lines is one event', () => {
    const e = one('torch.AcceleratorError: CUDA error: out of memory\nSearch for `cudaErrorMemoryAllocation\' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.');
    expect(e.family).toBe('cuda-runtime');
    expect(e.exceptionClass).toBe('torch.AcceleratorError');
  });

  it('cuDNN allocation failure', () => {
    expect(one('RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED').family).toBe('cudnn');
  });

  it('NCCL python-side Cuda failure', () => {
    const e = one("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 2 'out of memory'");
    expect(e.family).toBe('nccl');
  });

  it('TensorFlow BFC and driver messages', () => {
    const bfc = one('W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran out of memory trying to allocate 120.70MiB with freed_by_count=0.');
    expect(bfc.family).toBe('tensorflow');
    expect(bfc.requestedBytes).toBe(BigInt(Math.round(120.7 * 2 ** 20)));
    expect(bfc.gpuIndex).toBe(0);
    const drv = one('E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 4.00G (4294967296 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory');
    expect(drv.requestedBytes).toBe(4294967296n);
  });

  it('XLA alternate wording and TPU compile', () => {
    expect(one('jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 123456789 bytes.').requestedBytes).toBe(123456789n);
    const tpu = one('RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space vmem.');
    expect(tpu.family).toBe('xla');
    expect(tpu.requestedBytes).toBeNull();
  });

  it('TF root-error header alone is not an event', () => {
    expect(parseOomText('ResourceExhaustedError: 2 root error(s) found.')).toEqual([]);
  });
});
