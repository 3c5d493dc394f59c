import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LiveSampler, RingBuffer } from '../../src/orchestrate/index.js';
import { openReplaySource } from '../../src/sources/index.js';

const EXAMPLE = resolve(__dirname, '../../examples/doctor-example.ndjson');

describe('RingBuffer', () => {
  it('keeps the newest items, oldest first', () => {
    const ring = new RingBuffer<number>(3);
    expect(ring.latest()).toBeUndefined();
    for (let k = 1; k <= 5; k++) ring.push(k);
    expect(ring.size).toBe(3);
    expect(ring.toArray()).toEqual([3, 4, 5]);
    expect(ring.toArray(2)).toEqual([4, 5]);
    expect(ring.latest()).toBe(5);
    ring.clear();
    expect(ring.toArray()).toEqual([]);
  });

  it('refuses a capacity below 1', () => {
    expect(() => new RingBuffer(0)).toThrow(RangeError);
  });
});

describe('LiveSampler', () => {
  it('samples a source into a bounded history and tells subscribers', async () => {
    const source = openReplaySource(EXAMPLE);
    const sampler = new LiveSampler(source, { intervalMs: 5, capacity: 2 });
    const seen: number[] = [];
    const off = sampler.subscribe((s) => seen.push(s.timeMs));
    await sampler.start();
    expect(sampler.latest()).toBeDefined();
    await new Promise((r) => setTimeout(r, 40));
    await sampler.stop();
    off();
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(sampler.history().length).toBe(2);
    expect(sampler.history().at(-1)?.timeMs).toBe(seen.at(-1));
    source.close();
  });

  it('keeps sampling when a listener throws', async () => {
    const source = openReplaySource(EXAMPLE);
    const errors: unknown[] = [];
    const sampler = new LiveSampler(source, { intervalMs: 1000, onError: (e) => errors.push(e) });
    sampler.subscribe(() => {
      throw new Error('listener failed');
    });
    await sampler.start();
    await sampler.sampleNow();
    await sampler.stop();
    expect(errors.length).toBe(2);
    expect(sampler.history().length).toBe(2);
    source.close();
  });
});

describe('LiveSampler.setIntervalMs', () => {
  it('accepts a new interval without losing the history, and refuses one below 1 ms', async () => {
    const source = openReplaySource(EXAMPLE);
    const sampler = new LiveSampler(source, { intervalMs: 60_000 });
    await sampler.start();
    expect(sampler.history().length).toBe(1);
    sampler.setIntervalMs(5);
    await sampler.sampleNow();
    expect(sampler.history().length).toBe(2);
    expect(() => sampler.setIntervalMs(0)).toThrow(RangeError);
    await sampler.stop();
    source.close();
  });
});

describe('LiveSampler.setIntervalMs with restart', () => {
  it('reads the next sample now instead of waiting out the old, long interval', async () => {
    const source = openReplaySource(EXAMPLE);
    const sampler = new LiveSampler(source, { intervalMs: 60_000 });
    await sampler.start();
    sampler.setIntervalMs(60_000, { restart: true });
    await new Promise((r) => setTimeout(r, 50));
    expect(sampler.history().length).toBe(2);
    expect(sampler.currentIntervalMs).toBe(60_000);
    // Without restart the long wait stands.
    sampler.setIntervalMs(5);
    await new Promise((r) => setTimeout(r, 50));
    expect(sampler.history().length).toBe(2);
    await sampler.stop();
    source.close();
  });
});
