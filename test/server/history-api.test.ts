/** Runs from the history over the API and on /metrics, with the same documents as `gpumem runs --json`. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVAL_PID, EVAL_STEPS, OOM_TEXT, RUN_UUID, TRAIN_PID, TRAIN_STEPS } from './history-fixture.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ dbPath: 'fixture' });
});
afterAll(() => h.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (path: string): Promise<any> => JSON.parse(await (await fetch(`${h.base}${path}`)).text());

describe('history over the API', () => {
  it('lists runs newest first and shows one with its stored report', async () => {
    const list = await get('/api/v1/runs');
    expect(list.schemaVersion).toBe(1);
    expect(list.runs.map((r: { argv: string[]; status: string }) => [r.argv.join(' '), r.status])).toEqual([['python eval.py', 'running'], ['python train.py --bs 64', 'failed']]);
    const id = list.runs[1].id;
    const one = await get(`/api/v1/runs/${id}`);
    expect(one.run.peakBytes).toBe(10 * 1024 ** 3);
    expect(one.report.attempts[0].ooms[0].text).toBe(OOM_TEXT);
    const samples = await get(`/api/v1/runs/${id}/samples`);
    expect(samples.attempts).toHaveLength(1);
    expect(samples.attempts[0].timeline).toHaveLength(20);
    expect(samples.attempts[0].timeline[19]).toEqual({ tMs: 1900, bytes: { [RUN_UUID]: 10 * 1024 ** 3 } });
  });

  it("carries a run's step timing: the training loop's figures on the run, every process's in the report and on the page's view", async () => {
    const list = await get('/api/v1/runs');
    const [running, finished] = list.runs;
    // The busiest process of the last attempt is the training loop, not the 3-step evaluation.
    expect([finished.meanStepMs, finished.dataWaitShare, finished.samplesPerSec]).toEqual([45, 0.4, 1422.2]);
    expect([running.meanStepMs, running.dataWaitShare, running.samplesPerSec]).toEqual([null, null, null]);
    const one = await get(`/api/v1/runs/${finished.id}`);
    expect([one.run.meanStepMs, one.run.dataWaitShare, one.run.samplesPerSec]).toEqual([45, 0.4, 1422.2]);
    expect(one.report.attempts[0].plugins.companion.processes).toEqual([{ pid: EVAL_PID, steps: EVAL_STEPS }, { pid: TRAIN_PID, steps: TRAIN_STEPS }]);
    const page = await get(`/api/v1/page/runs/${finished.id}/steps`);
    expect(page.kind).toBe('gpumem.page-steps');
    expect(page.steps).toEqual([
      { attempt: 1, pid: EVAL_PID, steps: 3, meanStepMs: 12.5, dataWaitShare: null, samplesPerSec: 5120, tokensPerSec: 81920, text: '3 steps of 12.5 ms, 5120.0 samples/s, 81920 tokens/s, batch 64' },
      { attempt: 1, pid: TRAIN_PID, steps: 200, meanStepMs: 45, dataWaitShare: 0.4, samplesPerSec: 1422.2, tokensPerSec: null, text: '200 steps of 45.0 ms, 40% waiting for data, 1422.2 samples/s, batch 64 (asked 64)' },
    ]);
    expect((await get(`/api/v1/page/runs/${running.id}/steps`)).steps).toEqual([]);
    const cmp = await get(`/api/v1/page/compare?a=${finished.id}&b=${running.id}`);
    const rows = cmp.rows.filter((r: string[]) => /step time|data-wait|samples\/s/.test(r[0]!));
    expect(rows).toEqual([
      ['step time (training loop, last attempt)', '45.0 ms', '–'],
      ['data-wait share of step time', '40%', '–'],
      ['samples/s', '1422.2', '–'],
    ]);
  });

  it('counts runs by state and OOM events on /metrics', async () => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    expect(text).toContain('gpumem_runs{state="running"} 1\n');
    expect(text).toContain('gpumem_runs{state="failed"} 1\n');
    expect(text).toContain('gpumem_history_oom_events_total 1\n');
  });

  it('a bad run id or limit is a clear error, not a crash', async () => {
    expect((await fetch(`${h.base}/api/v1/runs/99999`)).status).toBe(404);
    expect((await fetch(`${h.base}/api/v1/runs?limit=abc`)).status).toBe(400);
    expect((await fetch(`${h.base}/api/v1/runs/1x`)).status).toBe(404);
  });
});
