/**
 * All family recognizers, and the loop that reads every message out of one block of text: the earliest
 * head wins, its fields are read up to the next head, and the search resumes after it.
 */
import { cudaMallocAsync, mps } from './async-mps.js';
import type { Recognized, Recognizer } from './base.js';
import { cublas, cudaRuntime, cudnn, nccl } from './others.js';
import { pytorchCaching } from './pytorch-caching.js';
import { tensorflow, xla } from './tf-xla.js';

export type { OomFields, Recognized, Wants } from './base.js';

/** Order matters only for ties: a more specific family listed first wins at the same offset. */
const RECOGNIZERS: readonly Recognizer[] = [mps, cudaMallocAsync, pytorchCaching, tensorflow, xla, cudaRuntime, cublas, cudnn, nccl];

/** The earliest message head at or after `from`: its offset and recognizer, or null. */
export function findHead(text: string, from: number): { at: number; recognizer: Recognizer } | null {
  let best: { at: number; recognizer: Recognizer } | null = null;
  for (const recognizer of RECOGNIZERS) {
    const at = recognizer.findHead(text, from);
    if (at >= 0 && (best === null || at < best.at)) best = { at, recognizer };
  }
  return best;
}

/** Reads every message in `text`, in order. Linear: each step resumes past the message it read. */
export function recognizeAll(text: string): Recognized[] {
  const found: Recognized[] = [];
  let from = 0;
  for (let head = findHead(text, from); head; head = findHead(text, from)) {
    let next = findHead(text, head.at + 1);
    // NCCL prints the failed calloc size on the WARN line after "Cuda failure": one event, not two.
    if (next && head.recognizer === nccl && next.recognizer === nccl && !/^Failed/i.test(text.slice(head.at, head.at + 6))) {
      next = findHead(text, next.at + 1);
    }
    const result = head.recognizer.read(text, head.at, next ? next.at : text.length);
    found.push(result);
    from = Math.max(result.end, head.at + 1);
  }
  return found;
}
