/**
 * The page's event stream: a first message with everything the page draws from, later ones without the
 * process table while it is unchanged, and sampling at the idle pace while no page is open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeScenario } from '../fake-nvml/scenario.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ pace: { intervalMs: 100, idleIntervalMs: 60_000 } });
});
afterAll(() => h.close());

interface Stream {
  /** Resolves with the next `count` messages (parsed). */
  next(count: number): Promise<Array<Record<string, any>>>;
  close(): void;
}

async function openStream(): Promise<Stream> {
  const controller = new AbortController();
  const res = await fetch(`${h.base}/api/v1/events`, { signal: controller.signal });
  const reader = res.body!.getReader();
  let text = '';
  return {
    async next(count) {
      const out: Array<Record<string, any>> = [];
      while (out.length < count) {
        const end = text.indexOf('\n\n');
        if (end < 0) {
          text += new TextDecoder().decode((await reader.read()).value);
          continue;
        }
        const frame = text.slice(0, end);
        text = text.slice(end + 2);
        if (frame.startsWith('event: sample\n')) out.push(JSON.parse(frame.slice(frame.indexOf('data: ') + 6)));
      }
      return out;
    },
    close: () => controller.abort(),
  };
}

describe('the live event stream', () => {
  it('samples at the idle pace with no page open and at the page pace while one is', async () => {
    expect(h.sampler.currentIntervalMs).toBe(60_000);
    const before = h.sampler.history().length;
    const stream = await openStream();
    const [first] = await stream.next(1);
    expect(h.sampler.currentIntervalMs).toBe(100);
    // The long idle wait is cut short: new samples arrive at once.
    const [second] = await stream.next(1);
    expect(second!.live.timeMs).toBeGreaterThan(first!.live.timeMs);
    expect(h.sampler.history().length).toBeGreaterThan(before);
    stream.close();
    await expect.poll(() => h.sampler.currentIntervalMs, { timeout: 5000 }).toBe(60_000);
  });

  it('opens with server facts, chart history and the whole view, then sends the process table only when it changes', async () => {
    const stream = await openStream();
    const [first] = await stream.next(1);
    expect(first!.server).toEqual({ hostname: 'testhost', readonly: false });
    const history = first!.history as Array<{ timeMs: number }>;
    expect(history.length).toBeGreaterThanOrEqual(1);
    expect(history.at(-1)!.timeMs).toBe(first!.live.timeMs);
    expect(first!.view.processes.map((p: { pid: number }) => p.pid).sort()).toEqual([h.trainerPid, h.hostilePid].sort());
    expect('findings' in first!.view).toBe(true);

    const later = await stream.next(3);
    for (const m of later) {
      expect(m.history).toBeUndefined();
      expect(m.server).toBeUndefined();
      expect(m.view.gpus[0].usedText).toBe('19.53 GiB');
    }
    // Unchanged, the process table is left out.
    expect(later.filter((m) => m.view.processes !== undefined).length).toBe(0);

    writeScenario(h.scenarioPath, h.scenario(30_000, 12));
    let changed: Record<string, any> | undefined;
    for (let k = 0; k < 50 && !changed; k++) {
      const [m] = await stream.next(1);
      if (m!.view.processes !== undefined) changed = m;
    }
    expect(changed!.view.gpus[0].usedText).toBe('29.30 GiB');
    expect(changed!.view.processes.find((p: { pid: number }) => p.pid === h.trainerPid).memText).toBe('28.30 GiB');
    const [after] = await stream.next(1);
    expect(after!.view.processes).toBeUndefined();
    stream.close();
    writeScenario(h.scenarioPath, h.scenario(20_000, 87));
  });
});
