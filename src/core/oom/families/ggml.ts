/**
 * llama.cpp / ggml device buffers. CUDA and ROCm builds (the ROCm build runs the same CUDA code through HIP)
 * print `ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed:
 * out of memory`, Metal `ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size =
 * 33074.89 MiB`, Vulkan `ggml_vulkan: Device memory allocation of size 118497280 failed.`; the caller follows
 * with `alloc_tensor_range` / `ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 151851674624`,
 * exact bytes and the buffer's name, which may also stand alone. A CPU buffer is host memory, not an OOM here.
 */
import type { OomFamily } from '../types.js';
import { headRecognizer, setFamily, within, type HeadRead } from './base.js';
import { readSize } from './size-field.js';

/** The follow-up line: the buffer's name and its exact size. */
export const GGML_FOLLOW_UP = /failed to allocate (?!CPU)(\w{1,24}) buffer of size (\d{1,20})/gi;

const HEAD = new RegExp(
  String.raw`allocating (\d{1,12}(?:\.\d{1,6})?) MiB on device (\d{1,3}): ?cudaMalloc failed: ?out of memory` +
    String.raw`|failed to allocate buffer, size = (\d{1,12}(?:\.\d{1,6})?) MiB` +
    String.raw`|Device memory allocation of size (\d{1,20}) failed` +
    String.raw`|${GGML_FOLLOW_UP.source}`,
  'gi',
);

function familyOf(buffer: string): OomFamily {
  if (/^metal/i.test(buffer)) return 'ggml-metal';
  if (/^vulkan/i.test(buffer)) return 'ggml-vulkan';
  return 'ggml-cuda';
}

/** The form of a head at `at`: true when it is a follow-up line (the name and exact size), not the allocator's own line. */
export function isGgmlFollowUp(text: string, at: number): boolean {
  return /^failed to allocate (?!buffer)/i.test(text.slice(at, at + 32));
}

const recognizer = headRecognizer(HEAD, 'ggml-cuda', (m, fields, text, _start, limit): HeadRead => {
  const headEnd = m.index + m[0].length;
  if (m[5] !== undefined) {
    setFamily(fields, familyOf(m[5]));
    fields.backend = m[5];
    fields.requestedBytes = BigInt(m[6] as string);
    const index = /(\d{1,3})$/.exec(m[5]);
    if (index && fields.family !== 'ggml-metal') fields.gpuIndex = Number(index[1]);
    return { count: 2 };
  }
  if (m[4] !== undefined) {
    setFamily(fields, 'ggml-vulkan');
    fields.backend = 'Vulkan';
    fields.requestedBytes = BigInt(m[4]);
    return { count: 1 };
  }
  let count = 1;
  if (m[1] !== undefined) {
    fields.requestedBytes = readSize(m[1], 'MiB').bytes;
    fields.gpuIndex = Number(m[2]);
    count++;
  } else {
    setFamily(fields, 'ggml-metal');
    fields.backend = 'Metal';
    fields.requestedBytes = readSize(m[3], 'MiB').bytes;
  }
  // The caller's line names the buffer and gives the size to the byte: it replaces the MiB figure rounded to 0.01.
  const follow = within(GGML_FOLLOW_UP, text, headEnd, limit);
  if (follow) {
    fields.backend = follow[1] as string;
    fields.requestedBytes = BigInt(follow[2] as string);
    return { count: count + 1, end: follow.index + follow[0].length };
  }
  return { count, wants: 'ggml' };
});

export const ggml = recognizer;
