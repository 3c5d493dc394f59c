/**
 * The server's diagnosis is redone every `diagnosisMs` when the GPUs' readings changed, and reused up to
 * `diagnosisUnchangedMs` while they did not (a diagnosis of 512 processes costs tens of ms).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerState } from '../../src/server/index.js';
import { writeScenario } from '../fake-nvml/scenario.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ intervalMs: 50 });
});
afterAll(() => h.close());

/** Resolves once the sampler has taken `count` more samples. */
function samples(count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const off = h.sampler.subscribe(() => {
      if (++seen >= count) {
        off();
        resolve();
      }
    });
  });
}

describe('the server diagnosis', () => {
  it('is reused while nothing changed, redone when a reading changes, and redone after the longer wait regardless', async () => {
    let nowMs = 1_000_000;
    const state = new ServerState({
      sampler: h.sampler, env: { XDG_RUNTIME_DIR: h.runtimeDir }, dbPath: null, hostname: 'testhost',
      diagnosisMs: 1000, diagnosisUnchangedMs: 5000, now: () => nowMs,
    });
    try {
      await samples(2);
      const first = state.diagnosis();
      expect(first).toBeDefined();
      await samples(3);
      nowMs += 1500;
      expect(state.diagnosis()).toBe(first);

      writeScenario(h.scenarioPath, h.scenario(30_000, 12));
      await samples(3);
      const changed = state.diagnosis();
      expect(changed).not.toBe(first);
      // Within diagnosisMs a change does not force a new one.
      writeScenario(h.scenarioPath, h.scenario(20_000, 87));
      await samples(3);
      expect(state.diagnosis()).toBe(changed);

      nowMs += 1500;
      const back = state.diagnosis();
      expect(back).not.toBe(changed);
      await samples(3);
      nowMs += 3000;
      expect(state.diagnosis()).toBe(back);
      nowMs += 2500;
      expect(state.diagnosis()).not.toBe(back);
    } finally {
      state.close();
    }
  });
});
