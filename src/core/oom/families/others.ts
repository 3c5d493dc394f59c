/**
 * Out-of-memory errors raised outside PyTorch's caching allocator: the CUDA runtime (`CUDA error: out of
 * memory`, also as `torch.AcceleratorError`), cuBLAS and cuDNN allocation failures, and NCCL's `Cuda
 * failure 'out of memory'` with the `Failed to CUDA calloc N bytes` line that follows it.
 */
import { blankFields, clip, exceptionBefore, headFinder, searchFrom, type Recognized, type Recognizer } from './base.js';

const RUNTIME_HEAD = /CUDA (?:driver )?error: ?out of memory|CUDA_ERROR_OUT_OF_MEMORY/gi;
const CUBLAS_HEAD = /CUBLAS_STATUS_ALLOC_FAILED/gi;
const CUDNN_HEAD = /CUDNN_STATUS_ALLOC_FAILED/gi;
const NCCL_HEAD = /Cuda failure (?:\d{1,4} )?'out of memory'|Failed to CUDA calloc (\d{1,20}) bytes/gi;
const NCCL_CALLOC = /Failed to CUDA calloc (\d{1,20}) bytes/gi;
const NCCL_DEVICE = /\[(\d{1,3})\] [^ ]{0,200} ?NCCL WARN/g;

function simple(re: RegExp, family: 'cuda-runtime' | 'cublas' | 'cudnn'): Recognizer {
  return {
    findHead: headFinder(re),
    read(text, start, limit): Recognized {
      const head = searchFrom(re, text, start) as RegExpExecArray;
      const fields = blankFields(family);
      fields.exceptionClass = exceptionBefore(text, start);
      if (family === 'cuda-runtime' && fields.exceptionClass?.includes('AcceleratorError')) {
        fields.era = { version: '≥2.8', evidence: 'torch.AcceleratorError class' };
      }
      const end = head.index + head[0].length;
      fields.message = clip(text, start, limit);
      return { fields, start, end, fieldCount: 1, wants: 'none' };
    },
  };
}

export const cudaRuntime = simple(RUNTIME_HEAD, 'cuda-runtime');
export const cublas = simple(CUBLAS_HEAD, 'cublas');
export const cudnn = simple(CUDNN_HEAD, 'cudnn');

export const nccl: Recognizer = {
  findHead: headFinder(NCCL_HEAD),
  read(text, start, limit): Recognized {
    const head = searchFrom(NCCL_HEAD, text, start) as RegExpExecArray;
    const fields = blankFields('nccl');
    let end = head.index + head[0].length;
    let count = 1;
    const lineStart = Math.max(0, start - 300);
    const device = searchFrom(NCCL_DEVICE, text, lineStart);
    if (device && device.index < start) fields.gpuIndex = Number(device[1]);
    const calloc = head[1] !== undefined ? head : searchFrom(NCCL_CALLOC, text, end);
    if (calloc && calloc.index + calloc[0].length <= limit) {
      fields.requestedBytes = BigInt(calloc[1] as string);
      end = Math.max(end, calloc.index + calloc[0].length);
      count++;
    }
    fields.exceptionClass = exceptionBefore(text, start);
    fields.message = clip(text, start, end);
    return { fields, start, end, fieldCount: count, wants: head[1] === undefined && count === 1 ? 'nccl' : 'none' };
  },
};
