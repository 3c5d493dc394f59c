/**
 * The shape of one out-of-memory event as gpumem reads it from a log, and of the causes it derives. Byte
 * fields are `bigint` so values above 2^53 (PyTorch prints sizes up to 16 EiB) keep every digit; a field the
 * message did not print is `null`, never a guess. JSON output turns them into numbers (strings above 2^53).
 */

/** Which stack printed the message (the JSON `family` field). */
export type OomFamily =
  | 'pytorch-cuda'
  | 'pytorch-cuda-async'
  | 'pytorch-hip'
  | 'pytorch-xpu'
  | 'pytorch-mps'
  | 'cuda-runtime'
  | 'cublas'
  | 'cudnn'
  | 'nccl'
  | 'xla'
  | 'tensorflow'
  | 'cupy'
  | 'paddle'
  | 'ggml-cuda'
  | 'ggml-metal'
  | 'ggml-vulkan'
  | 'vllm-kv-cache'
  | 'onnxruntime'
  | 'tensorrt'
  | 'mxnet'
  | 'numba'
  | 'deepspeed';

export type OomFramework =
  | 'pytorch'
  | 'jax'
  | 'tensorflow'
  | 'nccl'
  | 'cupy'
  | 'paddle'
  | 'llama.cpp'
  | 'vllm'
  | 'onnxruntime'
  | 'tensorrt'
  | 'mxnet'
  | 'numba'
  | 'deepspeed';

/** Another process the message names: `Process 1234 has 1.19 GiB memory in use.` */
export interface OomProcess {
  /** Null when the pasted message had the pid removed ("Process has 14.37 GiB memory in use"). */
  pid: number | null;
  /** Null when the driver printed its "not available" sentinel. */
  bytes: bigint | null;
}

/** Python frame from the traceback before the message. */
export interface OomFrame {
  file: string;
  line: number;
  function: string;
}

/** TensorFlow reports a shape and dtype instead of bytes. */
export interface OomTensor {
  shape: number[];
  dtype: string;
  /** shape × element size, when the dtype's size is known; not the printed request. */
  bytes: bigint | null;
}

/** Apple MPS allocator numbers (its message has no device total or free). */
export interface OomMps {
  mpsAllocatedBytes: bigint | null;
  otherAllocationsBytes: bigint | null;
  pool: 'private' | 'shared' | null;
}

/** vLLM's KV-cache check at start-up: the longest sequence does not fit in the memory left for the cache. */
export interface OomKvCache {
  /** The configured max_model_len ("max seq len (N)"). */
  maxModelLenTokens: number | null;
  /** Tokens the cache can hold (v0 "stored in KV cache (N)"). */
  cacheTokens: number | null;
  /** KV-cache memory one max-length request needs (v1). */
  neededBytes: bigint | null;
  /** KV-cache memory left after weights and activations (v1). */
  availableBytes: bigint | null;
  /** The max_model_len vLLM estimates would fit (v1). */
  estimatedMaxModelLenTokens: number | null;
}

export interface OomEvent {
  /** 1-based line of the first occurrence (where the message starts). */
  line: number;
  /** Every line the same message was seen on (ranks, logger repeats). */
  lines: number[];
  /** Ranks that printed it, from `[rank3]:`-style prefixes; empty when none were printed. */
  ranks: number[];
  family: OomFamily;
  framework: OomFramework;
  /** The Python exception class printed before the message, e.g. "torch.OutOfMemoryError". */
  exceptionClass: string | null;
  /** Release range the wording identifies, e.g. "2.1" or "≥2.4", and the words that show it. */
  era: { version: string; evidence: string } | null;
  /** CUDA ordinal as the process saw it (after CUDA_VISIBLE_DEVICES remapping). */
  gpuIndex: number | null;
  requestedBytes: bigint | null;
  totalBytes: bigint | null;
  freeBytes: bigint | null;
  /** "Including non-PyTorch memory, this process has X memory in use." */
  processInUseBytes: bigint | null;
  allocatedByPytorchBytes: bigint | null;
  /** Reserved but not allocated (v1 `cached`, v4+ "reserved by PyTorch but unallocated"). */
  reservedUnallocatedBytes: bigint | null;
  /** Reserved in total (v2/v3 "reserved in total by PyTorch"). */
  reservedTotalBytes: bigint | null;
  /** Memory-fraction limit (`X allowed;`, async "PyTorch limit", MPS "max allowed"). */
  allowedBytes: bigint | null;
  /** "with X allocated in private pools (e.g., CUDA Graphs)". */
  privatePoolBytes: bigint | null;
  otherProcesses: OomProcess[];
  /** Field → why it is null although the message printed something (the 17179869184.00 GiB sentinel). */
  unavailable: Record<string, string>;
  /** `Tried to allocate more than 1EB memory`: the size was corrupt, not merely large. */
  requestMoreThan1EB: boolean;
  mps: OomMps | null;
  tensor: OomTensor | null;
  /** vLLM's KV-cache numbers, or null. */
  kvCache: OomKvCache | null;
  /** Memory the framework's own pool already held (CuPy "allocated so far", Paddle "has been allocated", DeepSpeed's workspace). */
  poolBytes: bigint | null;
  /** The device buffer a library names: llama.cpp "CUDA0"/"ROCm0"/"Metal"/"Vulkan0". */
  backend: string | null;
  /** True when the text is a piece of the message (cut at its start or end): the numbers it has are exact, the rest is missing. */
  partial: boolean;
  /** The allocator-config variable the message's hint names (PYTORCH_CUDA_ALLOC_CONF, PYTORCH_HIP_ALLOC_CONF…). */
  hintVariable: string | null;
  /** Last traceback frame outside torch, site-packages and the standard library. */
  userFrame: OomFrame | null;
  /** The message as normalized (prefixes, markup and wraps removed), capped at 4 KiB. */
  message: string;
}

/** Live facts about the run, when known: its environment and, on the machine itself, the GPU processes. */
export interface OomContext {
  /** The run's PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF value. */
  allocConf?: string;
  /** The run's CUDA_VISIBLE_DEVICES value. */
  cudaVisibleDevices?: string;
  /**
   * The machine's GPUs (nvidia-smi index and UUID), so a CUDA_VISIBLE_DEVICES entry given as a UUID (as
   * `gpumem run` pins) is named by the index people type and nvidia-smi shows.
   */
  gpus?: ReadonlyArray<{ index: number; uuid: string | null }>;
  /** Processes on the GPUs now (from a Sample), to cross-check pids the message names. */
  liveProcesses?: ReadonlyArray<{
    pid: number;
    usedBytes: number | null;
    user?: string | null;
    state?: string | null;
    cmdline?: readonly string[] | null;
  }>;
  /** True when liveProcesses was actually read (so a missing pid means it has ended). */
  liveChecked?: boolean;
}

/** A ranked explanation with the numbers that prove it and a fix with numbers. */
export interface Cause {
  id: string;
  /** 0–100; higher ranks first. */
  score: number;
  title: string;
  /** Named numbers the rule used (bytes unless the name says otherwise). */
  evidence: Record<string, bigint | number | string | boolean | null | undefined>;
  /** One or two sentences, each tied to a number. */
  detail: string;
  fix: string;
}
