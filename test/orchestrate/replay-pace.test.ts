/** A replay plays at its recorded pace: the sampler asks for each wait, the recording says when the next sample was taken. */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LiveSampler } from '../../src/orchestrate/index.js';
import { isReplaySource, openReplaySource, readRecording } from '../../src/sources/index.js';
import { replayDelayMs } from '../../src/cli/commands/watch.js';

/** The bundled example: 40 samples recorded on an H100 every 500 ms, at the gaps the recorder really kept. */
const EXAMPLE = resolve(__dirname, '../../examples/doctor-example.ndjson');

describe('replay pacing', () => {
  it('waits the recorded gap divided by the speed, bounded, and the interval where there is no gap', () => {
    expect(replayDelayMs(1000, 1500, 1, 1000)).toBe(500);
    expect(replayDelayMs(1000, 1500, 4, 1000)).toBe(125);
    expect(replayDelayMs(1000, 1500, 64, 1000)).toBe(10);
    expect(replayDelayMs(0, 3_600_000, 1, 1000)).toBe(5000);
    expect(replayDelayMs(1000, null, 1, 700)).toBe(700);
    expect(replayDelayMs(1000, 1000, 1, 700)).toBe(700);
  });

  it('asks for the wait after every sample with the time of the next recorded one', async () => {
    const { samples } = readRecording(EXAMPLE);
    expect(samples).toHaveLength(40);
    const source = openReplaySource(EXAMPLE);
    expect(isReplaySource(source)).toBe(true);
    const gaps: number[] = [];
    const sampler = new LiveSampler(source, {
      intervalMs: 10_000,
      nextDelayMs: (sample) => {
        const next = source.nextTimeMs();
        if (next !== null) gaps.push(next - sample.timeMs);
        return 1;
      },
      onError: () => void sampler.stop(),
    });
    await sampler.start();
    for (let i = 0; i < 100 && source.remaining() > 0; i++) await new Promise((r) => setTimeout(r, 5));
    await sampler.stop();
    // The interval (10 s) was never waited: every gap came from the recording.
    expect(gaps).toEqual(samples.slice(1).map((s, i) => s.timeMs - samples[i]!.timeMs));
    expect(gaps).toHaveLength(39);
    // A real recorder's gaps: about its 500 ms interval, not all alike.
    expect(gaps.every((g) => g >= 400 && g <= 700), gaps.join(' ')).toBe(true);
    expect(new Set(gaps).size).toBeGreaterThan(1);
    source.close();
  });

  it('seeks within the recording, clamped to its ends', async () => {
    const { samples } = readRecording(EXAMPLE);
    const source = openReplaySource(EXAMPLE);
    expect(source.seek(3)).toBe(3);
    expect(source.nextTimeMs()).toBe(samples[3]!.timeMs);
    expect((await source.readSample()).timeMs).toBe(samples[3]!.timeMs);
    expect(source.seek(-20)).toBe(0);
    expect(source.seek(1e6)).toBe(samples.length - 1);
    source.close();
  });
});
