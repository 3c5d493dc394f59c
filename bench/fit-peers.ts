/**
 * The batch finders gpumem fit is compared with, restated from their published descriptions (reference
 * §5.1, §5.2) as pure functions over a `fits(batch)` oracle, and the simulated memory curves they run on.
 * Each returns the batch it settles on and how many trials (real runs) it needed.
 */
import { GiB, MiB } from '../src/core/units.js';

export interface PeerResult {
  batch: number;
  trials: number;
}

/** Lightning `power`: start at 2, double while it fits; the last success (or 0 when 2 fails). */
export function lightningPower(fits: (b: number) => boolean, init = 2, maxTrials = 25): PeerResult {
  let b = init;
  let last = 0;
  let trials = 0;
  while (trials < maxTrials) {
    trials++;
    if (!fits(b)) break;
    last = b;
    b *= 2;
  }
  return { batch: last, trials };
}

/** Lightning `binsearch`: double from 2 until the first failure, then bisect until high − low ≤ 1; no margin. */
export function lightningBinsearch(fits: (b: number) => boolean, init = 2, maxTrials = 25): PeerResult {
  let low = 1;
  let high: number | null = null;
  let b = init;
  let trials = 0;
  while (trials < maxTrials) {
    trials++;
    if (fits(b)) {
      low = b;
      if (high === null) b *= 2;
      else if (high - low <= 1) break;
      else b = Math.floor((low + high) / 2);
    } else {
      high = b;
      if (high - low <= 1) break;
      b = Math.floor((low + high) / 2);
    }
  }
  return { batch: low, trials };
}

/** accelerate `find_executable_batch_size`: start at 128, on OOM multiply by 0.9 (truncating), until it fits. */
export function accelerateShrink(fits: (b: number) => boolean, start = 128): PeerResult {
  let b = start;
  let trials = 0;
  while (b > 0) {
    trials++;
    if (fits(b)) return { batch: b, trials };
    b = Math.floor(b * 0.9);
  }
  return { batch: 0, trials };
}

export interface Curve {
  name: string;
  /** Peak memory the run would report at this batch. */
  peakBytes(batch: number): number;
  /** GPU capacity: above it the run dies of OOM. */
  capacityBytes: number;
  /** Extra condition for an OOM below the capacity (fragmentation, a spike the reading misses). */
  oomAbove?: number;
}

/** Deterministic ±`amp` relative noise per batch (no Math.random: results must repeat). */
function noise(batch: number, amp: number): number {
  const x = Math.sin(batch * 12.9898) * 43758.5453;
  return (x - Math.floor(x) - 0.5) * 2 * amp;
}

/** The simulated memory curves from the issue: linear, nonlinear step, noisy, OOM threshold, and two more. */
export const CURVES: readonly Curve[] = [
  { name: 'linear', peakBytes: (b) => 3 * GiB + b * 260 * MiB, capacityBytes: 80 * GiB },
  { name: 'step (cuDNN algo switch at 96)', peakBytes: (b) => 2 * GiB + b * 180 * MiB + (b > 96 ? 6 * GiB : 0), capacityBytes: 40 * GiB },
  { name: 'noisy ±2 %', peakBytes: (b) => (4 * GiB + b * 90 * MiB) * (1 + noise(b, 0.02)), capacityBytes: 24 * GiB },
  { name: 'OOM threshold below reading', peakBytes: (b) => 1 * GiB + b * 40 * MiB, capacityBytes: 16 * GiB, oomAbove: 250 },
  { name: 'superlinear (attention s²-like)', peakBytes: (b) => 2 * GiB + b * 100 * MiB + b * b * 0.4 * MiB, capacityBytes: 80 * GiB },
  { name: 'small model, large max', peakBytes: (b) => 1.5 * GiB + b * 12 * MiB, capacityBytes: 80 * GiB },
];

/** Whether a run at `batch` survives on `curve` (no OOM). */
export function survives(curve: Curve, batch: number): boolean {
  return curve.peakBytes(batch) <= curve.capacityBytes && (curve.oomAbove === undefined || batch <= curve.oomAbove);
}

/** Largest batch for which `ok` holds, by scanning (ground truth for the simulations). */
export function trueMax(ok: (b: number) => boolean, limit = 100000): number {
  let best = 0;
  for (let b = 1; b <= limit; b++) {
    if (ok(b)) best = b;
    else if (best > 0 && b > best * 2 + 64) break;
  }
  return best;
}
