/**
 * Per-process SM utilization through nvmlDeviceGetProcessUtilization and its timestamp protocol. The means are
 * kept in typed arrays indexed through a pid → slot map that outlives the read, so a live view reading 8 GPUs
 * ten times a second builds no map or object per read once its pids are known.
 */
import { callReason, DeviceUnreadable } from './calls.js';
import { PROCESS_UTIL_SAMPLE } from './layouts.js';
import type { DeviceHandle, NvmlCall } from './library.js';
import { NVML_ERROR_GPU_IS_LOST, NVML_ERROR_INSUFFICIENT_SIZE, NVML_ERROR_NOT_FOUND, NVML_SUCCESS } from './return-codes.js';

/** How often the sample count may outgrow the buffer between calls before we give up for this read. */
const MAX_ATTEMPTS = 5;
/** Slots are forgotten (and the map rebuilt) once this many pids have come and gone on one device. */
const MAX_SLOTS = 4096;
/**
 * Samples the buffer holds before the first read (128 KiB a device). A first read that fits is one call instead
 * of asking for the count and then filling (a read costs 2.53 ms of CPU on an H100 however it answers); one that
 * does not fit is answered INSUFFICIENT_SIZE with the count, and grows the buffer as before.
 */
const FIRST_CAPACITY = 4096;

/** Said for a pid when the driver had no sample newer than the previous read (NVML_ERROR_NOT_FOUND). */
export const NO_NEW_UTIL_SAMPLE = 'no new utilization sample since the previous read';

/**
 * The sample buffer of one device, the newest timestamp seen on it, and the means of the last read: sums and
 * counts per slot, valid for the slots stamped with the current read's number.
 */
export class UtilBuffer {
  capacity = 0;
  buf: Buffer = Buffer.alloc(0);
  /** The same memory as 32-bit words (the driver writes in host byte order): a read may hand back tens of thousands. */
  words: Uint32Array = new Uint32Array(0);
  readonly count = new Uint32Array(1);
  /** Timestamp (µs since the epoch) of the newest sample read so far; passed as lastSeenTimeStamp. */
  lastSeenUs = 0;
  private readonly slotOf = new Map<number, number>();
  private sums = new Float64Array(64);
  private counts = new Uint32Array(64);
  private stamps = new Uint32Array(64);
  private read = 1;
  /** Pids given a mean in the current read. */
  private added = 0;

  /** Room for `capacity` samples (Buffer.alloc memory starts at offset 0, so the word view is aligned). */
  resize(capacity: number): void {
    this.capacity = capacity;
    this.buf = Buffer.alloc(capacity * PROCESS_UTIL_SAMPLE.size);
    this.words = new Uint32Array(this.buf.buffer, this.buf.byteOffset, this.buf.length / 4);
  }

  /** Starts a read: every mean of the previous one stops counting. */
  begin(): void {
    this.read = (this.read + 1) >>> 0 || 1;
    this.added = 0;
    if (this.slotOf.size > MAX_SLOTS) {
      this.slotOf.clear();
      this.stamps.fill(0);
    }
  }

  add(pid: number, pct: number): void {
    let slot = this.slotOf.get(pid);
    if (slot === undefined) {
      slot = this.slotOf.size;
      this.slotOf.set(pid, slot);
      if (slot >= this.stamps.length) this.grow();
    }
    if (this.stamps[slot] !== this.read) {
      this.stamps[slot] = this.read;
      this.added++;
      this.sums[slot] = 0;
      this.counts[slot] = 0;
    }
    this.sums[slot] = (this.sums[slot] as number) + pct;
    this.counts[slot] = (this.counts[slot] as number) + 1;
  }

  /** The mean SM % of `pid` over the samples of the last read, or undefined when it had none. */
  meanOf(pid: number): number | undefined {
    const slot = this.slotOf.get(pid);
    if (slot === undefined || this.stamps[slot] !== this.read) return undefined;
    return (this.sums[slot] as number) / (this.counts[slot] as number);
  }

  /** Whether the last read gave any pid a mean. */
  get any(): boolean {
    return this.added > 0;
  }

