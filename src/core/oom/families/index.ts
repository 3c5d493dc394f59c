/**
 * All family recognizers, and the loop that reads every message out of one block of text: the earliest
 * head wins, its fields are read up to the next head, and the search resumes after it.
 */
import { cudaMallocAsync, mps } from './async-mps.js';
import type { Recognized, Recognizer } from './base.js';
import { cupy } from './cupy.js';
import { ggml, isGgmlFollowUp } from './ggml.js';
import { deepspeed, mxnet, numba } from './numerics.js';
import { cublas, cudaRuntime, cudnn, nccl } from './others.js';
import { paddle } from './paddle.js';
import { pytorchCaching } from './pytorch-caching.js';
import { pytorchFragment } from './pytorch-fragment.js';
import { onnxruntime, tensorrt } from './runtimes.js';
import { tensorflow, xla } from './tf-xla.js';
import { vllm } from './vllm.js';

export type { OomFields, Recognized, Wants } from './base.js';

/** Order matters only for ties: a more specific family listed first wins at the same offset. */
const RECOGNIZERS: readonly Recognizer[] = [
  mps, cudaMallocAsync, pytorchCaching, tensorflow, xla, cupy, paddle, ggml, vllm, onnxruntime, tensorrt, numba, deepspeed, mxnet,
  cudaRuntime, cublas, cudnn, nccl,
];

/**
 * The earliest message head at or after `from`: its offset and recognizer, or null. With `fragments`, a piece
 * of a PyTorch message without its head counts too (only where no whole message starts before it).
 */
export function findHead(text: string, from: number, fragments = false): { at: number; recognizer: Recognizer } | null {
  let best: { at: number; recognizer: Recognizer } | null = null;
  for (const recognizer of RECOGNIZERS) {
    const at = recognizer.findHead(text, from);
    if (at >= 0 && (best === null || at < best.at)) best = { at, recognizer };
  }
  if (fragments) {
    const at = pytorchFragment.findHead(text, from);
    if (at >= 0 && (best === null || at < best.at)) best = { at, recognizer: pytorchFragment };
  }
  return best;
}

/** True when the head at `nextAt` is the second line of the message whose head is at `at` (NCCL, llama.cpp). */
function continues(text: string, head: { at: number; recognizer: Recognizer }, next: { at: number; recognizer: Recognizer }): boolean {
  if (head.recognizer !== next.recognizer) return false;
  // NCCL prints the failed calloc size on the WARN line after "Cuda failure": one event, not two.
  if (head.recognizer === nccl) return !/^Failed/i.test(text.slice(head.at, head.at + 6));
  return head.recognizer === ggml && !isGgmlFollowUp(text, head.at) && isGgmlFollowUp(text, next.at);
}

/**
 * Reads every message in `text`, in order. Linear: each step resumes past the message it read. Only the text
 * before the first whole message may be a piece of one (a paste cut at its start).
 */
export function recognizeAll(text: string): Recognized[] {
  const found: Recognized[] = [];
  let from = 0;
  for (let head = findHead(text, from, true); head; head = findHead(text, from)) {
    let next = findHead(text, head.at + 1);
    if (next && continues(text, head, next)) next = findHead(text, next.at + 1);
    // A piece of a message is read from the start of the text before any whole message: its first field may
    // come before the one that found it.
    const start = head.recognizer === pytorchFragment ? from : head.at;
    let result = head.recognizer.read(text, start, next ? next.at : text.length);
    // A head inside this message's own head (e.g. CUDA_ERROR_OUT_OF_MEMORY in XLA's line) is part of it.
    while (next && next.at < result.end) {
      next = findHead(text, result.end);
      result = head.recognizer.read(text, start, next ? next.at : text.length);
    }
    found.push(result);
    from = Math.max(result.end, head.at + 1);
  }
  return found;
}
