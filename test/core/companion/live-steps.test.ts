/**
 * Step timing in the live companion document: a process's summary is published (also for a process with
 * no CUDA statistics yet), read back exactly, absent in documents of older writers, and a malformed one makes
 * the document unreadable rather than believed.
 */
import { describe, expect, it } from 'vitest';
import { applyCompanionMessage, buildLiveCompanionDoc, createCompanionState, parseLiveCompanionDoc, summariseSteps } from '../../../src/core/companion/index.js';
import type { StepsMessage } from '../../../src/core/companion/index.js';

const steps: StepsMessage = {
  schemaVersion: 1, type: 'steps', pid: 42, timeMs: 5, steps: 20, dataWaitMs: 600, stepMs: 800, samples: 21 * 96,
  batchSeen: 96, batchMin: 96, batchMax: 96, batchAsked: 128, loader: { numWorkers: 2, pinMemory: false, persistentWorkers: false, prefetchFactor: 2 }, cpuCount: 16,
};

describe('live companion document: step timing', () => {
  it('publishes the summary of a process without CUDA statistics, and reads it back exactly', () => {
    const state = createCompanionState();
    applyCompanionMessage(state, steps);
    const doc = buildLiveCompanionDoc(state, { pid: 1, startTicks: 7 }, 9, () => 11);
    expect(doc.processes).toEqual([{ pid: 42, startTicks: 11, devices: [], steps: summariseSteps(steps) }]);
    expect(parseLiveCompanionDoc(JSON.stringify(doc), 'f').processes[0]?.steps?.dataWaitShare).toBe(0.75);
  });

  it('a process with neither statistics nor steps is left out; an older writer\'s document without steps is read', () => {
    const state = createCompanionState();
    applyCompanionMessage(state, { schemaVersion: 1, type: 'error', pid: 42, timeMs: 1, what: 'statistics', message: 'x' });
    expect(buildLiveCompanionDoc(state, { pid: 1, startTicks: 7 }, 9, () => 11).processes).toEqual([]);
    const older = { format: 'gpumem-companion-live', schemaVersion: 1, supervisorPid: 1, supervisorStartTicks: 7, updatedAtMs: 9, processes: [{ pid: 42, startTicks: 11, devices: [] }] };
    expect(parseLiveCompanionDoc(JSON.stringify(older), 'f').processes[0]?.steps).toBeUndefined();
  });

  it('refuses a document whose steps are malformed', () => {
    const state = createCompanionState();
    applyCompanionMessage(state, steps);
    const doc = buildLiveCompanionDoc(state, { pid: 1, startTicks: 7 }, 9, () => 11);
    for (const bad of [{ steps: -1 }, { dataWaitShare: 'most' }, { loader: { numWorkers: 'two' } }, { copies: { bytesPerStep: null } }]) {
      const broken = { ...doc, processes: [{ ...doc.processes[0], steps: { ...doc.processes[0]?.steps, ...bad } }] };
      expect(() => parseLiveCompanionDoc(JSON.stringify(broken), 'f'), JSON.stringify(bad)).toThrow(/processes\[0\] is malformed/);
    }
  });
});
