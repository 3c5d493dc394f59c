/**
 * One live sampler shared by everything that shows GPU state as it changes (`watch`, `serve`, `/metrics`):
 * it reads a source every `intervalMs`, keeps the newest samples in a ring buffer and tells subscribers.
 * A slow subscriber cannot stall sampling: listeners are called synchronously with the sample and must
 * not block; an error in one is reported through `onError` and the others still run.
 */
import type { Sample } from '../core/types.js';
import type { GpuSource } from '../sources/source.js';
import { RingBuffer } from './ring-buffer.js';
import { ThinnedHistory, type SampleHistory, type ThinningOptions } from './thinned-history.js';

export interface LiveSamplerOptions {
  intervalMs: number;
  /** Samples kept (default: ten minutes' worth at the interval, at least 2). */
  capacity?: number;
  /** Keeps the newest samples at full rate and older ones thinned (a long history at a fast rate); wins over capacity. */
  thin?: Omit<ThinningOptions, 'intervalMs'>;
  /** Called when reading a sample or a listener fails; sampling goes on. */
  onError?: (error: unknown) => void;
  /**
   * Time to wait after `sample` before the next read, instead of the interval (a replay paced by its
   * recorded timestamps). Asked after the listeners have run.
   */
  nextDelayMs?: (sample: Sample, intervalMs: number) => number;
}

export type SampleListener = (sample: Sample) => void;

export class LiveSampler {
  readonly buffer: SampleHistory;
  private readonly listeners = new Set<SampleListener>();
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private stopped = true;
  private intervalMs: number;

  constructor(private readonly source: GpuSource, private readonly options: LiveSamplerOptions) {
    if (!(options.intervalMs >= 1)) throw new RangeError(`sampling interval must be ≥ 1 ms, got ${options.intervalMs}`);
    this.intervalMs = options.intervalMs;
    this.buffer = options.thin
      ? new ThinnedHistory({ ...options.thin, intervalMs: options.intervalMs })
      : new RingBuffer<Sample>(options.capacity ?? Math.max(2, Math.ceil(600_000 / options.intervalMs)));
  }

  get kind(): GpuSource['kind'] {
    return this.source.kind;
  }

  /** Starts sampling; the first sample is read at once. Resolves when that first sample is in. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.tick();
  }

  /** Reads one sample now (also used by tests and by a user's refresh key). */
  async sampleNow(): Promise<Sample | undefined> {
    await this.readOnce();
    return this.buffer.latest();
  }

  latest(): Sample | undefined {
    return this.buffer.latest();
  }

  history(last?: number): Sample[] {
    return this.buffer.toArray(last);
  }

  /**
   * Changes the time between samples from the next tick on (a replay's speed keys); the history is kept.
   * With `restart`, a running sampler reads the next sample now instead of waiting out the old interval.
   */
  setIntervalMs(intervalMs: number, options: { restart?: boolean } = {}): void {
    if (!(intervalMs >= 1)) throw new RangeError(`sampling interval must be ≥ 1 ms, got ${intervalMs}`);
    this.intervalMs = intervalMs;
    if (options.restart && !this.stopped && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      void this.tick();
    }
  }

  get currentIntervalMs(): number {
    return this.intervalMs;
  }

  subscribe(listener: SampleListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops the timer and waits for a read in flight; the source stays open (its owner closes it). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.reading;
  }

  /** Forgets the history (a replay that jumped elsewhere in its recording). */
  clear(): void {
    this.buffer.clear();
  }

  private async tick(): Promise<void> {
    await this.readOnce();
    if (this.stopped) return;
    const latest = this.buffer.latest();
    const delayMs = latest && this.options.nextDelayMs ? this.options.nextDelayMs(latest, this.intervalMs) : this.intervalMs;
    this.timer = setTimeout(() => void this.tick(), Math.max(1, delayMs));
    // A sampler alone must not keep the process alive: its owner (a server, a TUI) does that.
    this.timer.unref();
  }

  private readOnce(): Promise<void> {
    // One read at a time: a source slower than the interval skips ticks instead of piling them up.
    this.reading ??= this.source
      .readSample()
      .then((sample) => {
        this.buffer.push(sample);
        for (const listener of this.listeners) {
          try {
            listener(sample);
          } catch (error) {
            this.options.onError?.(error);
          }
        }
      })
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }
}
