/**
 * The per-step memory history of one process on one device, folded from the companion's `memory` messages and
 * bounded whatever the run's length: the latest steps in full, older ones thinned to one in `stride` (the
 * stride doubling as the run grows), and every step whose peak stood out kept apart, so periodic spikes
 * (an evaluation every N steps) are still seen after a million steps.
 */
import type { MemoryMessage } from '../companion/messages.js';

/** One step's memory: what it left allocated at its end, its peaks, and the reserved bytes at its end. */
export interface StepMemoryRecord {
  step: number;
  leftBytes: number;
  peakAllocatedBytes: number;
  reservedBytes: number;
  peakReservedBytes: number;
}

/** A run of consecutive steps whose peak stood above the usual step's: one evaluation, one checkpoint. */
export interface SpikeEvent {
  firstStep: number;
  lastStep: number;
  /** The highest allocated peak among its steps. */
  peakAllocatedBytes: number;
  peakReservedBytes: number;
  /** The usual step's allocated peak just before it. */
  usualPeakBytes: number;
}

export interface StepMemoryHistory {
  device: number;
  boundary: MemoryMessage['boundary'];
  /** The latest step recorded. */
  lastStep: number;
  /** The latest RECENT_STEPS steps, oldest first. */
  recent: StepMemoryRecord[];
  /** Older steps, one every `stride`, oldest first; at most THINNED_STEPS. */
  thinned: StepMemoryRecord[];
  stride: number;
  /** The latest MAX_SPIKES spike events, oldest first. */
  spikes: SpikeEvent[];
  /** The allocated peak of the latest step that was no spike (the loop's usual step). */
  usualPeakBytes: number | null;
  /** Highest peaks of any step. */
  maxPeakAllocatedBytes: number;
  maxPeakReservedBytes: number;
  /** Steps the companion could not keep (its own count) plus steps missing between messages. */
  missingSteps: number;
}

export const RECENT_STEPS = 1024;
export const THINNED_STEPS = 1024;
export const MAX_SPIKES = 64;
/** Steps this early carry the set-up (model loading, optimizer state creation): never spikes, never growth. */
export const WARMUP_STEPS = 3;
/** A step is a spike when its peak exceeds the usual step's by this much and by SPIKE_MIN_SHARE of it. */
export const SPIKE_MIN_BYTES = 32 * 1024 * 1024;
export const SPIKE_MIN_SHARE = 0.1;

/** An empty history for `device`. */
export function createStepHistory(device: number, boundary: MemoryMessage['boundary']): StepMemoryHistory {
  return {
    device, boundary, lastStep: 0, recent: [], thinned: [], stride: 1, spikes: [], usualPeakBytes: null,
    maxPeakAllocatedBytes: 0, maxPeakReservedBytes: 0, missingSteps: 0,
  };
}

/** Whether `peak` stands out above the usual step's peak `usual`. */
export function isSpike(peak: number, usual: number | null): boolean {
  return usual !== null && peak - usual > Math.max(SPIKE_MIN_BYTES, SPIKE_MIN_SHARE * usual);
}

function thin(h: StepMemoryHistory, r: StepMemoryRecord): void {
  if (r.step % h.stride !== 0) return;
  h.thinned.push(r);
  if (h.thinned.length > THINNED_STEPS) {
    // Full: keep every other one and double the stride, so the thinned steps always span the whole run.
    h.stride *= 2;
    h.thinned = h.thinned.filter((x) => x.step % h.stride === 0);
  }
}

function noteSpike(h: StepMemoryHistory, r: StepMemoryRecord): boolean {
  if (r.step <= WARMUP_STEPS || !isSpike(r.peakAllocatedBytes, h.usualPeakBytes)) {
    h.usualPeakBytes = r.peakAllocatedBytes;
    return false;
  }
  const last = h.spikes[h.spikes.length - 1];
  if (last && last.lastStep === r.step - 1) {
    last.lastStep = r.step;
    last.peakAllocatedBytes = Math.max(last.peakAllocatedBytes, r.peakAllocatedBytes);
    last.peakReservedBytes = Math.max(last.peakReservedBytes, r.peakReservedBytes);
  } else {
    h.spikes.push({
      firstStep: r.step, lastStep: r.step, peakAllocatedBytes: r.peakAllocatedBytes, peakReservedBytes: r.peakReservedBytes,
      usualPeakBytes: h.usualPeakBytes as number,
    });
    if (h.spikes.length > MAX_SPIKES) h.spikes.shift();
  }
  return true;
}

/** Adds one step (steps must come in increasing order; an older or repeated one is ignored). */
export function addStepRecord(h: StepMemoryHistory, r: StepMemoryRecord): void {
  if (r.step <= h.lastStep) return;
  if (h.lastStep > 0) h.missingSteps += r.step - h.lastStep - 1;
  h.lastStep = r.step;
  h.maxPeakAllocatedBytes = Math.max(h.maxPeakAllocatedBytes, r.peakAllocatedBytes);
  h.maxPeakReservedBytes = Math.max(h.maxPeakReservedBytes, r.peakReservedBytes);
  noteSpike(h, r);
  h.recent.push(r);
  if (h.recent.length > RECENT_STEPS) thin(h, h.recent.shift() as StepMemoryRecord);
}

/** Folds one `memory` message into `h` (same device assumed). */
export function foldMemoryMessage(h: StepMemoryHistory, m: MemoryMessage): void {
  h.boundary = m.boundary;
  for (let i = 0; i < m.leftBytes.length; i++) {
    addStepRecord(h, {
      step: m.firstStep + i, leftBytes: m.leftBytes[i] as number, peakAllocatedBytes: m.peakAllocatedBytes[i] as number,
      reservedBytes: m.reservedBytes[i] as number, peakReservedBytes: m.peakReservedBytes[i] as number,
    });
  }
}

/** Every kept step, oldest first (thinned ones, then the recent ones). */
export function keptSteps(h: StepMemoryHistory): StepMemoryRecord[] {
  return [...h.thinned, ...h.recent];
}
