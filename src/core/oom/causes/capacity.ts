/**
 * Rules about the size of the request itself: larger than the whole device (never fits), or a corrupt
 * size of more than 1 EB.
 */
import { b, type CauseRule } from './helpers.js';

/** The request is larger than the GPU's total capacity: no setting can make it fit. */
export const exceedsTotal: CauseRule = (event) => {
  const { requestedBytes: req, totalBytes: total } = event;
  if (req === null || total === null || total <= 0n || req <= total || event.requestMoreThan1EB) return null;
  const factor = Number((req * 100n) / total) / 100;
  const shrink = Math.ceil(factor);
  return {
    id: 'request-exceeds-total',
    score: 100,
    title: 'One tensor is larger than the whole GPU',
    evidence: { requestedBytes: req, totalBytes: total, ratio: factor },
    detail: `The single allocation of ${b(req)} is ${factor.toFixed(2)}× the GPU's total capacity of ${b(total)}; it cannot fit however much memory is freed.`,
    fix: `Make that tensor at least ${shrink}× smaller: divide the batch or sequence length by ${shrink} at the line that allocates it (see the frame below), or shard it across GPUs; check the shape for a bug first (an unexpected dimension often multiplies it).`,
  };
};

/** `Tried to allocate more than 1EB memory`: a garbage size, usually after an earlier failure. */
export const corruptSize: CauseRule = (event) => {
  if (!event.requestMoreThan1EB) return null;
  return {
    id: 'corrupt-size',
    score: 95,
    title: 'The requested size is corrupt (more than 1 EB)',
    evidence: { requestedAtLeastBytes: event.requestedBytes },
    detail: `A request of more than ${b(event.requestedBytes)} (2^60 bytes) is not a real tensor: a size was computed from garbage, often after an NCCL timeout or an overflowed shape.`,
    fix: 'Look for the error printed before this one (NCCL timeout, NaN/overflow in a size) and fix that; freeing memory will not help.',
  };
};
