/**
 * Array and training libraries that call the CUDA driver themselves: MXNet's pooled storage manager
 * (`src/storage/./pooled_storage_manager.h:157: cudaMalloc failed: out of memory`, also `cudaMalloc retry
 * failed`), numba (`CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY`), and
 * DeepSpeed's inference workspace (`Workspace can't be allocated, no enough memory.`), whose sizes DeepSpeed
 * prints on the lines before the traceback (`Requested: N`, `Free: N`, `Total: N`, exact bytes).
 */
import { headRecognizer, prefilteredHeadFinder, setFamily, type HeadRead } from './base.js';

// llama.cpp prints "on device N: cudaMalloc failed" too; that one belongs to ggml.ts.
const MXNET_HEAD = /(?<!device \d{1,3}: ?)(?:[\w./]{0,80}storage_manager\.h:\d{1,6}\]?: ?)?cudaMalloc (?:retry )?failed: ?out of memory/gi;
const NUMBA_HEAD = /Call to (cuMem\w{0,20}) results in CUDA_ERROR_OUT_OF_MEMORY/gi;
const DEEPSPEED_HEAD = /Workspace can't be allocated, no enough memory/gi;
const DEEPSPEED_SIZES = /Requested:\s{1,20}(\d{1,20})\s{1,20}Free:\s{1,20}(\d{1,20})\s{1,20}Total:\s{1,20}(\d{1,20})/g;

const mxnetRead = headRecognizer(MXNET_HEAD, 'mxnet', (m, fields, text, start): HeadRead => {
  // A bare "cudaMalloc failed" is MXNet's only when MXNet is named nearby; otherwise it is the CUDA runtime's.
  if (!/storage_manager|mxnet/i.test(m[0]) && !/mxnet/i.test(text.slice(Math.max(0, start - 200), start))) setFamily(fields, 'cuda-runtime');
  return { count: 0 };
});

// The optional prefix ("…/pooled_storage_manager.h:157: ") is at most 80 + 18 + 6 + 3 characters long.
export const mxnet = { ...mxnetRead, findHead: prefilteredHeadFinder(MXNET_HEAD, /cudaMalloc/gi, 128) };

export const numba = headRecognizer(NUMBA_HEAD, 'numba', (m, fields): HeadRead => {
  fields.backend = m[1] as string;
  return { count: 1 };
});

export const deepspeed = headRecognizer(DEEPSPEED_HEAD, 'deepspeed', (_m, fields): HeadRead => ({
  count: 0,
  readBefore(preceding) {
    let last: RegExpExecArray | null = null;
    DEEPSPEED_SIZES.lastIndex = 0;
    for (let m = DEEPSPEED_SIZES.exec(preceding); m; m = DEEPSPEED_SIZES.exec(preceding)) last = m;
    if (!last) return;
    fields.requestedBytes = BigInt(last[1] as string);
    fields.freeBytes = BigInt(last[2] as string);
    fields.totalBytes = BigInt(last[3] as string);
  },
}));