  /** Counts reads, so a caller can tell whether one happened. */
  get reads(): number {
    return this.read;
  }

  /**
   * After a read with samples: each of `pids` (the processes listed at that read) that had none gets 0 %. The
   * driver returns a sample only for a process that ran in the period (nvmlDeviceGetProcessUtilization's
   * contract; nvitop reads absence as 0 % too, and on an H100 the DataLoader workers that held a context and
   * computed nothing never had one). Only when at least one listed pid had a sample, so a driver whose pids
   * are not the lists' (another PID namespace) never makes a running process look idle. Returns how many.
   */
  idleUnlessSampled(pids: readonly number[]): number {
    if (!pids.some((pid) => this.meanOf(pid) !== undefined)) return 0;
    let idle = 0;
    for (const pid of pids) {
      if (this.meanOf(pid) !== undefined) continue;
      this.add(pid, 0);
      idle++;
    }
    return idle;
  }

  private grow(): void {
    const size = this.stamps.length * 2;
    const [sums, counts, stamps] = [new Float64Array(size), new Uint32Array(size), new Uint32Array(size)];
    sums.set(this.sums);
    counts.set(this.counts);
    stamps.set(this.stamps);
    [this.sums, this.counts, this.stamps] = [sums, counts, stamps];
  }
}

/**
 * Per-pid SM utilization with the timestamp protocol: each read passes the newest timestamp seen on this
 * device, so only samples taken since come back and none is counted twice; a pid's value is the mean of its
 * new samples (state.meanOf). Returns null when means were read, or the reason nothing can be shown
 * (NOT_FOUND = no new samples since the previous read).
 */
export function readSmUtilization(fn: NvmlCall | null, state: UtilBuffer, handle: DeviceHandle): string | null {
  state.begin();
  if (!fn) return 'nvmlDeviceGetProcessUtilization not exported by this driver';
  if (state.capacity === 0) state.resize(FIRST_CAPACITY);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    state.count[0] = state.capacity;
    const rc = fn(handle, state.buf, state.count, state.lastSeenUs);
    if (rc === NVML_ERROR_INSUFFICIENT_SIZE) {
      state.resize(Math.max((state.count[0] as number) * 2 + 5, state.capacity * 2));
      continue;
    }
    if (rc === NVML_ERROR_NOT_FOUND) return `${NO_NEW_UTIL_SAMPLE} (${callReason('nvmlDeviceGetProcessUtilization', rc)})`;
    if (rc === NVML_ERROR_GPU_IS_LOST) throw new DeviceUnreadable(rc, 'nvmlDeviceGetProcessUtilization');
    if (rc !== NVML_SUCCESS) return callReason('nvmlDeviceGetProcessUtilization', rc);
    addNewSamples(state, Math.min(state.count[0] as number, state.capacity));
    return state.any ? null : NO_NEW_UTIL_SAMPLE;
  }
  return 'nvmlDeviceGetProcessUtilization: sample count kept growing';
}

/** Adds the `n` samples in the buffer newer than the last read to the means, and moves lastSeen on. */
function addNewSamples(state: UtilBuffer, n: number): void {
  let newest = state.lastSeenUs;
  const w = state.words;
  const stride = PROCESS_UTIL_SAMPLE.size / 4;
  const [pidAt, tsAt, smAt] = [PROCESS_UTIL_SAMPLE.pid / 4, PROCESS_UTIL_SAMPLE.timeStamp / 4, PROCESS_UTIL_SAMPLE.smUtil / 4];
  // Little-endian words: the low half of the 64-bit timestamp first (every platform NVML ships for).
  for (let i = 0, at = 0; i < n; i++, at += stride) {
    const ts = (w[at + tsAt + 1] as number) * 4294967296 + (w[at + tsAt] as number);
    // A driver that hands back an old sample anyway must not have it counted a second time.
    if (ts <= state.lastSeenUs) continue;
    if (ts > newest) newest = ts;
    const pct = w[at + smAt] as number;
    // Exiting (zombie) processes have been seen to report values like 37100: not a percentage, not evidence.
    if (pct <= 100) state.add(w[at + pidAt] as number, pct);
  }
  state.lastSeenUs = newest;
}
