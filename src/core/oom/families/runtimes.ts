/**
 * Inference runtimes: ONNX Runtime's BFC arena (`onnxruntime::BFCArena::AllocateRawInternal Failed to
 * allocate memory for requested buffer of size 285081600`, exact bytes, also from CPU arenas: the message does
 * not say which) and TensorRT (`Requested amount of GPU memory (4294967296 bytes) could not be allocated`,
 * a builder warning that skips a tactic; `[virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: out of
 * Memory (Requested size was 22942842880 bytes.)` or `OutOfMemory (no further information)`; and
 * `Cuda Error in …allocate: 2 (out of memory)`).
 */
import { headRecognizer, type HeadRead } from './base.js';

const ORT_HEAD = /Failed to allocate memory for requested buffer of size (\d{1,20})/gi;
const TRT_HEAD = new RegExp(
  String.raw`Requested amount of (GPU )?memory \((\d{1,20}) bytes\) could not be allocated` +
    String.raw`|virtualMemoryBuffer\.cpp::\w{1,40}::\d{1,6}\] Error Code 2: ?(?:OutOfMemory|out of Memory)(?: \((?:Requested size was (\d{1,20}) bytes\.?|no further information)\))?` +
    String.raw`|Cuda Error in [\w:]{1,120}: 2 \(out of memory\)` +
    String.raw`|defaultAllocator\.cpp::allocate::\d{1,6}\] Error Code 1: Cuda Runtime \(out of memory\)`,
  'gi',
);

export const onnxruntime = headRecognizer(ORT_HEAD, 'onnxruntime', (m, fields): HeadRead => {
  fields.requestedBytes = BigInt(m[1] as string);
  return { count: 1 };
});

export const tensorrt = headRecognizer(TRT_HEAD, 'tensorrt', (m, fields): HeadRead => {
  const bytes = m[2] ?? m[3];
  if (bytes !== undefined) fields.requestedBytes = BigInt(bytes);
  return { count: bytes !== undefined ? 1 : 0 };
});
